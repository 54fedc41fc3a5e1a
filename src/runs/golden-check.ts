import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { DiscourseProfile } from '../corpus/discourse.js';

/**
 * Checks every golden id against the database: an expected topic or post that is missing or not
 * public is a warning (`file:line: case id: …`), listed in the results, not an error.
 */
export async function goldenWarnings(profile: DiscourseProfile, cases: readonly Located<Case>[]): Promise<string[]> {
  const topics = [...new Set(cases.flatMap((c) => c.value.expected_topic_ids))];
  const posts = [...new Set(cases.flatMap((c) => c.value.expected_post_ids))];
  const [okTopics, okPosts] = await Promise.all([profile.publicTopicIds(topics), profile.publicPostIds(posts)]);
  const out: string[] = [];
  for (const c of cases) {
    for (const t of c.value.expected_topic_ids)
      if (!okTopics.has(t))
        out.push(
          `${c.file}:${c.line}: case '${c.value.id}': expected topic ${t} is not a public topic in the database`,
        );
    for (const p of c.value.expected_post_ids)
      if (!okPosts.has(p))
        out.push(`${c.file}:${c.line}: case '${c.value.id}': expected post ${p} is not a public post in the database`);
  }
  return out;
}
