import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepWalSegments } from '../src/db/snapshot-wal.js';
import { demoSnapshotPath } from '../src/demo/demo-snapshot.js';
import { PACKAGE_ROOT } from '../src/paths.js';

/** A ustar entry (a regular file, or a directory when `data` is undefined) as tar(1) writes it. */
function entry(name: string, data?: Uint8Array): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 'latin1');
  header.write('0000600\0', 100, 'latin1');
  header.write(`${(data?.length ?? 0).toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  header.write(data ? '0' : '5', 156, 'latin1');
  header.write('ustar\u000000', 257, 'latin1');
  header.write('        ', 148, 'latin1');
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  const padded = Buffer.alloc(Math.ceil((data?.length ?? 0) / 512) * 512);
  if (data) padded.set(data);
  return Buffer.concat([header, padded]);
}

/** The entry names of a ustar archive, in order, and whether it ends with the two zero blocks. */
function names(tar: Uint8Array): { names: string[]; ended: boolean } {
  const out: string[] = [];
  let at = 0;
  while (at + 512 <= tar.length && tar[at] !== 0) {
    const name = Buffer.from(tar.subarray(at, at + 100))
      .toString('latin1')
      .replace(/\0.*$/s, '');
    const size = parseInt(Buffer.from(tar.subarray(at + 124, at + 135)).toString('latin1'), 8);
    out.push(name);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  const rest = tar.subarray(at);
  return { names: out, ended: rest.length === 1024 && rest.every((b) => b === 0) };
}

const seg = (n: number) => `000000010000000000000${n.toString(16).toUpperCase().padStart(3, '0')}`;

describe('keepWalSegments', () => {
  it('keeps the segments from the redo point to the checkpoint record and every other entry, byte for byte', () => {
    const body = (s: string) => Buffer.from(s.repeat(300));
    const files: [string, Buffer | undefined][] = [
      ['/PG_VERSION', Buffer.from('17\n')],
      ['/pg_wal', undefined],
      [`/pg_wal/${seg(1)}`, body('old')],
      [`/pg_wal/${seg(2)}`, body('redo')],
      [`/pg_wal/${seg(3)}`, body('checkpoint')],
      [`/pg_wal/${seg(4)}`, body('recycled')],
      ['/pg_wal/archive_status', undefined],
      ['/pg_wal/00000002.history', Buffer.from('1\t0/3000000\n')],
      ['/base/5/16384', body('table')],
    ];
    const tar = Buffer.concat([...files.map(([n, d]) => entry(n, d)), Buffer.alloc(1024)]);
    const out = keepWalSegments(tar, seg(2), seg(3));
    expect(names(out)).toEqual({
      names: files.map(([n]) => n).filter((n) => n !== `/pg_wal/${seg(1)}` && n !== `/pg_wal/${seg(4)}`),
      ended: true,
    });
    // The kept entries are the input's bytes: the redo segment's block sits where its header says.
    const at = Buffer.from(out).indexOf(Buffer.from(`/pg_wal/${seg(2)}`));
    expect(Buffer.from(out.subarray(at + 512, at + 512 + 12)).toString()).toBe('redoredoredo');
    expect(keepWalSegments(tar, seg(1), seg(4))).toEqual(tar);
  });

  it('refuses an archive whose entry runs past its end', () => {
    const tar = entry(`/pg_wal/${seg(1)}`, Buffer.alloc(4096)).subarray(0, 1024);
    expect(() => keepWalSegments(tar, seg(1), seg(1))).toThrow(/runs past the end/);
  });

  // The suite's global setup built (or found) the demo's snapshot with the current recipe.
  it("leaves the demo's snapshot one WAL segment", () => {
    const tar = readFileSync(demoSnapshotPath({ cacheDir: join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db') }));
    expect(names(tar).names.filter((n) => /pg_wal\/[0-9A-F]{24}$/.test(n))).toHaveLength(1);
  });
});
