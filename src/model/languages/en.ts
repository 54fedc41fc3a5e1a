import { pickOne, type KeyPhrase, type LanguagePack } from './types.js';

/** A key phrase in running English: "a"/"an" agreeing with the word it now stands before. */
function englishPhrase(p: KeyPhrase): string {
  if (!p.det) return p.words;
  const indefinite = p.det === 'a' || p.det === 'an';
  const det = indefinite ? (p.plural ? 'the' : /^[aeiou]/i.test(p.words) ? 'an' : 'a') : p.det;
  return `${det} ${p.words}`;
}

const THE = 'the';

/** English: the default; its patterns, stop words and wording are those every earlier run was scored with. */
export const ENGLISH: LanguagePack = {
  code: 'en',
  name: 'English',
  textSearchConfig: 'english',
  cta: 'To go further, open the thread or ask the community in a new topic.',
  promptsDir: '',
  // Kept as it was when English was the only language, French function words included, so that
  // English scores do not move (the hash embedder, lexical reranker and title gate use it too).
  stopwords: new Set(
    (
      'a about above after again against all am an and any are as at be because been before being below between both but by ' +
      'can could did do does doing down during each few for from further had has have having he her here hers him his how i if in into ' +
      'is it its itself just me more most my myself no nor not of off on once only or other our ours out over own same she should so some ' +
      'such than that the their theirs them then there these they this those through to too under until up very was we were what when where ' +
      'which while who whom why will with would you your yours yourself get got im ive id dont doesnt cant anyone anybody someone ' +
      'something thing things really also one ones much many way like know want need use using would could should any every still ' +
      'le la les de des du un une et est en pour que qui dans sur pas au aux ce ces il elle on ne se sa son ses avec par plus'
    ).split(/\s+/),
  ),
  elisions: [],
  foldExtra: (s) => s,
  abstain: [
    /\b(couldn'?t|could not|can'?t|cannot|did not|didn'?t) find (anything|any(thing)? (relevant|on|about)|any (information|posts?|threads?|excerpts?) (on|about))/,
    /\b(no|not any) (information|excerpt|thread|post)s? (on|about|for|that)\b/,
    /\bforum has nothing\b|\bnothing on the forum\b/,
    /\bi (don'?t|do not) know\b/,
    /\b(won'?t|will not|would rather not) guess\b/,
    /\b(i can'?t|i cannot|i won'?t|i will not|i'?m not able to|unable to) (help|answer|do|comply|assist|share|reveal|write)\b/,
    /\bnot (something|a question) i can (help|answer)\b/,
  ],
  hedge: [
    /\bnone of the (forum )?excerpts (really |directly )?(answers?|covers?)\b/,
    /\bclosest thread\b/,
    /\bwith caution\b/,
    /\bnot (entirely |completely )?sure\b/,
    /\b(may|might) not (answer|be relevant|apply)\b/,
    /\bloosely related\b/,
    /\bdo(es)? not (really |directly )?answer\b/,
  ],
  metaWords: [
    'forum',
    'thread',
    'threads',
    'excerpt',
    'excerpts',
    'closest',
    'says',
    'said',
    'source',
    'sources',
    'post',
    'posts',
  ],
  singular: (word) =>
    word.length > 4 && word.endsWith('ies') ? `${word.slice(0, -3)}y` : word.endsWith('s') ? word.slice(0, -1) : word,
  adverbEndings: ['ly'],
  speakers: { user: 'Member', assistant: 'Assistant' },
  mine: {
    personal: /^(i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|we|we're|we’re|my|our|thanks|thank|hi|hello|edit|update|ps)\b/i,
    claim: (s) => `Is it true that ${s}?`,
    subjects: new Set(
      'the a an this that thats these those it its they theyre there theres he she hes shes most many some all both each every no one either neither'.split(
        ' ',
      ),
    ),
    determiners: {
      the: THE,
      a: 'a',
      an: 'an',
      my: THE,
      your: THE,
      our: THE,
      their: THE,
      his: THE,
      its: THE,
      this: THE,
      these: THE,
      those: THE,
    },
    vague: new Set(
      'time times year years month months week weeks day days night lot lots bit bits pair pairs couple thing things way ways one two three four five six ten hundred first second third next other same post posts thread threads question questions problem problems issue issues point place part end side kind sort type'.split(
        ' ',
      ),
    ),
    notHead: /^\p{L}+(ed|ing)$/u,
    head: (words) => words[words.length - 1]!,
    phrase: (p, pick) =>
      pickOne(
        [
          `Any advice on ${englishPhrase(p)}?`,
          `What does the forum recommend for ${englishPhrase(p)}?`,
          `How do members here deal with ${englishPhrase(p)}?`,
        ],
        pick,
      ),
    tagPhrase: (tag, p) => `${tag[0]!.toUpperCase()}${tag.slice(1)} question: any advice on ${englishPhrase(p)}?`,
  },
  sentenceSplit: /(?<=[.!?])\s+(?=[A-Z0-9"“(])/,
  responder: {
    empty: "I couldn't find anything on the forum about this, so I won't guess.",
    weakNothing: 'None of the forum excerpts really answers this question, so I would rather not guess.',
    weakClosest: (title, n, sentence) =>
      `None of the forum excerpts really answers this question. The closest thread is "${title}" [[${n}]], which says: "${sentence}" Treat that with caution.`,
    noAnswer: 'The forum excerpts I found do not answer this question.',
    answer: (picks) =>
      `From the forum: ${picks.map((p) => `${p.sentence.replace(/[.!?]*$/, '')} [[${p.n}]].`).join(' ')}`,
  },
};
