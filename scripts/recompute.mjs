#!/usr/bin/env node
/**
 * An independent recomputation of a results file's figures, to catch a scorer or a summary that
 * drifted from the written definitions. It imports nothing from src/ or dist/ (only `yaml` and
 * node built-ins): every rule is written again here from the definitions in
 * src/scoring/definitions.ts and /work/shared/DESIGN.md §4, not from ragaudit's code.
 *
 *   node scripts/recompute.mjs RESULTS.json [--forum DIR]
 *
 * RESULTS.json is what `ragaudit retrieval` or `ragaudit run` wrote (format 1, or format 2 with
 * its `.cases.jsonl` beside it). A retrieved item stores only its ids and score, and a source
 * only its post and topic ids, so the passage texts and each post's visibility are read from the
 * forum the run was built from: `--forum DIR`, else the config's `database.demo_forum` (relative
 * to the config file), else the built-in demo forum (cases/demo/forum). Against a real database
 * there is no forum folder: the figures that need passage text are then reported as not checked.
 *
 * Checked, per ok case and node: hit@1/3/5/10, post_hit@k (post-grain nodes, cases with posts),
 * mrr@10, content_recall@5 and content_mrr@10 (passage text with markup stripped, whitespace
 * collapsed, case, accents, ligatures and apostrophes folded, word boundaries, a|b alternatives, a
 * repeated term counted once), pollution@5 (distinct topics, dominant share), forbidden_hits (the
 * stored list), that the list is ranked by score and every item is a public post of its topic; the
 * top-1 score and the zone (strict <). Per answered case: the [[n]] citations (ids, validity against the sources shown and the
 * forum, post, golden), citation_validity with its markers and invalid count, golden_citation,
 * CTA, correct_abstention_pattern, offtopic_hallucination, forbidden, and from the judge's stored
 * verdicts faithfulness, citation_relevance and correct_abstention. Summary: retrieval counts and
 * every node's means with n (also per breakdown group), the generation block (zones, evidence
 * PostHit@5, citation shares and counts, golden, CTA, stances, abstentions, hallucinations,
 * forbidden, tokens, cached; also per case set) and the judge block's figures (not agreement).
 * Numbers are equal within 1e-9 (relative): a mean summed in another order may differ in the last bit.
 *
 * Prints one line per mismatch (case, node, metric, stored, recomputed), the mismatches by metric,
 * what was not checked and why, and last `recompute: N values, M mismatches`. Exit 0 when none,
 * 1 on a mismatch, 2 on unreadable input.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { answerFigures, nodeMetrics, zoneOf } from './recompute-case.mjs';
import { generationFigures, groupMember, judgeFigures, nodeFigures } from './recompute-summary.mjs';
import { passageText } from './recompute-text.mjs';

const REPO = resolve(import.meta.dirname, '..');
const TEXT_METRICS = new Set(['content_recall_at_5', 'content_mrr_at_10']);
/** Inputs the scores carry (the stances themselves), not figures to recompute. */
const INPUT_SCORES = new Set(['stance_pattern', 'judge_stance', 'judge_error']);

class InputProblem extends Error {}

function readResults(file) {
  if (!existsSync(file)) throw new InputProblem(`${file}: no such file`);
  let head;
  try {
    head = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputProblem(`${file}: not JSON (${e.message})`);
  }
  if (!head.cases_file) return head;
  const lines = readFileSync(join(dirname(file), head.cases_file), 'utf8')
    .split('\n')
    .filter(Boolean);
  return { ...head, cases: lines.map((l) => JSON.parse(l)) };
}

/** The forum folder the run's database was built from, or the reason there is none. */
function locateForum(result, flag) {
  if (flag) return { dir: resolve(flag) };
  const db = result.config?.database ?? {};
  if (db.url) return { reason: 'the run read a real database, whose posts are not in the results file' };
  if (db.demo_forum) {
    const src = result.config_source;
    const base = src && existsSync(src) ? dirname(resolve(src)) : undefined;
    if (isAbsolute(db.demo_forum)) return { dir: db.demo_forum };
    if (base) return { dir: resolve(base, db.demo_forum) };
    return { reason: `database.demo_forum '${db.demo_forum}' is relative to ${src}, which is not here (use --forum)` };
  }
  return { dir: join(REPO, 'cases', 'demo', 'forum') };
}

