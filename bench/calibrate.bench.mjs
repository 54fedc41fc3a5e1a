#!/usr/bin/env node
// Times the calibration computation (src/scoring/calibration.ts) on synthetic cases: sorting,
// the per-threshold counts (binary search) and the (abstain, weak) pair search. Build first:
//
//   npx tsc -p tsconfig.build.json && node bench/calibrate.bench.mjs [CASES] [THRESHOLDS]
//
// Defaults: 100,000 cases (90 % in-domain ~ N(1, 2.5), 10 % off-topic ~ N(−3, 2), so the two
// distributions overlap as in the original audit) and 1,000 thresholds from −8 step 0.012. Deterministic
// (mulberry32 seed 42). Prints the wall time of one whole calibrate() call: the first (cold) run,
// then the best and median of 5 more; once with the default constraints (none met on these
// tails: the closest-pair path) and once with --max-silenced 0.01 --min-caught 0.9.
import { calibrate } from '../dist/scoring/calibration.js';
import { mulberry32 } from '../dist/scoring/statistics.js';

const n = Number(process.argv[2] ?? 100_000);
const thresholds = Number(process.argv[3] ?? 1_000);
const rand = mulberry32(42);
const normal = (mean, sd) => mean + sd * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
const cases = Array.from({ length: n }, (_, i) => {
  const off = rand() < 0.1;
  // 0.1 % without a score, as an errored case would be.
  const top1 = rand() < 0.001 ? null : off ? normal(-3, 2) : normal(1, 2.5);
  return { id: `c${i}`, kind: off ? 'off_topic' : 'in_domain', top1 };
});
const step = 12 / thresholds;
const grid = { from: -8, to: -8 + step * (thresholds - 1), step };

function time(constraints) {
  const times = [];
  let cal;
  for (let run = 0; run < 6; run++) {
    const t0 = performance.now();
    cal = calibrate({ cases, grid, constraints, current: { abstain_below: -4, weak_below: 0 } });
    times.push(performance.now() - t0);
  }
  const cold = times.shift();
  times.sort((a, b) => a - b);
  const r = cal.recommendation;
  const pair = r.pair ? `abstain_below ${r.pair.abstain_below}, weak_below ${r.pair.weak_below}` : 'no pair';
  console.log(
    `  max_silenced ${constraints.max_silenced}, min_caught ${constraints.min_caught}: cold ${cold.toFixed(1)} ms, best ${times[0].toFixed(1)} ms, median ${times[2].toFixed(1)} ms → ${r.status}: ${pair} (${r.pairs_meeting} pairs meeting)`,
  );
  return cal;
}

console.log(`calibrate: ${n} cases, ${thresholds} thresholds (${grid.from} … ${grid.to.toFixed(3)} step ${step})`);
const cal = time({ max_silenced: 0, min_caught: 1 });
time({ max_silenced: 0.01, min_caught: 0.9 });
const d = cal.distributions;
console.log(
  `  scored: ${d.in_domain.n} in-domain, ${d.off_topic.n} off-topic; without a score: ${cal.excluded.no_score.in_domain.length + cal.excluded.no_score.off_topic.length}`,
);
console.log(`  peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (node ${process.version})`);
