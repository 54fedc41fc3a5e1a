/** Turns texts into vectors for the semantic channels. */
export interface Embedder {
  /** `openai:MODEL@URL` or `offline:hash-D`. */
  readonly id: string;
  /** True for the offline hash embedder, which is not a semantic model. */
  readonly offline: boolean;
  readonly dimensions: number;
  embed(texts: string[]): Promise<number[][]>;
}