/** post id → { topic_id, raw, public } from a forum folder (cases/demo/README.md). */
function readForum(dir) {
  const cats = new Map((parse(readFileSync(join(dir, 'categories.yml'), 'utf8')) ?? []).map((c) => [c.slug, c]));
  const posts = new Map();
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.yml') && f !== 'categories.yml')) {
    for (const t of parse(readFileSync(join(dir, name), 'utf8')) ?? []) {
      const cat = cats.get(t.category);
      const topicPublic =
        t.archetype !== 'private_message' && t.visible !== false && !t.deleted && cat && !cat.read_restricted;
      for (const p of t.posts) {
        const open = topicPublic && (p.post_type ?? 1) === 1 && !p.hidden && !p.deleted;
        posts.set(t.id * 1000 + p.n, { topic_id: t.id, raw: p.raw, public: Boolean(open) });
      }
    }
  }
  return posts;
}

const isNum = (v) => typeof v === 'number';
function same(a, b) {
  const x = a ?? null;
  const y = b ?? null;
  if (isNum(x) && isNum(y)) return x === y || Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
  return JSON.stringify(x) === JSON.stringify(y);
}

const tally = { values: 0, mismatches: [], unchecked: new Map() };
function check(where, node, metric, stored, recomputed) {
  tally.values += 1;
  if (!same(stored, recomputed)) tally.mismatches.push({ where, node, metric, stored, recomputed });
}
function skip(metric, why) {
  const key = `${metric}: ${why}`;
  tally.unchecked.set(key, (tally.unchecked.get(key) ?? 0) + 1);
}

/** Compares a recomputed tree with the stored one, leaf by leaf; `counts` paths read a missing count as 0. */
function compareTree(where, node, path, stored, recomputed, counts = false) {
  if (recomputed !== null && typeof recomputed === 'object') {
    const keys = new Set(Object.keys(recomputed));
    if (counts && stored && typeof stored === 'object') for (const k of Object.keys(stored)) keys.add(k);
    for (const k of keys) compareTree(where, node, `${path}.${k}`, stored?.[k], recomputed[k], counts);
    return;
  }
  check(
    where,
    node,
    path.slice(1),
    counts && stored === undefined ? 0 : stored,
    counts && recomputed === undefined ? 0 : recomputed,
  );
}

function recompute(result, forum) {
  const grains = new Map(result.nodes.map((n) => [n.name, n.grain]));
  const cfg = result.config ?? {};
  const zones = { abstain_below: -4, weak_below: 0, ...cfg.zones };
  const rerankOn = cfg.rerank ? cfg.rerank.enabled !== false : false;
  const rerankNode = rerankOn ? (cfg.rerank.name ?? 'rerank') : undefined;
  const evidenceNode = cfg.evidence?.node ?? rerankNode ?? result.nodes.at(-1)?.name;
  const memo = new Map();
  const passage = (id) => {
    if (!memo.has(id)) memo.set(id, forum.posts?.has(id) ? passageText(forum.posts.get(id).raw) : undefined);
    return memo.get(id);
  };
  const isPublic = forum.posts ? (id) => forum.posts.get(id)?.public === true : undefined;
  const rows = [];
  for (const rec of result.cases) {
    if (rec.status !== 'ok') continue;
    const row = { rec, nodes: {} };
    rows.push(row);
    for (const [node, nc] of Object.entries(rec.retrieval ?? {})) {
      const mine = nodeMetrics(rec, nc.items, grains.get(node), passage, Boolean(forum.posts));
      row.nodes[node] = mine;
      for (const [metric, stored] of Object.entries(nc.metrics)) {
        if (metric in mine) check(rec.id, node, metric, stored, mine[metric]);
        else if (TEXT_METRICS.has(metric)) skip(metric, forum.reason);
        else skip(metric, 'no written definition');
      }
      if ('forbidden_hits' in mine && !('forbidden_hits' in nc.metrics))
        check(rec.id, node, 'forbidden_hits', undefined, mine.forbidden_hits);
      const scores = nc.items.map((i) => i.score);
      check(
        rec.id,
        node,
        'ranked_by_score',
        true,
        scores.every((x, i) => i === 0 || x <= scores[i - 1]),
      );
      if (forum.posts) {
        const good = nc.items.filter((i) => forum.posts.get(i.post_id)?.topic_id === i.topic_id && isPublic(i.post_id));
        check(rec.id, node, 'items_public_in_forum', nc.items.length, good.length);
      }
    }
    if ('top1_score' in rec && rerankNode)
      check(rec.id, rerankNode, 'top1_score', rec.top1_score, rec.retrieval[rerankNode]?.items[0]?.score ?? null);
    if (rec.zone !== undefined) {
      const zone = rerankNode
        ? zoneOf(rec.top1_score, zones)
        : rec.retrieval[evidenceNode]?.items.length
          ? 'normal'
          : 'empty';
      check(rec.id, '-', 'zone', rec.zone, zone);
    }
    if (typeof rec.answer === 'string') caseGeneration(row, cfg, isPublic);
  }
  summaries(result, rows, evidenceNode, grains);
}

