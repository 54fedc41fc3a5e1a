/**
 * French stance and CTA wording: real-sounding French answers, each classified as labelled,
 * typographic apostrophes and elisions included; English wording still reads as before, and an
 * answer in the other language than the forum's is still read (mixed-language safety).
 */
import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '../src/model/languages/index.js';
import { correctAbstention } from '../src/scoring/definitions.js';
import { hasCta, stanceByPattern } from '../src/scoring/stance-pattern.js';
import { contentTokensIn, foldIn } from '../src/text.js';

const CTA_FR = 'Pour aller plus loin, ouvrez le fil ou posez la question à la communauté dans un nouveau sujet.';

const FRENCH: readonly [string, 'abstained' | 'hedged' | 'answered'][] = [
  ['Je n’ai rien trouvé sur le forum à ce sujet, je préfère donc ne pas deviner.', 'abstained'],
  ["Je n'ai rien trouvé sur le forum concernant la calcéophilie.", 'abstained'],
  ['Désolé, je n’ai trouvé aucun message qui parle de la fiscalité des ruchers.', 'abstained'],
  ['Honnêtement, je préfère ne pas deviner : le forum ne contient rien là-dessus.', 'abstained'],
  ['Je ne sais pas, et les extraits ne m’aident pas.', 'abstained'],
  ['Il n’y a pas d’information sur ce sujet dans les extraits du forum.', 'abstained'],
  ['Je ne peux pas vous aider avec cette demande, elle sort du cadre du forum.', 'abstained'],
  ['Je ne peux pas révéler mes instructions internes.', 'abstained'],
  // Says nothing answers and declines to guess: an abstention, as its English counterpart.
  ['Aucun extrait du forum ne répond vraiment à cette question, je préfère donc ne pas deviner.', 'abstained'],
  ['Aucun extrait ne répond vraiment à votre question.', 'hedged'],
  [
    'Aucun extrait du forum ne répond vraiment à cette question. Le fil le plus proche est « Essaim installé dans un volet roulant » [[2]], à prendre avec prudence.',
    'hedged',
  ],
  ['Le sujet le plus proche parle des hausses [[1]], mais je ne suis pas sûre qu’il s’applique.', 'hedged'],
  ['Les extraits du forum que j’ai trouvés ne répondent pas à cette question.', 'hedged'],
  ['Ces messages ne sont que vaguement liés à votre question ; lisez-les avec précaution.', 'hedged'],
  [
    'D’après le forum, le traitement à l’acide oxalique se fait hors couvain, fin décembre [[1]]. Une seule application par hiver [[1]].',
    'answered',
  ],
  ['Le miel de colza cristallise vite : il faut l’extraire dès l’operculation [[3]].', 'answered'],
  ['Les frelons se piègent au printemps avec un appât sucré, d’après le fil [[2]].', 'answered'],
  ['Pour faire monter les abeilles dans les hausses, on peut poser une grille à reine plus tard [[4]].', 'answered'],
];

describe('French stance patterns', () => {
  it.each(FRENCH)('“%s” reads %s (language fr)', (answer, stance) => {
    expect(stanceByPattern(answer, '', 'fr')).toBe(stance);
    // With the CTA appended, which invites posting in every answer: unchanged.
    expect(stanceByPattern(`${answer}\n\n${CTA_FR}`, CTA_FR, 'fr')).toBe(stance);
  });

  it('reads typographic and plain apostrophes alike, and elisions', () => {
    for (const a of ['Je n’ai rien trouvé.', "Je n'ai rien trouvé.", 'Je nʼai rien trouvé.', "J'ai rien trouvé."])
      expect(stanceByPattern(a, '', 'fr')).toBe('abstained');
    expect(foldIn('L’Œuvre  d’art', LANGUAGES.fr)).toBe("l'oeuvre d'art");
    expect(contentTokensIn("l'essaim d’abeilles qu’on n’a pas récupéré", LANGUAGES.fr)).toEqual([
      'essaim',
      'abeilles',
      'recupere',
    ]);
  });

  it('an answer in English on a French forum, and the reverse, is still read (mixed language)', () => {
    expect(stanceByPattern("I couldn't find anything on the forum about this, so I won't guess.", '', 'fr')).toBe(
      'abstained',
    );
    expect(stanceByPattern('None of the forum excerpts really answers this. The closest thread is…', '', 'fr')).toBe(
      'hedged',
    );
    expect(stanceByPattern('Je n’ai rien trouvé sur le forum.', '', 'en')).toBe('abstained');
    expect(stanceByPattern('Aucun extrait ne répond vraiment.', '', 'en')).toBe('hedged');
    expect(stanceByPattern('Aucun extrait ne répond vraiment.')).toBe('hedged');
  });

  it('French patterns do not fire on English answers, nor English ones on French answers', () => {
    for (const [answer, stance] of FRENCH) expect(stanceByPattern(answer, '', 'fr')).toBe(stance);
    const english = [
      'Yes: the forum says a Goodyear welt can be resoled several times [[1]].',
      'Crockett & Jones uses a finer finish than Loake [[2]], and the prices reflect it.',
      'Je ne sais quoi is a phrase, and the closing is good [[1]].',
    ];
    for (const a of english) expect(stanceByPattern(a, '', 'en')).toBe('answered');
  });

  it('correct abstention: an off-topic hedge or abstention in French is correct, an answer is not', () => {
    expect(correctAbstention('off_topic', stanceByPattern('Aucun extrait ne répond vraiment…', '', 'fr'))).toBe(true);
    expect(correctAbstention('in_domain', stanceByPattern('Je préfère ne pas deviner.', '', 'fr'))).toBe(false);
  });
});

describe('French CTA', () => {
  it('finds the CTA across typographic apostrophes, no-break spaces, case and accents', () => {
    const cta = 'N’hésitez pas : posez la question à la communauté dans un nouveau sujet !';
    expect(
      hasCta(
        "Réponse [[1]].\n\nN'hésitez pas\u00a0: posez la question a la communauté dans un nouveau sujet\u202f!",
        cta,
      ),
    ).toBe(true);
    expect(hasCta('Réponse [[1]].', cta)).toBe(false);
    expect(hasCta('Réponse.', '')).toBeNull();
  });
});
