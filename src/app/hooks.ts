/**
 * What a handler tells its caller while it works: progress over cases and events (a component
 * announced, a ledger opened, a warning). The handler never prints; the CLI renders the events
 * on the console, a library caller may ignore them.
 */

/** Progress of one stage over its cases. */
export interface Progress {
  update: (done: number, total: number) => void;
  stop: () => void;
}

export type AppEvent =
  /** A line from opening the run context (e.g. loading the demo forum). */
  | { kind: 'status'; text: string }
  | { kind: 'warning'; text: string }
  /** A component of the run (generator, reranker, judge…) with its label, offline stand-ins named. */
  | { kind: 'component'; role: string; label: string }
  /** The ledger of a run is open: from here on an interrupted run can be resumed from it. */
  | { kind: 'ledger'; command: 'run' | 'probe'; file: string }
  /** The results of the run are written: nothing is left to resume. */
  | { kind: 'results-written'; file: string }
  /** `matrix`: config `index` (from 1) of `total` starts. */
  | { kind: 'config'; index: number; total: number; label: string; source: string }
  /** `calibrate` ran retrieval itself and wrote its results (and the HTML report beside them). */
  | { kind: 'retrieval-written'; file: string; report?: string }
  /** `judge`: the judge that re-judges a stored run. */
  | { kind: 'judge'; label: string };

export interface AppHooks {
  event: (e: AppEvent) => void;
  progress: (label: string) => Progress;
}

/** Hooks that drop every event and draw no progress. */
export const SILENT_HOOKS: AppHooks = {
  event: () => undefined,
  progress: () => ({ update: () => undefined, stop: () => undefined }),
};

/** Where a handler resolves relative paths and reads its environment (keys, DATABASE_URL). */
export interface AppEnv {
  cwd: string;
  env: NodeJS.ProcessEnv;
}
