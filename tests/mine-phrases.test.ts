/**
 * Mined template questions read as sentences: they ask about a key phrase of the thread (a noun
 * phrase a determiner opens, or the title's opening words), never a list of frequent words. The
 * sources below are ones the word-list templates turned into "What does the forum say about
 * water, minutes and cotton?"; each expected phrase is read off its source by the rule of
 * src/mining/phrases.ts (counts of title and post, the title's words counting double).
 */
import { describe, expect, it } from 'vitest';
import { keyPhrase } from '../src/mining/phrases.js';
import { templateQuestion } from '../src/mining/templates.js';
import { ENGLISH } from '../src/model/languages/en.js';
import { FRENCH } from '../src/model/languages/fr.js';

const first = () => 0;

describe('key phrases and the questions asked about them', () => {
  // Fails before this change: "What does the forum say about water, minutes and cotton?" (and "Shine question: any experience with water and minutes?").
  it('English: the phrase title and post both say, in a question that is a sentence', () => {
    const source = {
      title: 'Mirror shine keeps going cloudy',
      category: 'Care & Repair',
      tags: ['shine', 'wax'],
      text: `Trying to get a mirror shine on my black cap-toes. After about
ten minutes of water and hard wax the toe goes cloudy.

What am I doing wrong with the wax and the water?`,
    };
    // "mirror" and "shine": said in the title and the post (2 each) and title words (+2 each) = 8;
    // "the toe goes cloudy" runs on into a verb (three words: not a phrase); "wax", "water": 2 each.
    expect(keyPhrase(source, ENGLISH)).toEqual({ det: 'a', words: 'mirror shine', plural: false });
    expect(templateQuestion('key-phrase', source, ENGLISH, first)).toBe('Any advice on a mirror shine?');
    expect(templateQuestion('key-phrase', source, ENGLISH, () => 0.5)).toBe(
      'What does the forum recommend for a mirror shine?',
    );
    // The tag "shine" is a title word (it would spend the rephrase rule's allowance): "wax" is asked.
    expect(templateQuestion('tag-phrase', source, ENGLISH, first)).toBe('Wax question: any advice on a mirror shine?');
  });

  it('English: a possessive made definite, a plural agreed, vague words and run-ons left out', () => {
    // "my black cap-toes" twice as a pair (kept whole), "the rain" once; "a lot" is vague.
    expect(
      keyPhrase(
        {
          title: 'Why?',
          category: '',
          tags: [],
          text: 'I left my black cap-toes in the rain. The black cap-toes have a lot of spots.',
        },
        ENGLISH,
      ),
    ).toEqual({ det: 'the', words: 'black cap-toes', plural: true });
    // Three content words after the determiner run on into a verb; "time" is vague: no phrase at all.
    expect(
      keyPhrase({ title: 'Why?', category: '', tags: [], text: 'The toe goes cloudy every time.' }, ENGLISH),
    ).toBeNull();
    // "a stands" would not be English: a plural after "a" takes "the".
    expect(
      templateQuestion(
        'key-phrase',
        { title: 'Why?', category: '', tags: [], text: 'I bought a stands for them.' },
        ENGLISH,
        first,
      ),
    ).toBe('Any advice on the stands?');
  });

  it('English: the title opening words, in running case (a name keeps its capital)', () => {
    const source = {
      title: 'Toe taps: worth it?',
      category: '',
      tags: [],
      text: 'Mine came from Crockett with toe taps fitted. The cobbler at Crockett said they last.',
    };
    expect(keyPhrase(source, ENGLISH)).toEqual({ det: '', words: 'toe taps', plural: true });
    expect(
      keyPhrase(
        { title: 'Crockett or Alden?', category: '', tags: [], text: 'Both makers, Alden and Crockett, resole.' },
        ENGLISH,
      )?.words,
    ).toBe('Crockett');
  });

  // Fails before this change: "Que dit le forum sur …, … et … ?", a list of words.
  it('French: a determiner and its collocation, the elided article, the head of a run-on', () => {
    const hausse = {
      title: 'Hausse vide en fin de saison',
      category: '',
      tags: ['miellée'],
      text: "J'ai posé une hausse vide sur la ruche. La hausse vide est restée propre.",
    };
    // "hausse vide": the title's opening words and twice after a determiner; on a tie the one with its determiner.
    expect(keyPhrase(hausse, FRENCH)).toEqual({ det: 'une', words: 'hausse vide', plural: false });
    expect(templateQuestion('key-phrase', hausse, FRENCH, first)).toBe('Des conseils sur une hausse vide ?');
    expect(templateQuestion('tag-phrase', hausse, FRENCH, first)).toBe(
      'Question miellée : des conseils sur une hausse vide ?',
    );
    // "L’essaim": the elided article split off ("l'" + "essaim", said in the title too).
    expect(
      templateQuestion(
        'key-phrase',
        { title: 'Départ d’essaim', category: '', tags: [], text: 'L’essaim est parti hier.' },
        FRENCH,
        () => 0.9,
      ),
    ).toBe("Comment vous y prenez-vous avec l'essaim ?");
    // "la reine pond" runs on into a verb: the word the post says twice stays.
    expect(
      keyPhrase({ title: 'Bonjour', category: '', tags: [], text: 'La reine pond encore. Ma reine va bien.' }, FRENCH),
    ).toEqual({ det: 'la', words: 'reine', plural: false });
  });
});
