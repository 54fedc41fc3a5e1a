/**
 * A cross-encoder. Scores are on the logit scale (raw cross-encoder output) because
 * zone thresholds are logits; a client that only gets probabilities converts with logit(p).
 */
export interface Reranker {
  /** `kind:model-or-url`, e.g. `tei:http://localhost:8080` or `offline:lexical`. */
  readonly id: string;
  /** True for the offline lexical stand-in, which is not a cross-encoder. */
  readonly offline: boolean;
  /** One score per passage, in the passages' order. */
  score(query: string, passages: string[]): Promise<number[]>;
  /**
   * One cheap request before the first case, so a closed port, a wrong key or an unknown model
   * ends the run within seconds (ConfigError/ProviderError) instead of failing every case.
   * Offline stand-ins have nothing to check.
   */
  preflight?(): Promise<void>;
}

/** logit(p) = ln(p / (1 − p)), with p clamped away from 0 and 1 so the result is finite. */
export function logit(p: number): number {
  const eps = 1e-7;
  const q = Math.min(1 - eps, Math.max(eps, p));
  return Math.log(q / (1 - q));
}
