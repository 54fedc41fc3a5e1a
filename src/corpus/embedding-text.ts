/**
 * The text embedded for a post or a topic, per discourse-ai embedding strategy. One definition,
 * used by the fixture loader (demo and test databases) and by `ragaudit embed` (a real forum).
 */
export const STRATEGIES = {
  /** Native: title, category, tags, then the post text. */
  native: 1,
  /** Enriched: native plus 500 characters of the topic's first post and 400 of the parent post. */
  enriched: 2,
} as const;

export const KNOWN_STRATEGIES: readonly number[] = Object.values(STRATEGIES);

export interface PostTextParts {
  title: string;
  category: string;
  tags: readonly string[];
  raw: string;
  post_number: number;
  /** The topic's first post (enriched strategy), when the post is not the first itself. */
  first_raw?: string | null;
  /** The post this one replies to (enriched strategy). */
  parent_raw?: string | null;
}

function header(p: Pick<PostTextParts, 'title' | 'category' | 'tags'>): string {
  return [p.title, p.category, p.tags.join(' ')].filter(Boolean).join('\n');
}

/** A post's text under a strategy (1 native, 2 enriched). */
export function postEmbeddingText(p: PostTextParts, strategy: number): string {
  const native = `${header(p)}\n${p.raw}`;
  if (strategy === STRATEGIES.native) return native;
  const extra = [
    p.post_number !== 1 && p.first_raw ? p.first_raw.slice(0, 500) : '',
    p.parent_raw ? p.parent_raw.slice(0, 400) : '',
  ].filter(Boolean);
  return [native, ...extra].join('\n');
}

/** A topic's text: its header and first post (the same under every strategy). */
export function topicEmbeddingText(p: Pick<PostTextParts, 'title' | 'category' | 'tags' | 'raw'>): string {
  return `${header(p)}\n${p.raw}`;
}
