import { FROM_POSTS, PUBLIC_POST } from '../corpus/discourse-sql.js';
import { connectPostgres } from '../db/sql-client.js';
import type { PoolQuestion } from './pooling.js';

/**
 * Candidates' texts read from the forum's database (`pool --db`, else DATABASE_URL) when neither a
 * run's sources nor a forum directory had them: without it a person labels a thread title alone.
 * One read-only statement with the ids bound as a parameter; only posts that are still public are
 * read (a post hidden since the run stays without text, as it would for a member).
 */
export async function fillFromDatabase(
  questions: PoolQuestion[],
  url: string,
  clip: (text: string) => string,
): Promise<number> {
  const open = questions.flatMap((q) => q.candidates).filter((c) => !c.text);
  if (!open.length) return 0;
  const db = await connectPostgres(url);
  let rows: { id: number; title: string; raw: string }[];
  try {
    rows = await db.query<{ id: number; title: string; raw: string }>(
      `SELECT p.id, t.title, p.raw FROM ${FROM_POSTS} WHERE p.id = ANY ($1::int[]) AND ${PUBLIC_POST}`,
      [[...new Set(open.map((c) => c.post_id))]],
    );
  } finally {
    await db.close();
  }
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  let filled = 0;
  for (const c of open) {
    const r = byId.get(c.post_id);
    if (!r || !r.raw.trim()) continue;
    c.title ??= r.title;
    c.text = clip(r.raw.trim());
    filled++;
  }
  return filled;
}