function caseGeneration(row, cfg, isPublic) {
  const { rec } = row;
  const f = answerFigures(rec, cfg.evidence?.cta, isPublic);
  row.f = f;
  const stored = rec.citations ?? [];
  check(
    rec.id,
    '-',
    'citations.n',
    stored.map((c) => c.n),
    f.cites.map((c) => c.n),
  );
  check(
    rec.id,
    '-',
    'citations.valid',
    stored.map((c) => c.valid),
    f.cites.map((c) => c.valid),
  );
  const validOnes = (list) => list.filter((c) => c.valid).map((c) => [c.post_id, c.golden ?? null]);
  check(rec.id, '-', 'citations.post_id+golden', validOnes(stored), validOnes(f.cites));
  const mine = {
    citation_validity: f.citation_validity,
    golden_citation: f.golden_citation,
    cta: f.cta,
    correct_abstention_pattern: f.correct_abstention_pattern,
    offtopic_hallucination: f.offtopic_hallucination,
    forbidden: f.forbidden,
    faithfulness: f.faithfulness,
    citation_relevance: f.citation_relevance,
    correct_abstention: f.correct_abstention,
  };
  for (const s of rec.scores) {
    if (INPUT_SCORES.has(s.name)) continue;
    if (!(s.name in mine) || (mine[s.name] === undefined && s.name !== 'forbidden')) {
      skip(`score ${s.name}`, 'not recomputed');
      continue;
    }
    check(rec.id, '-', s.name, s.value, mine[s.name]);
    if (s.name === 'citation_validity' && s.details) {
      check(rec.id, '-', 'citation_validity.markers', s.details.markers, f.markers);
      check(rec.id, '-', 'citation_validity.invalid', s.details.invalid, f.invalid);
    }
  }
  if (f.forbidden !== undefined && !rec.scores.some((s) => s.name === 'forbidden'))
    check(rec.id, '-', 'forbidden', undefined, f.forbidden);
}

