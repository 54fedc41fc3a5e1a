import { readdirSync } from 'node:fs';
import { join, basename } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { readYaml, zodProblems } from '../yaml-file.js';

/** Forum files in Discourse's shape (cases/demo/README.md). Post ids: topic_id * 1000 + post_number. */
export const CategorySchema = z
  .object({
    id: z.number().int().positive(),
    name: z.string().min(1),
    slug: z.string().min(1),
    read_restricted: z.boolean().default(false),
  })
  .strict();

export const PostSchema = z
  .object({
    n: z.number().int().positive(),
    user: z.string().min(1),
    raw: z.string().refine((s) => s.trim().length > 0, 'must not be empty'),
    reply_to: z.number().int().positive().optional(),
    hidden: z.boolean().default(false),
    deleted: z.boolean().default(false),
    post_type: z.number().int().min(1).max(4).default(1),
  })
  .strict();

export const TopicSchema = z
  .object({
    id: z.number().int().positive().max(999_999),
    title: z.string().min(1),
    category: z.string().min(1),
    tags: z.array(z.string()).default([]),
    archetype: z.enum(['regular', 'private_message']).default('regular'),
    visible: z.boolean().default(true),
    deleted: z.boolean().default(false),
    created_at: z.union([z.string(), z.date()]).optional(),
    posts: z.array(PostSchema).min(1),
  })
  .strict();

export type Category = z.infer<typeof CategorySchema>;
export type ForumPost = z.infer<typeof PostSchema> & { id: number };
export type ForumTopic = Omit<z.infer<typeof TopicSchema>, 'posts'> & { posts: ForumPost[]; slug: string };

export interface Forum {
  categories: Category[];
  topics: ForumTopic[];
}

/** The derived post id (cases/demo/README.md). */
export function postId(topicId: number, postNumber: number): number {
  return topicId * 1000 + postNumber;
}

/** URL slug of a title, as Discourse makes it (lowercase ASCII words joined by '-'). */
export function slugify(title: string): string {
  return (
    title
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'topic'
  );
}

/** Reads `categories.yml` and every other `*.yml` of a forum directory; all problems at once. */
export function readForum(dir: string): Forum {
  const problems: string[] = [];
  const catSrc = readYaml(join(dir, 'categories.yml'));
  const cats = z.array(CategorySchema).safeParse(catSrc.data);
  if (!cats.success) throw new InputError('invalid forum categories', zodProblems(catSrc, cats.error));
  const slugs = new Set(cats.data.map((c) => c.slug));
  const topics: ForumTopic[] = [];
  const seen = new Map<number, string>();
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yml') && basename(f) !== 'categories.yml')
    .sort();
  for (const name of files) {
    const file = join(dir, name);
    const src = readYaml(file);
    const parsed = z.array(TopicSchema).safeParse(src.data);
    if (!parsed.success) {
      problems.push(...zodProblems(src, parsed.error));
      continue;
    }
    parsed.data.forEach((t, i) => {
      const at = `${file}:${src.lineOf([i])}`;
      if (seen.has(t.id))
        problems.push(
          `${file}:${src.lineOf([i, 'id'])}: [${i}].id: duplicate topic id ${t.id} (first at ${seen.get(t.id)})`,
        );
      seen.set(t.id, at);
      if (!slugs.has(t.category))
        problems.push(`${file}:${src.lineOf([i, 'category'])}: [${i}].category: unknown category '${t.category}'`);
      t.posts.forEach((p, j) => {
        if (p.n !== j + 1)
          problems.push(
            `${file}:${src.lineOf([i, 'posts', j, 'n'])}: [${i}].posts[${j}].n: expected post number ${j + 1}, got ${p.n}`,
          );
        if (p.reply_to !== undefined && p.reply_to >= p.n)
          problems.push(
            `${file}:${src.lineOf([i, 'posts', j, 'reply_to'])}: [${i}].posts[${j}].reply_to: must name an earlier post`,
          );
      });
      topics.push({ ...t, slug: slugify(t.title), posts: t.posts.map((p) => ({ ...p, id: postId(t.id, p.n) })) });
    });
  }
  if (problems.length) throw new InputError(`invalid forum in ${dir}`, problems);
  return { categories: cats.data, topics: topics.sort((a, b) => a.id - b.id) };
}
