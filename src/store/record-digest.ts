import { createHash } from 'node:crypto';

/**
 * The digest a shard's results carry of each record (`shard.record_digests`), so that `merge` can
 * tell a record changed since its shard wrote it (an answer edited, a case renamed) from the one
 * written. Recomputable from the file alone (docs/scale.md#what-merge-checks): the first 16 hex
 * digits of SHA-256 over the UTF-8 bytes of the record's compact JSON, which is its line in a
 * `.cases.jsonl` file (without the newline), and `JSON.stringify` of the record as parsed from a
 * results JSON that holds its cases (the same text: the writer serialises each record once).
 */
export function recordDigest(json: string): string {
  return createHash('sha256').update(json, 'utf8').digest('hex').slice(0, 16);
}
