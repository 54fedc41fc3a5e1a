/**
 * When a run stops early instead of failing case after case: a service that does not answer
 * (N cases in a row failed at the connection level: refused, reset, DNS, TLS, timed out) or a
 * fault every later request would meet too (RUN_WIDE_FAULTS: a refused key, an exhausted quota,
 * an unknown model). The run stops taking cases and says why once; what it finished is kept.
 */
import { ProviderError, RagauditError, RUN_WIDE_FAULTS } from '../errors.js';

export class CircuitBreaker {
  private consecutive = 0;
  private why: string | undefined;

  /** `limit`: consecutive connection failures that stop the run (config circuit_breaker). */
  constructor(private readonly limit: number) {}

  /** Why the run must stop, once tripped. */
  get reason(): string | undefined {
    return this.why;
  }

  get tripped(): boolean {
    return this.why !== undefined;
  }

  /**
   * Takes the outcome of one finished case (the error that ended it, or undefined); returns true
   * when that error is one the run stops on (the case is then not a result: it is retried on resume).
   */
  observe(error: unknown): boolean {
    const fault = error instanceof ProviderError ? error.details.fault : undefined;
    if (fault && RUN_WIDE_FAULTS.has(fault)) {
      this.why ??= `${error instanceof Error ? error.message : String(error)} (every later request would fail the same way)`;
      return true;
    }
    if (fault !== 'connection') {
      this.consecutive = 0;
      return false;
    }
    this.consecutive++;
    if (this.consecutive >= this.limit)
      this.why ??= `${this.consecutive} cases in a row could not reach a service (circuit_breaker: ${this.limit}); the last: ${(error as Error).message}`;
    return this.tripped;
  }
}

/** A run stopped by its circuit breaker or a run-wide fault (exit 1); the message says how to resume. */
export class RunStoppedError extends RagauditError {}
