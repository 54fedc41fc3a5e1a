/** Turns texts into vectors for the semantic channels. */
export interface Embedder {
  /** `openai:MODEL@URL` or `offline:hash-D`. */
  readonly id: string;
  /** True for the offline hash embedder, which is not a semantic model. */
  readonly offline: boolean;
  readonly dimensions: number;
  embed(texts: string[]): Promise<number[][]>;
  /**
   * One cheap request before the first case, so a closed port, a wrong key or an unknown model
   * ends the run within seconds (ConfigError/ProviderError) instead of failing every case.
   * Offline stand-ins have nothing to check.
   */
  preflight?(): Promise<void>;
}
