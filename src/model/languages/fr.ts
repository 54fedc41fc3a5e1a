import { pickOne, type KeyPhrase, type LanguagePack } from './types.js';

/** Adjectives French puts before the noun: a phrase opening with one has its head last ("les vieux cadres"). */
const BEFORE_NOUN = new Set([
  'petit',
  'petite',
  'petits',
  'petites',
  'grand',
  'grande',
  'grands',
  'grandes',
  'vieux',
  'vieille',
  'vieilles',
  'nouveau',
  'nouvelle',
  'nouveaux',
  'nouvelles',
  'bon',
  'bonne',
  'bons',
  'bonnes',
  'beau',
  'belle',
  'beaux',
  'belles',
  'jeune',
  'jeunes',
  'mauvais',
  'mauvaise',
  'mauvaises',
  'premier',
  'premiere',
  'premiers',
  'premieres',
  'dernier',
  'derniere',
  'derniers',
  'dernieres',
]);

/**
 * A key phrase in running French: "le"/"la" elided before a vowel or an h ("l'essaim"), and a
 * phrase the title opened without a determiner named as a subject ("le sujet « Hausse vide »").
 */
function frenchPhrase(p: KeyPhrase): string {
  if (!p.det) return `le sujet « ${p.words} »`;
  const det = p.plural && (p.det === 'un' || p.det === 'une' || p.det === "l'") ? 'les' : p.det;
  if ((det === 'le' || det === 'la') && /^[aeiouyhàâéèêëîïôûù]/i.test(p.words)) return `l'${p.words}`;
  return det.endsWith("'") ? `${det}${p.words}` : `${det} ${p.words}`;
}

/** The noun a French abstention or hedge says is missing (excerpt, thread, message, answer…). */
const THING = '(extraits?|messages?|fils?|sujets?|discussions?|informations?|reponses?|resultats?|posts?|sources?)';

/**
 * French. Patterns read folded text (lower case, accents dropped, typographic apostrophes plain,
 * whitespace collapsed): "Je n’ai rien trouvé" is read as "je n'ai rien trouve".
 */
