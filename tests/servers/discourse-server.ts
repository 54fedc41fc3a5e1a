/**
 * A fake of the Discourse endpoints a forum-hosted bot target uses (src/target/discourse-target.ts):
 * `POST /posts.json` (a new private message, or a reply in one), `GET /t/ID.json`,
 * `DELETE /t/ID.json` and `GET /u/NAME.json`, all behind `Api-Key` / `Api-Username`. The bot user
 * replies to each question from a script (its reply shows from the second read of the topic on, so
 * the client must poll); a question the script marks `silent` never gets a reply. Topics are
 * numbered from 5001 in order of creation, so a test can queue faults on `GET /t/5003.json`.
 */
import { ProviderServer, reply, replyText, status, type Behaviour } from './provider-server.js';

export const CREATE = 'POST /posts.json';
export const topicRoute = (method: 'GET' | 'DELETE', id: number) => `${method} /t/${id}.json`;

/** What the bot replies to a question: its cooked HTML, or nothing at all. */
export type BotReply = { cooked: string } | 'silent';

interface Post {
  id: number;
  post_number: number;
  username: string;
  cooked: string;
  raw: string;
}

export interface FakeForum {
  server: ProviderServer;
  /** Every private message created, by topic id: its title, recipients and whether it was deleted. */
  topics: Map<number, Topic>;
}

interface Topic {
  title: string;
  recipients: string;
  deleted: boolean;
  posts: Post[];
  /** The bot's reply to the last question, shown once the topic was read once without it. */
  pending?: { answer: Post; reads: number };
}

export function discourseForum(opts: {
  key: string;
  user: string;
  bot: string;
  script: Record<string, BotReply>;
  /** Faults queued on a topic's routes when it is created (topic id → behaviours). */
  faults?: Record<number, { read?: Behaviour[]; delete?: Behaviour[] }>;
}): FakeForum {
  const server = new ProviderServer();
  const topics: FakeForum['topics'] = new Map();
  let nextTopic = 5001;
  let nextPost = 70001;
  const authorised = (h: Record<string, string>) => h['api-key'] === opts.key && h['api-username'] === opts.user;
  const denied = status(403, { errors: ['You are not permitted to view the requested resource.'] });

  /** Adds the user's post and, for a planned question, the bot's reply (visible from the second read). */
  const post = (topicId: number, raw: string) => {
    const t = topics.get(topicId)!;
    const mine: Post = {
      id: nextPost++,
      post_number: t.posts.length + 1,
      username: opts.user,
      cooked: `<p>${raw}</p>`,
      raw,
    };
    t.posts.push(mine);
    const line = opts.script[raw];
    if (line && line !== 'silent') {
      const answer: Post = {
        id: nextPost++,
        post_number: mine.post_number + 1,
        username: opts.bot,
        cooked: line.cooked,
        raw: '',
      };
      t.pending = { answer, reads: 0 };
    }
    return mine;
  };

  server.on(CREATE, (req) => {
    if (!authorised(req.headers)) return denied;
    const b = req.body as Record<string, unknown>;
    if (typeof b.topic_id === 'number') {
      if (!topics.has(b.topic_id)) return status(404, { errors: ['not found'] });
      const p = post(b.topic_id, String(b.raw));
      return reply({ id: p.id, topic_id: b.topic_id, post_number: p.post_number });
    }
    if (b.archetype !== 'private_message' || typeof b.target_recipients !== 'string')
      return status(422, { errors: ['not a private message'] });
    if (typeof b.title !== 'string' || b.title.length < 15)
      return status(422, { errors: ['Title must be at least 15 characters'] });
    const id = nextTopic++;
    topics.set(id, { title: b.title, recipients: b.target_recipients, deleted: false, posts: [] });
    const f = opts.faults?.[id];
    if (f?.read) server.enqueue(topicRoute('GET', id), ...f.read);
    if (f?.delete) server.enqueue(topicRoute('DELETE', id), ...f.delete);
    server.on(topicRoute('GET', id), (r) => {
      if (!authorised(r.headers)) return denied;
      const t = topics.get(id)!;
      if (t.deleted) return status(404, { errors: ['not found'] });
      if (t.pending && ++t.pending.reads > 1) {
        t.posts.push(t.pending.answer);
        delete t.pending;
      }
      return reply({ id, title: t.title, archetype: 'private_message', post_stream: { posts: t.posts } });
    });
    server.on(topicRoute('DELETE', id), (r) => {
      if (!authorised(r.headers)) return denied;
      topics.get(id)!.deleted = true;
      // Discourse answers a deletion with an empty body.
      return replyText('', { contentType: 'application/json' });
    });
    const p = post(id, String(b.raw));
    return reply({ id: p.id, topic_id: id, post_number: p.post_number, topic_slug: 'ragaudit' });
  });

  server.on(`GET /u/${opts.bot}.json`, (req) =>
    authorised(req.headers) ? reply({ user: { username: opts.bot } }) : denied,
  );
  return { server, topics };
}
