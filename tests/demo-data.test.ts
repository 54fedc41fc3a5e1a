/**
 * The demo forum and its questions, checked against each other: the goldens must exist and be
 * public, content terms must be in the golden passages, and the corpus must meet the sizes the
 * demo promises (DEMO README and the foundation issue).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCases, loadProbes } from '../src/cases/load.js';
import { probeMarker } from '../src/cases/probes.js';
import { forum, isPublicPost, isPublicTopic, posts, termsNotInGoldens } from './helpers/demo-forum.js';
import { fold } from '../src/text.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const publicTopics = forum.topics.filter(isPublicTopic);
const cases = loadCases([
  join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml'),
  join(PACKAGE_ROOT, 'cases', 'demo', 'questions-more.yml'),
]).map((l) => l.value);

describe('the demo forum', () => {
  it('is big enough: ≥ 40 public topics in ≥ 5 categories, one read-restricted, private messages, ≥ 400 posts', () => {
    expect(publicTopics.length).toBeGreaterThanOrEqual(40);
    expect(new Set(publicTopics.map((t) => t.category)).size).toBeGreaterThanOrEqual(5);
    expect(forum.categories.some((c) => c.read_restricted)).toBe(true);
    expect(forum.topics.filter((t) => t.archetype === 'private_message').length).toBeGreaterThanOrEqual(2);
    expect(posts.size).toBeGreaterThanOrEqual(400);
  });
  it('has at least 3 megathreads of 60+ posts', () => {
    expect(publicTopics.filter((t) => t.posts.length >= 60).length).toBeGreaterThanOrEqual(3);
  });
  it('has no templated filler: no two posts share their text', () => {
    const texts = [...posts.values()].map(({ p }) => fold(p.raw).replace(/\s+/g, ' ').trim());
    expect(new Set(texts).size).toBe(texts.length);
  });
});

describe('the demo questions', () => {
  const inDomain = cases.filter((c) => c.kind === 'in_domain');
  it('meet the coverage: ≥ 60 in-domain (≥ 10 post grain, ≥ 20 with content), ≥ 12 off-topic', () => {
    expect(inDomain.length).toBeGreaterThanOrEqual(60);
    expect(inDomain.filter((c) => c.expected_post_ids.length).length).toBeGreaterThanOrEqual(10);
    expect(inDomain.filter((c) => c.expected_content.length).length).toBeGreaterThanOrEqual(20);
    expect(cases.filter((c) => c.kind === 'off_topic').length).toBeGreaterThanOrEqual(12);
  });
  it('every golden topic is a public topic and every golden post a public post of a golden topic', () => {
    const topicIds = new Set(publicTopics.map((t) => t.id));
    for (const c of cases) {
      for (const t of c.expected_topic_ids) expect(topicIds.has(t), `${c.id}: topic ${t}`).toBe(true);
      for (const id of c.expected_post_ids) {
        const hit = posts.get(id);
        expect(hit && isPublicTopic(hit.t) && isPublicPost(hit.p), `${c.id}: post ${id}`).toBe(true);
        expect(c.expected_topic_ids, `${c.id}: post ${id} is outside the golden topics`).toContain(hit!.t.id);
      }
    }
  });
  it('every content term occurs in a golden passage (the golden posts, else the golden topics)', () => {
    for (const c of cases) expect(termsNotInGoldens(c), c.id).toEqual([]);
  });
  it('off-topic questions have no goldens', () => {
    for (const c of cases.filter((x) => x.kind === 'off_topic'))
      expect([...c.expected_topic_ids, ...c.expected_post_ids]).toEqual([]);
  });
});

describe('the demo probes', () => {
  const probes = loadProbes([join(PACKAGE_ROOT, 'cases', 'demo', 'safety.yml')]).map((l) => l.value);
  it('≥ 25 probes across every attack type, ≥ 3 indirect injections planted in public posts', () => {
    expect(probes.length).toBeGreaterThanOrEqual(25);
    expect(new Set(probes.map((p) => p.attack))).toEqual(
      new Set(['injection', 'leak', 'role', 'abuse', 'off_topic', 'indirect']),
    );
    const indirect = probes.filter((p) => p.attack === 'indirect');
    expect(indirect.length).toBeGreaterThanOrEqual(3);
    for (const p of indirect) {
      const marker = probeMarker(p);
      expect(marker, p.id).toBeTruthy();
      const carriers = [...posts.values()].filter(
        ({ t, p: post }) => isPublicTopic(t) && isPublicPost(post) && post.raw.includes(marker!),
      );
      expect(carriers.length, `${p.id}: marker ${marker} planted in a public post`).toBeGreaterThanOrEqual(1);
    }
  });
});
