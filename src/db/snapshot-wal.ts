/**
 * The WAL segments a checkpointed data directory needs: crash recovery starts at the checkpoint's
 * redo point and reads on until the WAL ends (PostgreSQL, "WAL Configuration": segments before the
 * redo point's are not needed). A segment after the checkpoint's is one PostgreSQL made ahead or
 * recycled for later writes and holds nothing recovery reads; a missing one ends the WAL there, as
 * an unwritten one does. The demo's snapshot is loaded into every worker's memory at every open,
 * so each 16 MB segment left in it is read and held for nothing.
 */

const BLOCK = 512;
/** A WAL segment file: timeline, log and segment number, 8 hex digits each. */
const SEGMENT = /(?:^|\/)pg_wal\/([0-9A-F]{24})$/;

/** The name of a ustar entry (prefix and name fields). */
function entryName(tar: Uint8Array, at: number): string {
  const field = (from: number, len: number) => {
    let end = from;
    while (end < from + len && tar[end] !== 0) end++;
    return Buffer.from(tar.subarray(from, end)).toString('latin1');
  };
  const prefix = field(at + 257, 6) === 'ustar' ? field(at + 345, 155) : '';
  return (prefix ? `${prefix}/` : '') + field(at, 100);
}

/**
 * `tar` (a data directory as PGlite's `dumpDataDir` writes it: ustar, no compression) without the
 * WAL segments outside `[first, last]` (segment file names, e.g. from `pg_walfile_name` of the
 * checkpoint's redo and checkpoint locations). Every other entry is copied as it is.
 */
export function keepWalSegments(tar: Uint8Array, first: string, last: string): Uint8Array {
  const kept: Uint8Array[] = [];
  let at = 0;
  while (at + BLOCK <= tar.length && tar[at] !== 0) {
    const size = parseInt(
      Buffer.from(tar.subarray(at + 124, at + 136))
        .toString('latin1')
        .replace(/\0.*$/s, '')
        .trim() || '0',
      8,
    );
    if (!Number.isFinite(size)) throw new Error(`snapshot: entry at byte ${at} has no readable size`);
    const end = at + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (end > tar.length) throw new Error(`snapshot: entry at byte ${at} runs past the end of the archive`);
    const segment = SEGMENT.exec(entryName(tar, at))?.[1];
    if (!segment || (segment >= first && segment <= last)) kept.push(tar.subarray(at, end));
    at = end;
  }
  // The end-of-archive marker: two zero blocks.
  kept.push(new Uint8Array(2 * BLOCK));
  return Buffer.concat(kept);
}
