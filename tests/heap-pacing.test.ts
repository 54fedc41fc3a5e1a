/**
 * Paced full collections while records are read back (src/io/heap.ts): one per EVERY_BYTES read
 * through a LineReader, none unless the process allowed them (the executable does).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { allowCollections, EVERY_BYTES, noteBytesRead } from '../src/io/heap.js';
import { LineReader } from '../src/io/jsonl.js';
import { removeWorkDirs, workDir } from './fixtures/audit/harness.js';

afterAll(() => removeWorkDirs());

it('collects once per EVERY_BYTES read back, counting the lines a LineReader reads, only once allowed', () => {
  // Not allowed yet: nothing is counted, so nothing is owed once allowed.
  noteBytesRead(3 * EVERY_BYTES);
  let collections = 0;
  allowCollections(() => collections++);
  noteBytesRead(EVERY_BYTES - 1);
  expect(collections).toBe(0);
  noteBytesRead(1);
  expect(collections).toBe(1);
  noteBytesRead(EVERY_BYTES / 2);
  noteBytesRead(EVERY_BYTES / 2);
  expect(collections).toBe(2);

  // A line read back counts its bytes: with them, EVERY_BYTES minus the line's length makes one more.
  const file = join(workDir('heap'), 'records.jsonl');
  const line = JSON.stringify({ case: { id: 'a', question: 'How do I revive faded suede?' } });
  writeFileSync(file, `${line}\n`);
  const reader = new LineReader(file);
  try {
    expect(reader.read(0, Buffer.byteLength(line))).toBe(line);
  } finally {
    reader.close();
  }
  noteBytesRead(EVERY_BYTES - Buffer.byteLength(line) - 1);
  expect(collections).toBe(2);
  noteBytesRead(1);
  expect(collections).toBe(3);
});
