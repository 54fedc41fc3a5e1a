/** `calibrate RUN.json --answer`: only cases whose zone changes are generated again. */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { zoneCell, zoneCells } from '../src/app/zone-ab.js';
import { parseCandidates } from '../src/cli/flags.js';
import { zoneOf } from '../src/model/zones.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { readResults } from '../src/store/results-file.js';
import type { CaseRecord } from '../src/model/results.js';

const io = (sink: string[]) => ({
  out: (t: string) => void sink.push(t),
  err: () => undefined,
  isTTY: false,
  cwd: PACKAGE_ROOT,
  env: {},
});

describe('zone A/B helpers', () => {
  it('parses candidate pairs and refuses abstain ≥ weak', () => {
    expect(parseCandidates('-4:0, -5:1')).toEqual([
      { abstain_below: -4, weak_below: 0 },
      { abstain_below: -5, weak_below: 1 },
    ]);
    expect(() => parseCandidates('1:0')).toThrow(/ABSTAIN < WEAK/);
  });
  it('groups ok records by zone and kind with stance counts and faithfulness means', () => {
    const rec = (zone: 'weak' | 'normal', stance: string, faith: number | null): CaseRecord =>
      ({
        id: Math.random().toString(),
        kind: 'in_domain',
        status: 'ok',
        zone,
        scores: [
          { name: 'judge_stance', value: null, details: { stance } },
          { name: 'faithfulness', value: faith },
        ],
      }) as unknown as CaseRecord;
    const cells = zoneCells([rec('weak', 'hedged', 1), rec('weak', 'answered', 0.5), rec('normal', 'answered', null)]);
    // weak/in_domain: 2 cases, faithfulness (1 + 0.5) / 2 = 0.75; normal: faithfulness null → n 0.
    expect(cells['weak/in_domain']).toMatchObject({
      n: 2,
      stance: { hedged: 1, answered: 1 },
      faithfulness: { mean: 0.75, n: 2 },
    });
    expect(cells['normal/in_domain']!.faithfulness).toEqual({ mean: null, n: 0 });
  });
  it('totals a setting: faithfulness, correct abstention, wrong abstentions, off-topic hallucinations', () => {
    const rec = (kind: string, stance: string, cites: number, faith: number | null, correct: number): CaseRecord =>
      ({
        id: Math.random().toString(),
        kind,
        status: 'ok',
        zone: 'weak',
        citations: Array.from({ length: cites }, (_, k) => ({ n: k + 1, valid: true })),
        scores: [
          { name: 'judge_stance', value: null, details: { stance } },
          { name: 'faithfulness', value: faith },
          { name: 'correct_abstention', value: correct },
        ],
      }) as unknown as CaseRecord;
    const total = zoneCell([
      rec('in_domain', 'answered', 2, 1, 1),
      rec('in_domain', 'abstained', 0, null, 0),
      rec('off_topic', 'answered', 1, 0.5, 0),
      rec('off_topic', 'answered', 0, 0, 0),
      rec('off_topic', 'abstained', 0, null, 1),
    ]);
    // Faithfulness over the 3 answers with a value: (1 + 0.5 + 0) / 3 = 0.5; correct abstention 2/5.
    // Wrong abstentions: 1 of the 2 in-domain cases abstained. Hallucinations: of the 3 off-topic
    // cases, only the one answering with a citation (the uncited answer is not one).
    expect(total).toEqual({
      n: 5,
      stance: { answered: 3, abstained: 2 },
      faithfulness: { mean: 0.5, n: 3 },
      correct_abstention: { mean: 0.4, n: 5 },
      wrong_abstentions: { count: 1, n: 2 },
      offtopic_hallucinations: { count: 1, n: 3 },
    });
  });
});

describe('calibrate --answer on the demo', () => {
  const out = mkdtempSync(join(tmpdir(), 'ragaudit-ab-'));
  const printed: string[] = [];
  let base: ReturnType<typeof readResults>;
  beforeAll(async () => {
    expect(await main(['run', '--out', out, '--no-report'], io([]))).toBe(0);
    const file = join(
      out,
      readdirSync(out).find((f) => f.endsWith('-demo.json'))!,
    );
    base = readResults(file);
    expect(await main(['calibrate', file, '--answer', '--candidates=-5:1', '--out', out], io(printed))).toBe(0);
  });

  it('regenerates exactly the cases whose zone moves under the candidate', () => {
    const expected = base.cases
      .filter(
        (r) => r.status === 'ok' && r.zone && zoneOf(r.top1_score, { abstain_below: -5, weak_below: 1 }) !== r.zone,
      )
      .map((r) => r.id);
    expect(expected.length).toBeGreaterThan(0);
    const ab = JSON.parse(
      readFileSync(
        join(
          out,
          readdirSync(out).find((f) => f.endsWith('-zone-ab.json'))!,
        ),
        'utf8',
      ),
    );
    expect(ab.settings).toHaveLength(2);
    expect(ab.settings[1].regenerated).toEqual(expected);
    expect(ab.settings[0].regenerated).toEqual([]);
    // Every case keeps one record per setting: the counts per setting add up to the ok cases.
    const total = (s: { cells: Record<string, { n: number }> }) => Object.values(s.cells).reduce((a, c) => a + c.n, 0);
    expect(total(ab.settings[1])).toBe(total(ab.settings[0]));
    expect(printed.join('')).toContain(`${expected.length} cases change zone and were regenerated`);
    // A total row per setting, over the same cases as its zones.
    for (const setting of ab.settings as {
      setting: string;
      cells: Record<string, { n: number }>;
      total: { n: number };
    }[]) {
      expect(setting.total.n).toBe(total(setting));
      expect(printed.join('')).toMatch(
        new RegExp(`^${setting.setting.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +total +${setting.total.n} `, 'm'),
      );
    }
  });
});
