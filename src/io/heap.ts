/**
 * Full garbage collections paced by the bytes a process reads back from its own record files
 * (ledger, spool), where the process allows them. Reading a large run back parses every record
 * (~15 kB of JSON a case) to keep ~2 kB of it; under node's default heap limit V8 lets what
 * survives its young generation pile up to several times the live heap before a full collection
 * (a 100,000-case run peaked at 1.3 GB with ~0.5 GB live). A collection per {@link EVERY_BYTES}
 * read keeps the heap near what is live, for a few hundred milliseconds per gigabyte read.
 * Only the `ragaudit` executable turns this on (src/cli/ragaudit.ts): exposing `gc` is a
 * process-wide V8 setting, not a library's to make.
 */
let collect: (() => void) | undefined;
let since = 0;

/** Bytes read back between two collections. */
export const EVERY_BYTES = 128 * 1024 * 1024;

/** Turns pacing on with the engine's full collection (`gc`). */
export function allowCollections(gc: () => void): void {
  collect = gc;
}

/** Counts bytes read back; past {@link EVERY_BYTES} since the last one, collects. */
export function noteBytesRead(bytes: number): void {
  if (!collect) return;
  since += bytes;
  if (since < EVERY_BYTES) return;
  since = 0;
  collect();
}
