/**
 * The YAML of a mined case file: the same format as the curated sets (cases/demo/questions-*.yml),
 * a header comment saying how the file was made, one case per item, id lists and tags in flow
 * style, and a comment above a case whose golden is ambiguous giving the full count.
 */
import { Document, isMap, isScalar, isSeq, visit } from 'yaml';
import type { Mined } from '../cases/schema.js';

/** The first line of every mined file: how `ragaudit mine` knows a file it may overwrite. */
export const MINED_FILE_MARK = '# Written by ragaudit mine';

/** One mined case as written (the fields of CaseSchema a mined case uses, in the curated files' order). */
export interface MinedCase {
  id: string;
  question: string;
  source: 'mined';
  mined: Mined;
  kind: 'in_domain';
  expected_topic_ids: number[];
  expected_post_ids?: number[];
  tags: string[];
}

/** The file's text: header lines (without `#`) as a comment, then the cases; `notes` are comments above cases by id. */
export function minedYaml(
  header: readonly string[],
  cases: readonly MinedCase[],
  notes: ReadonlyMap<string, string>,
): string {
  const doc = new Document(cases.map((c) => ({ ...c })));
  visit(doc, {
    Seq(_, node) {
      if (node.items.every((i) => isScalar(i))) node.flow = true;
    },
  });
  if (isSeq(doc.contents))
    doc.contents.items.forEach((item, i) => {
      if (!isMap(item)) return;
      if (i > 0) item.spaceBefore = true;
      const q = item.get('question', true);
      if (isScalar(q)) q.type = 'QUOTE_DOUBLE';
      const note = notes.get(cases[i]!.id);
      if (note)
        item.commentBefore = note
          .split('\n')
          .map((l) => ` ${l}`)
          .join('\n');
    });
  const head = [`${MINED_FILE_MARK} (docs/mining.md).`, ...header.map((l) => (l ? `# ${l}` : '#'))].join('\n');
  const body = doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  return `${head}\n\n${body}`;
}