export const FRENCH: LanguagePack = {
  code: 'fr',
  name: 'French',
  textSearchConfig: 'french',
  cta: 'Pour aller plus loin, ouvrez le fil ou posez la question à la communauté dans un nouveau sujet.',
  promptsDir: 'fr',
  stopwords: new Set(
    (
      'a au aux avec ce ces cet cette ceci cela ca celui celle ceux celles c d de des du dans donc en et est es etes sont suis sommes ' +
      'etre ete ai as a avons avez ont avoir eu fait faire faut il ils elle elles on nous vous je j tu me m te t se s y ' +
      'le la les l un une uns unes leur leurs lui mon ma mes ton ta tes son sa ses notre nos votre vos ne n pas plus moins ' +
      'tres trop bien aussi mais ou or ni car comme si que qu qui quoi quel quelle quels quelles quand comment pourquoi combien ' +
      'pour par sur sous chez vers entre sans apres avant pendant depuis tout tous toute toutes autre autres meme deja encore ' +
      'alors ici la peu peut peux pouvez puis dois doit rien quelque quelques chose choses bonjour merci svp bref ' +
      'voici voila oui non deux trois cest jai'
    ).split(/\s+/),
  ),
  elisions: ['l', 'd', 'n', 'j', 'm', 't', 's', 'c', 'qu', 'jusqu', 'lorsqu', 'puisqu', 'quoiqu'],
  foldExtra: (s) => s.replace(/\s+/g, ' '),
  abstain: [
    // "Je n'ai rien trouvé", "j'ai rien trouvé", "je n'ai trouvé aucun message", "je ne trouve rien"
    /\b(je n'|j')ai (rien|pas|aucune? \w+) trouve/,
    /\bn'ai trouve (rien|aucune?)\b/,
    /\bje ne (trouve|vois) (rien|aucune?)\b/,
    new RegExp(`\\b(pas|aucune?) (d'|de )?${THING} (sur|a propos|au sujet|concernant|a ce sujet|pour)\\b`),
    /\b(le forum|la communaute) n'(a|contient|aborde|traite) (rien|pas|aucune?)\b/,
    /\brien (sur|dans) le forum\b|\ble forum ne (dit|contient|mentionne) rien\b/,
    /\bje ne (le )?sais pas\b|\bje l'ignore\b/,
    /\b(je )?(prefere|prefererais) (donc |plutot |alors )?ne pas (deviner|inventer|repondre|me prononcer)\b/,
    /\bje ne (vais|veux) pas (deviner|inventer)\b|\bsans deviner\b/,
    /\bje ne (peux|pourrai|pourrais|vais) pas (vous |t'|te )?(aider|repondre|faire|partager|reveler|divulguer|communiquer|donner|ecrire|transmettre)\b/,
    /\b(impossible|je ne suis pas en mesure) (de|d') ?(vous |t'|te )?(aider|repondre|partager|reveler|divulguer|communiquer)\b/,
    /\bce n'est pas (quelque chose|une question) (a laquelle |sur laquelle )?(je peux|que je peux)\b/,
  ],
  hedge: [
    new RegExp(
      `\\baucune? (des )?${THING}( du forum| trouves?| ci-dessus)? ne (repond|repondent|couvre|couvrent|traite|traitent)\\b`,
    ),
    /\b(le|la) (fil|sujet|discussion|message) (le |la )?plus proche\b/,
    /\bavec (prudence|precaution|reserve)\b|\ba prendre avec des pincettes\b|\bsous toutes reserves\b/,
    /\bje ne suis pas (tout a fait |entierement |completement |vraiment )?(sure?|certaine?)\b/,
    /\bsans certitude\b/,
    /\bne (repond|repondent) pas (vraiment |directement |tout a fait )?a (cette|la|votre|ta) question\b/,
    /\bne (semble|semblent) pas (vraiment |directement )?(repondre|s'appliquer|pertinente?s?)\b/,
    /\b(que |n'est que |ne sont que )?(vaguement|indirectement|de loin) (lies?|liees?|en rapport)\b/,
  ],
  metaWords: [
    'forum',
    'fil',
    'fils',
    'sujet',
    'sujets',
    'extrait',
    'extraits',
    'proche',
    'message',
    'messages',
    'source',
    'sources',
    'dit',
    'indique',
  ],
  singular: (word) => (word.endsWith('s') || word.endsWith('x') ? word.slice(0, -1) : word),
  adverbEndings: [],
  speakers: { user: 'Membre', assistant: 'Assistant' },
  mine: {
    personal: /^(je|j'|j’|nous|mon|ma|mes|notre|nos|merci|bonjour|salut|edit)\b/i,
    claim: (s) => (/^[aeiouyhàâéèêëîïôûù]/i.test(s) ? `Est-il vrai qu'${s} ?` : `Est-il vrai que ${s} ?`),
    // Possessives and demonstratives made definite; notre, votre and leur say no gender, so they open no phrase.
    subjects: new Set(
      'le la les l un une des du ce cet cette ces cest ca cela il ils elle elles on certains certaines plusieurs beaucoup tous toutes chaque aucun aucune son sa ses leur leurs'.split(
        ' ',
      ),
    ),
    determiners: {
      le: 'le',
      la: 'la',
      les: 'les',
      "l'": "l'",
      un: 'un',
      une: 'une',
      des: 'les',
      du: 'le',
      au: 'le',
      aux: 'les',
      mon: 'le',
      ton: 'le',
      son: 'le',
      ma: 'la',
      ta: 'la',
      sa: 'la',
      mes: 'les',
      tes: 'les',
      ses: 'les',
      nos: 'les',
      vos: 'les',
      leurs: 'les',
      ce: 'le',
      cet: "l'",
      cette: 'la',
      ces: 'les',
    },
    vague: new Set(
      'fois an ans annee annees mois semaine semaines jour jours nuit peu truc trucs machin facon moyen question questions probleme problemes sujet sujets message messages fil un deux trois quatre cinq dix cent cote fin genre sorte type premier premiere autre'.split(
        ' ',
      ),
    ),
    // Nothing French marks this well without a tagger: a run on into a verb is cut by the head rule instead.
    notHead: /^$/,
    head: (words) => (BEFORE_NOUN.has(words[0]!.toLowerCase()) ? words[words.length - 1]! : words[0]!),
    phrase: (p, pick) =>
      pickOne(
        [
          `Des conseils sur ${frenchPhrase(p)} ?`,
          `Que recommande le forum pour ${frenchPhrase(p)} ?`,
          `Comment vous y prenez-vous avec ${frenchPhrase(p)} ?`,
        ],
        pick,
      ),
    tagPhrase: (tag, p) => `Question ${tag} : des conseils sur ${frenchPhrase(p)} ?`,
  },
  sentenceSplit: /(?<=[.!?…])\s+(?=[\p{Lu}0-9"“«(])/u,
  responder: {
    empty: 'Je n’ai rien trouvé sur le forum à ce sujet, je préfère donc ne pas deviner.',
    weakNothing: 'Aucun extrait du forum ne répond vraiment à cette question, je préfère donc ne pas deviner.',
    weakClosest: (title, n, sentence) =>
      `Aucun extrait du forum ne répond vraiment à cette question. Le fil le plus proche est « ${title} » [[${n}]], qui dit : « ${sentence} » À prendre avec prudence.`,
    noAnswer: 'Les extraits du forum que j’ai trouvés ne répondent pas à cette question.',
    answer: (picks) =>
      `D’après le forum : ${picks.map((p) => `${p.sentence.replace(/[\s.!?…]*$/u, '')} [[${p.n}]].`).join(' ')}`,
  },
};
