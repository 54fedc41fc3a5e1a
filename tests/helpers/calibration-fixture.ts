/**
 * The calibration tests' fixture, sorted. In-domain (10): −3.5 −2 −1 −0.5 0.5 1 2 3 4 6. Off-topic (5):
 * −6 −4.5 −2.5 −1.5 0.2. Zones: score < t is "below t" (strict), so a score equal to a threshold is not
 * below it.
 */
import type { CalibrationCase } from '../../src/scoring/calibration.js';

const IN_DOMAIN = [2, -1, 0.5, 6, -3.5, 1, -0.5, 3, -2, 4]; // unsorted on purpose
const OFF_TOPIC = [0.2, -6, -1.5, -4.5, -2.5];
export const FIXTURE: CalibrationCase[] = [
  ...IN_DOMAIN.map((top1, i) => ({ id: `in-${i}`, kind: 'in_domain', top1 })),
  ...OFF_TOPIC.map((top1, i) => ({ id: `off-${i}`, kind: 'off_topic', top1 })),
];
export const CURRENT = { abstain_below: -4, weak_below: 0 };

/** A count out of n with its share. */
export const c = (count: number, n: number) => ({ count, n, share: count / n });
