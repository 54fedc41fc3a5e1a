/**
 * How a channel's share of a batch is split into statements on PostgreSQL (the lateral shape:
 * each question's own query inside one statement, so a statement costs the sum of its
 * questions'). A batch of 250 questions is one cheap statement on a small forum, but on a large
 * one a keyword question costs ~0.1–1 s (200,000 posts: 141 ms median, 826 ms at p90) and an
 * exact semantic one ~0.5 s: the batch's one statement outran the statement timeout (10 s by
 * default), failed, and its questions took the per-query path after that wasted wait. Each
 * channel's questions now go in chunks sized from what its statements took so far, so that one
 * stays near {@link BUDGET_SHARE} of the timeout; the first chunk of a channel is two questions
 * (on a loaded server a keyword question alone took over 1 s: eight outran the timeout).
 * The lists are the same: a chunk's statement is the batch statement over fewer questions.
 * A chunk of several questions that still outruns the timeout (a keyword question's cost has a
 * long tail) is asked again one question a statement, so one slow question does not send the
 * whole batch to the per-query path.
 */

/** The share of the statement timeout a chunk's statement is sized to take. */
export const BUDGET_SHARE = 0.2;

/** Questions in a channel's first chunk, before anything was measured. */
export const FIRST_CHUNK = 2;

/** The sizes and measurements of one channel's chunks over a run (one per channel and graph). */
export class StatementChunks {
  /** The slowest recent cost of one question, ms (undefined: nothing measured yet). */
  private perQuestionMs: number | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number = () => performance.now(),
    /** Whether a statement's failure is the statement timeout (then its questions are asked one by one). */
    private readonly timedOut: (e: unknown) => boolean = () => false,
  ) {}

  /** How many of `left` questions the next statement takes. */
  size(left: number): number {
    if (this.perQuestionMs === undefined) return Math.min(left, FIRST_CHUNK);
    const fit = Math.floor((BUDGET_SHARE * this.timeoutMs) / Math.max(this.perQuestionMs, 1e-3));
    return Math.max(1, Math.min(left, fit));
  }

  /**
   * Records a statement of `questions` that took `ms`. A slower chunk than the estimate counts at
   * once (the next is made smaller right away), a faster one by halves, so one quick chunk does
   * not make the next one outrun the timeout.
   */
  observe(questions: number, ms: number): void {
    const per = ms / Math.max(1, questions);
    this.perQuestionMs =
      this.perQuestionMs === undefined || per > this.perQuestionMs ? per : (this.perQuestionMs + per) / 2;
  }

  /**
   * The lists of `items`, in order, from statements over consecutive chunks of them, one after
   * the other (the batches prepared ahead and the other channels keep the pool's other
   * connections busy); fails as a whole when a statement fails.
   */
  async run<I, T>(items: readonly I[], statement: (chunk: readonly I[]) => Promise<T[]>): Promise<T[]> {
    const out: T[] = [];
    for (let from = 0; from < items.length;) {
      const n = this.size(items.length - from);
      const chunk = items.slice(from, from + n);
      const t0 = this.now();
      let got: T[];
      try {
        got = await statement(chunk);
        this.observe(n, this.now() - t0);
      } catch (e) {
        if (n === 1 || !this.timedOut(e)) throw e;
        // At least the timeout over n questions: the next chunks are sized from that.
        this.observe(n, Math.max(this.timeoutMs, this.now() - t0));
        got = [];
        for (const one of chunk) got.push(...(await statement([one])));
      }
      if (got.length !== n) throw new Error(`internal: a chunk of ${n} questions gave ${got.length} lists`);
      out.push(...got);
      from += n;
    }
    return out;
  }
}