function summaries(result, rows, evidenceNode, grains) {
  const r = result.summary.retrieval;
  const counted = (status) => result.cases.filter((c) => c.status === status).length;
  check('(summary)', 'retrieval', 'cases', r.cases, result.cases.length);
  for (const s of ['ok', 'errors', 'gated'])
    check('(summary)', 'retrieval', s, r[s], counted(s === 'errors' ? 'error' : s));
  const nodeBlock = (where, stored, subset) => {
    for (const [node, figures] of Object.entries(stored)) {
      const mine = nodeFigures(subset, node, Object.keys(figures));
      for (const [metric, mn] of Object.entries(figures)) {
        if (!subset.some((x) => x.nodes[node] && metric in x.nodes[node])) {
          if (mn.n > 0)
            skip(`summary ${metric}`, TEXT_METRICS.has(metric) ? 'needs passage text' : 'no written definition');
          else check(where, node, `${metric}.n`, mn.n, 0);
          continue;
        }
        check(where, node, `${metric}.mean`, mn.mean, mine[metric].mean);
        check(where, node, `${metric}.n`, mn.n, mine[metric].n);
      }
    }
  };
  nodeBlock('(summary)', r.nodes, rows);
  for (const node of new Set(rows.flatMap((x) => Object.keys(x.nodes))))
    if (!(node in r.nodes)) check('(summary)', node, 'node present', false, true);
  for (const [group, stored] of Object.entries(r.breakdown ?? {})) {
    const member = groupMember(group);
    if (!member) skip(`breakdown ${group}`, 'group not understood');
    else
      nodeBlock(
        `(summary ${group})`,
        stored,
        rows.filter((x) => member(x.rec)),
      );
  }
  const gen = result.summary.generation;
  const answered = rows.filter((x) => x.f);
  if (gen) {
    const mine = generationFigures(answered, evidenceNode, grains.get(evidenceNode));
    const { zones, stance_pattern, ...rest } = mine;
    compareTree('(summary)', 'generation', '', gen, rest);
    compareTree('(summary)', 'generation', '.zones', gen.zones, zones, true);
    compareTree('(summary)', 'generation', '.stance_pattern', gen.stance_pattern, stance_pattern, true);
  }
  for (const [set, stored] of Object.entries(result.summary.generation_sets ?? {})) {
    const member = groupMember(set);
    if (!member) {
      skip(`generation set ${set}`, 'set not understood');
      continue;
    }
    const mine = generationFigures(
      answered.filter((x) => member(x.rec)),
      evidenceNode,
      grains.get(evidenceNode),
    );
    compareTree(`(summary ${set})`, 'generation', '', stored, mine, true);
  }
  if (result.summary.judge) {
    const { abstention_matrix, ...rest } = judgeFigures(answered);
    compareTree('(summary)', 'judge', '', result.summary.judge, rest);
    compareTree(
      '(summary)',
      'judge',
      '.abstention_matrix',
      result.summary.judge.abstention_matrix,
      abstention_matrix,
      true,
    );
    if (result.summary.judge.agreement) skip('summary judge.agreement', 'not recomputed (labelling agreement)');
  }
  if (result.summary.conversations) skip('summary conversations', 'not recomputed');
}

const show = (v) => (v === undefined ? '(absent)' : JSON.stringify(v));

function main() {
  const { values, positionals } = parseArgs({ options: { forum: { type: 'string' } }, allowPositionals: true });
  if (positionals.length !== 1) throw new InputProblem('usage: node scripts/recompute.mjs RESULTS.json [--forum DIR]');
  const result = readResults(positionals[0]);
  if (!Array.isArray(result.cases) || !result.summary?.retrieval)
    throw new InputProblem(`${positionals[0]}: not a ragaudit results file (no cases or summary.retrieval)`);
  const where = locateForum(result, values.forum);
  const forum = where.dir ? { dir: where.dir, posts: readForum(where.dir) } : { reason: where.reason };
  console.log(
    forum.dir
      ? `forum: ${forum.dir} (passage text and post visibility: the results file stores neither)`
      : `forum: none (${forum.reason}): passage-text figures not checked`,
  );
  recompute(result, forum);
  for (const m of tally.mismatches)
    console.log(
      `mismatch\t${m.where}\t${m.node}\t${m.metric}\tstored ${show(m.stored)}\trecomputed ${show(m.recomputed)}`,
    );
  const byMetric = new Map();
  for (const m of tally.mismatches) {
    const key = m.metric.replace(/^(\w+)\.(mean|n)$/, '$1');
    byMetric.set(key, (byMetric.get(key) ?? 0) + 1);
  }
  if (byMetric.size) console.log(`mismatches by metric: ${[...byMetric].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  for (const [what, n] of tally.unchecked) console.log(`not checked: ${what} (×${n})`);
  console.log(`recompute: ${tally.values} values, ${tally.mismatches.length} mismatches`);
  return tally.mismatches.length ? 1 : 0;
}

try {
  process.exitCode = main();
} catch (e) {
  if (!(e instanceof InputProblem)) throw e;
  console.error(`recompute: ${e.message}`);
  process.exitCode = 2;
}
