/**
 * The demo conversation cases (cases/conversations/demo.yml), checked against the demo forum:
 * their shape (earlier turns, 2–4 user messages), goldens that exist and are public for the final
 * question and for every user turn that carries its own, content terms found in the golden
 * passages, off-topic turns inside on-topic conversations, and final questions that really need
 * their history (they do not name their golden thread's title words on their own).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { isConversation, type Case } from '../src/cases/schema.js';
import { isPublicPost, isPublicTopic, posts, termsNotInGoldens, topics } from './helpers/demo-forum.js';
import { ENGLISH } from '../src/model/languages/en.js';
import { tokenize } from '../src/text.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const cases = loadCases([join(PACKAGE_ROOT, 'cases', 'conversations', 'demo.yml')]).map((l) => l.value);

/** One user message of a case with its goldens: each earlier user turn, then the final question. */
interface UserMessage {
  where: string;
  content: string;
  topicIds: number[];
  postIds: number[];
}
function userMessages(c: Case): UserMessage[] {
  const earlier = (c.turns ?? []).flatMap((t, i) =>
    t.role === 'user'
      ? [
          {
            where: `${c.id} turn ${i + 1}`,
            content: t.content,
            topicIds: t.expected_topic_ids ?? [],
            postIds: t.expected_post_ids ?? [],
          },
        ]
      : [],
  );
  const final = {
    where: `${c.id} final`,
    content: c.question,
    topicIds: c.expected_topic_ids,
    postIds: c.expected_post_ids,
  };
  return [...earlier, final];
}
const hasGoldens = (m: UserMessage) => m.topicIds.length + m.postIds.length > 0;

/** Content words as the project counts them (English stop words, no single letters), plurals folded. */
function contentWords(text: string): Set<string> {
  return new Set(
    tokenize(text)
      .filter((w) => w.length > 1 && !ENGLISH.stopwords.has(w))
      .map((w) => (w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w)),
  );
}
const shared = (a: Set<string>, b: Set<string>) => [...a].filter((w) => b.has(w));

describe('the demo conversations', () => {
  it('are at least 15 conversations, each of 2 to 4 user messages, with conversation ids and tags', () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
    for (const c of cases) {
      expect(isConversation(c), c.id).toBe(true);
      expect(c.id, c.id).toMatch(/^conv-/);
      expect(c.tags, c.id).toContain('conversation');
      const users = userMessages(c).length;
      expect(users, `${c.id}: user messages`).toBeGreaterThanOrEqual(2);
      expect(users, `${c.id}: user messages`).toBeLessThanOrEqual(4);
    }
  });

  it('every golden, final or per turn, is a public topic or a public post of one of that message’s golden topics', () => {
    for (const m of cases.flatMap(userMessages)) {
      for (const id of m.topicIds) {
        const t = topics.get(id);
        expect(t && isPublicTopic(t), `${m.where}: topic ${id}`).toBe(true);
      }
      for (const id of m.postIds) {
        const hit = posts.get(id);
        expect(hit && isPublicTopic(hit.t) && isPublicPost(hit.p), `${m.where}: post ${id}`).toBe(true);
        expect(m.topicIds, `${m.where}: post ${id} is outside the golden topics`).toContain(hit!.t.id);
      }
    }
  });

  it('every content term occurs in a golden passage (the golden posts, else the golden topics)', () => {
    for (const c of cases) expect(termsNotInGoldens(c), c.id).toEqual([]);
  });

  it('in-domain finals have goldens, off-topic finals none; forbidden posts exist', () => {
    for (const c of cases) {
      const goldens = [...c.expected_topic_ids, ...c.expected_post_ids];
      if (c.kind === 'off_topic') expect(goldens, c.id).toEqual([]);
      else expect(goldens.length, c.id).toBeGreaterThan(0);
      for (const id of c.forbidden_post_ids ?? []) expect(posts.has(id), `${c.id}: forbidden ${id}`).toBe(true);
    }
  });

  it('at least 2 off-topic turns sit inside on-topic conversations', () => {
    // In a case tagged off-topic-turn, exactly one user message is off-topic (an earlier turn
    // without goldens, or an off-topic final question) and every other one carries goldens.
    const offTopic = (c: Case, m: UserMessage) => (m.where.endsWith('final') ? c.kind === 'off_topic' : !hasGoldens(m));
    const tagged = cases.filter((c) => c.tags.includes('off-topic-turn'));
    for (const c of tagged) {
      const msgs = userMessages(c);
      const off = msgs.filter((m) => offTopic(c, m));
      expect(
        off.map((m) => m.where),
        `${c.id}: one off-topic user message`,
      ).toHaveLength(1);
      for (const m of msgs.filter((x) => !off.includes(x))) expect(hasGoldens(m), `${m.where}: on-topic`).toBe(true);
    }
    expect(tagged.length).toBeGreaterThanOrEqual(2);
    // Both shapes: an off-topic final question, and an off-topic middle turn followed by a return.
    expect(tagged.some((c) => c.kind === 'off_topic')).toBe(true);
    expect(tagged.some((c) => c.kind === 'in_domain')).toBe(true);
    // Outside those, an off-topic final question has no on-topic history to sit inside.
    for (const c of cases.filter((x) => x.kind === 'off_topic')) expect(c.tags, c.id).toContain('off-topic-turn');
  });

  it('a final question that needs its history shares at most one content word with its golden topics’ titles', () => {
    const needing = cases.filter((c) => c.kind === 'in_domain' && c.needs_history !== false);
    expect(needing.length).toBeGreaterThanOrEqual(cases.length / 2);
    for (const c of needing) {
      const words = contentWords(c.question);
      for (const id of c.expected_topic_ids) {
        const common = shared(words, contentWords(topics.get(id)!.title));
        expect(common.length, `${c.id}: final question names topic ${id} (${common.join(', ')})`).toBeLessThanOrEqual(
          1,
        );
      }
    }
  });

  it('the history of an anaphoric follow-up within one thread carries what the final question leaves out', () => {
    // Same thread, no topic shift: the earlier messages name the golden topic's title words more than the final one.
    const followUps = cases.filter(
      (c) => c.kind === 'in_domain' && c.needs_history !== false && !c.tags.includes('topic-shift'),
    );
    for (const c of followUps) {
      const history = contentWords((c.turns ?? []).map((t) => t.content).join('\n'));
      const final = contentWords(c.question);
      const title = contentWords(c.expected_topic_ids.map((id) => topics.get(id)!.title).join('\n'));
      expect(shared(history, title).length, `${c.id}: history vs title`).toBeGreaterThan(shared(final, title).length);
    }
  });
});
