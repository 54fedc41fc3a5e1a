import type { Stance } from '../model/scores.js';
import { fold } from '../text.js';

const ABSTAIN = [
  /\b(couldn'?t|could not|can'?t|cannot|did not|didn'?t) find (anything|any(thing)? (relevant|on|about)|any (information|posts?|threads?|excerpts?) (on|about))/,
  /\b(no|not any) (information|excerpt|thread|post)s? (on|about|for|that)\b/,
  /\bforum has nothing\b|\bnothing on the forum\b/,
  /\bi (don'?t|do not) know\b/,
  /\b(won'?t|will not|would rather not) guess\b/,
  /\b(i can'?t|i cannot|i won'?t|i will not|i'?m not able to|unable to) (help|answer|do|comply|assist|share|reveal|write)\b/,
  /\bnot (something|a question) i can (help|answer)\b/,
];
const HEDGE = [
  /\bnone of the (forum )?excerpts (really |directly )?(answers?|covers?)\b/,
  /\bclosest thread\b/,
  /\bwith caution\b/,
  /\bnot (entirely |completely )?sure\b/,
  /\b(may|might) not (answer|be relevant|apply)\b/,
  /\bloosely related\b/,
  /\bdo(es)? not (really |directly )?answer\b/,
];

/**
 * A deterministic stance signal from wording (kept beside the judge's verdict). The CTA line is
 * ignored, since it invites posting in every answer.
 */
export function stanceByPattern(answer: string, cta = ''): Stance {
  // Typographic apostrophes (don’t) read as plain ones, so the patterns need only one spelling.
  const text = fold(cta ? answer.replace(cta, '') : answer).replace(/[’‘]/g, "'");
  if (ABSTAIN.some((re) => re.test(text))) return 'abstained';
  if (HEDGE.some((re) => re.test(text))) return 'hedged';
  return 'answered';
}

/** correct_abstention (src/scoring/definitions.ts): off-topic → abstained or hedged; in-domain → not abstained. */
export function correctAbstention(kind: string, stance: Stance): boolean {
  return kind === 'off_topic' ? stance !== 'answered' : stance !== 'abstained';
}

/** The CTA footer is present (whitespace and case folded); null when no CTA is configured. */
export function hasCta(answer: string, cta: string): boolean | null {
  const norm = (s: string) => fold(s).replace(/\s+/g, ' ').trim();
  if (!norm(cta)) return null;
  return norm(answer).includes(norm(cta));
}
