/**
 * Conversation cases and the conversation config block, as input: a history that does not
 * alternate, one that does not end with the assistant, goldens on an assistant message and
 * needs_history without turns are named file:line: field; the condense prompts exist in every
 * language's folder with the same placeholder; the config block defaults to condensed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { InputError } from '../src/errors.js';
import { languagePromptsDir } from '../src/evidence/block.js';
import { loadPrompt, placeholders } from '../src/evidence/templates.js';
import { main } from '../src/cli/main.js';
import { PROMPTS_DIR } from '../src/paths.js';
import {
  conversationSettings,
  createCondenser,
  historyText,
  knownQueries,
  LAST_MESSAGE,
  OFFLINE_CONDENSER,
} from '../src/wiring/condenser.js';
import type { ChatModel } from '../src/llm/types.js';
import { linkDemoCache } from './helpers/work-dir.js';

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-conv-input-'));
linkDemoCache(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
function problemsOf(p: string): string[] {
  try {
    loadCases([p]);
  } catch (e) {
    if (e instanceof InputError) return e.problems;
    throw e;
  }
  throw new Error('no error');
}

describe('conversation case files', () => {
  it('a history that does not alternate names the turn and its role, with the line', () => {
    const p = file(
      'alternate.yml',
      `- id: two-users
  question: "And then?"
  turns:
    - { role: user, content: "How do I shine boots?" }
    - { role: user, content: "With wax?" }
`,
    );
    const problems = problemsOf(p);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /:5: \[0\]\.turns\[1\]\.role: turn 2 must be an? assistant message \(turns alternate, starting with the user\)$/,
    );
    expect(problems[0]!.startsWith(`${p}:5: `)).toBe(true);
  });

  it('a history ending with a user message, goldens on an assistant message, needs_history without turns', () => {
    const p = file(
      'shapes.yml',
      `- id: ends-with-user
  question: "And then?"
  turns:
    - { role: user, content: "How do I shine boots?" }
    - { role: assistant, content: "With wax." }
    - { role: user, content: "Which wax?" }
- id: golden-on-assistant
  question: "And then?"
  turns:
    - { role: user, content: "How do I shine boots?" }
    - { role: assistant, content: "With wax.", expected_topic_ids: [11] }
- id: no-turns
  question: "How do I shine boots?"
  needs_history: true
`,
    );
    const problems = problemsOf(p);
    expect(problems).toHaveLength(3);
    expect(problems).toContain(
      `${p}:4: [0].turns: the history must end with an assistant message (the final user message is \`question\`)`,
    );
    expect(problems).toContain(`${p}:11: [1].turns[1]: goldens belong on user turns, not on assistant messages`);
    expect(problems).toContain(
      `${p}:14: [2].needs_history: only a conversation case (with turns) can need its history`,
    );
  });

  it('the CLI stops with exit 2 and the file:line: field message', async () => {
    const p = file('cli.yml', `- id: lonely\n  question: "Why?"\n  needs_history: false\n`);
    const err: string[] = [];
    const code = await main(['retrieval', '--cases', p], {
      out: () => undefined,
      err: (t) => void err.push(t),
      isTTY: false,
      cwd: dir,
      env: {},
    });
    expect(code).toBe(2);
    expect(err.join('')).toContain(
      `${p}:3: [0].needs_history: only a conversation case (with turns) can need its history`,
    );
  });
});

describe('--query', () => {
  it('sets conversation.query for the run (recorded in the config and each record), and refuses another value', async () => {
    const cases = file(
      'query.yml',
      `- id: salt-suede
  turns:
    - { role: user, content: "White salt stains on my brown calf boots after a week of slush: how do I get them out?" }
    - { role: assistant, content: "Brush off the crust, then wipe the whole panel with one part vinegar to two parts water." }
  question: "Does that work on suede too?"
  expected_topic_ids: [110]
`,
    );
    const io = (err: string[]) => ({
      out: () => undefined,
      err: (t: string) => void err.push(t),
      isTTY: false,
      cwd: dir,
      env: {},
    });
    const err: string[] = [];
    expect(
      await main(['retrieval', '--cases', cases, '--query', 'last', '--out', join(dir, 'q'), '--name', 'q'], io(err)),
    ).toBe(0);
    const json = readdirSync(join(dir, 'q')).find((f) => f.endsWith('-q.json'))!;
    const result = JSON.parse(readFileSync(join(dir, 'q', json), 'utf8')) as {
      config: { conversation?: { query: string } };
      cases: { retrieval_query?: { mode: string; text: string } }[];
    };
    expect(result.config.conversation?.query).toBe('last');
    expect(result.cases[0]!.retrieval_query).toEqual({ mode: 'last', text: 'Does that work on suede too?' });
    const bad: string[] = [];
    expect(await main(['retrieval', '--cases', cases, '--query', 'history', '--out', join(dir, 'q')], io(bad))).toBe(2);
    expect(bad.join('')).toMatch(/--query history/);
  });
});

const CHANNELS = `retrieval:\n  channels:\n    - { name: posts, kind: semantic, grain: post }\n`;

describe('the condense prompt and settings', () => {
  it('exists in English and French with a version and the {{history}} placeholder only', () => {
    for (const language of [undefined, 'fr'] as const) {
      const prompt = loadPrompt(languagePromptsDir(PROMPTS_DIR, language), 'condense');
      expect(prompt.version).toBe('1');
      expect(placeholders(prompt.text)).toEqual(['history']);
    }
    expect(loadPrompt(languagePromptsDir(PROMPTS_DIR, 'fr'), 'condense').text).toMatch(/conversation jusqu’ici/);
  });

  it('absent, the conversation block means condensed with the condense prompt', () => {
    const p = file('cfg.yml', `name: x\n${CHANNELS}`);
    expect(conversationSettings(loadConfig(p, {}).config)).toEqual({ query: 'condensed', prompt: 'condense' });
    const q = file('cfg-last.yml', `name: x\n${CHANNELS}conversation: { query: last }\n`);
    expect(conversationSettings(loadConfig(q, {}).config)).toEqual({ query: 'last', prompt: 'condense' });
  });

  it('picks the message alone, the offline condenser, or the generator', () => {
    const offline = { id: 'offline:extractive', offline: true } as const satisfies Partial<ChatModel>;
    const remote = { id: 'openai:m', offline: false } as const satisfies Partial<ChatModel>;
    const model = (m: { id: string; offline: boolean }): ChatModel => ({
      ...m,
      complete: () => Promise.reject(new Error('not asked')),
    });
    expect(createCondenser({ conversation: { query: 'last', prompt: 'condense' } }, model(remote), PROMPTS_DIR)).toBe(
      LAST_MESSAGE,
    );
    expect(createCondenser({}, model(offline), PROMPTS_DIR)).toBe(OFFLINE_CONDENSER);
    const byModel = createCondenser({}, model(remote), PROMPTS_DIR);
    expect(byModel.component?.label).toBe('openai:m (the generator, prompt condense v1)');
    // A query a model writes is not known before it is asked; the others are (the retrieval feed batches them).
    const c = {
      id: 'c',
      question: 'And then?',
      kind: 'in_domain' as const,
      expected_topic_ids: [],
      expected_post_ids: [],
      expected_content: [],
      difficulty: 'unrated' as const,
      tags: [],
      turns: [
        { role: 'user' as const, content: 'How do I shine boots?', expected_topic_ids: [11] },
        { role: 'assistant' as const, content: 'With wax.' },
      ],
    };
    expect(knownQueries(byModel, c)).toEqual(['How do I shine boots?']);
    expect(knownQueries(OFFLINE_CONDENSER, c)).toEqual(['How do I shine boots? And then?', 'How do I shine boots?']);
    expect(knownQueries(LAST_MESSAGE, c)).toEqual(['And then?', 'How do I shine boots?']);
    expect(historyText(c.turns, 'fr')).toBe('Membre: How do I shine boots?\n\nAssistant: With wax.');
  });
});
