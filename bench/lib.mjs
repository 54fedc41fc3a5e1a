// What several benchmarks share: synthetic cases and the retrieval graphs they run.

const TOPICS = [
  'suede',
  'welt',
  'last',
  'polish',
  'resole',
  'cordovan',
  'trees',
  'heel',
  'laces',
  'insole',
  'calf',
  'creasing',
];
const VERBS = ['clean', 'store', 'repair', 'stretch', 'protect', 'choose', 'size', 'condition'];

/** N distinct questions (distinct text, so no two share a cache key). */
export function casesYaml(n) {
  let out = '';
  for (let i = 0; i < n; i++) {
    const t = TOPICS[i % TOPICS.length];
    const v = VERBS[Math.floor(i / TOPICS.length) % VERBS.length];
    out += `- id: bench-${String(i).padStart(4, '0')}\n  question: "How should I ${v} the ${t} of my shoes? (bench question ${i})"\n  expected_topic_ids: [100]\n`;
  }
  return out;
}

export const GRAPHS = {
  light:
    'retrieval:\n  channels:\n    - { name: keyword, kind: keyword, grain: post }\nrerank: { node: keyword, provider: offline, model: lexical }\n',
  demo:
    'retrieval:\n  channels:\n    - { name: posts, kind: semantic, grain: post }\n    - { name: semantic, kind: semantic, grain: topic }\n' +
    '    - { name: keyword, kind: keyword, grain: topic }\n  fusions:\n    - { name: hybrid, kind: rrf, inputs: [semantic, keyword] }\n' +
    '    - { name: rrf_posts_hybrid, kind: rrf, inputs: [posts, hybrid] }\nrerank: { node: posts, provider: offline, model: lexical }\n',
};

/**
 * Drops and creates database `name` on the server of `adminUrl` (a lowercase identifier, checked),
 * and returns the new database's URL.
 */
export async function recreateDatabase(adminUrl, name) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error('--db: a lowercase identifier');
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}
