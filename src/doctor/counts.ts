import type { Query } from './checks.js';

/**
 * How many rows a table has, as `doctor` states it: counted exactly up to
 * {@link EXACT_COUNT_UP_TO} (reading at most that many rows), beyond that the planner's estimate,
 * said as one. The estimate alone (`pg_class.reltuples`) is -1 or 0 until the table is first
 * analysed, which read "0 rows" for tables that had some.
 */

/** Tables with up to this many rows are counted exactly. */
export const EXACT_COUNT_UP_TO = 100_000;

export interface RowCount {
  n: number;
  /** Counted; false: the planner's estimate. */
  exact: boolean;
}

/** `table` is a name as SQL writes it (a bare Discourse table or a checked, quoted schema name). */
export async function rowCount(query: Query, table: string): Promise<RowCount> {
  const [c] = await query<{ n: number | string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} LIMIT $1) s`, [
    EXACT_COUNT_UP_TO + 1,
  ]);
  const n = Number(c?.n ?? 0);
  if (n <= EXACT_COUNT_UP_TO) return { n, exact: true };
  const [e] = await query<{ n: number | string }>(
    'SELECT greatest(c.reltuples, 0)::bigint AS n FROM pg_class c WHERE c.oid = to_regclass($1::text)',
    [table],
  );
  // An estimate below what was just counted (a table never analysed) says at least that much.
  return { n: Math.max(Number(e?.n ?? 0), n), exact: false };
}

/** "35 rows", "1 row", or "about 2000000 rows (planner estimate)". */
export function rowsText(c: RowCount): string {
  return c.exact ? `${c.n} row${c.n === 1 ? '' : 's'}` : `about ${c.n} rows (planner estimate)`;
}
