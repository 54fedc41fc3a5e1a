import { evaluateTrecFiles } from '../app/trec.js';
import { InputError } from '../errors.js';
import { DEFAULT_TREC_MEASURES, parseTrecMeasures } from '../scoring/trec.js';
import type { Command } from './command.js';
import { optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  'per-query': { type: 'boolean', short: 'q', doc: "also print each query's values (before the 'all' lines)" },
  complete: {
    type: 'boolean',
    short: 'c',
    doc: `average over every query in QRELS; queries missing from RUN score 0
(default: only queries in both files; RUN queries absent from QRELS
are always ignored)`,
  },
  'max-retrieved': {
    type: 'string',
    short: 'M',
    value: 'N',
    doc: "evaluate only each query's first N results, after ranking (trec_eval -M)",
  },
  measure: {
    type: 'string',
    short: 'm',
    multiple: true,
    value: 'M',
    doc: 'a measure to print; repeat for several. Cutoff lists: P.5,10',
  },
  help: { type: 'boolean', short: 'h', doc: 'this text' },
} as const satisfies OptionSpecs;

const HELP = `Usage: ragaudit trec QRELS RUN [-q] [-c] [-M N] [-m MEASURE]...

Evaluate a TREC run against relevance judgements with trec_eval's semantics, and print
trec_eval's report (measure, qid, value separated by tabs).

Files:
  QRELS   lines 'qid iter docno rel' (rel: integer grade; relevant means rel >= 1)
  RUN     lines 'qid Q0 docno rank score tag' (the rank column is ignored)
  Blank lines and lines starting with '#' are skipped; a malformed line, or a docno twice
  in one query, is an error naming file:line.

Options:
${optionsHelp(OPTIONS, 26)}

Measures (printed in trec_eval's order: num_q, recip_rank, P, recall, ndcg_cut, success):
  num_q          number of queries averaged over
  recip_rank     1 / rank of the first relevant result (no cutoff), 0 if none
  P.K            relevant in the top K, divided by K (even if fewer were returned)
  recall.K       relevant in the top K / relevant judged for the query (0 if none)
  ndcg_cut.K     nDCG at K: gain = grade, discount log2(rank + 1), ideal = the query's
                 grades sorted descending, cut at K; 0 if the query has no relevant doc
  success.K      1 if a relevant result is in the top K
  Without cutoffs, P, recall and ndcg_cut use 5,10,15,20,30,100,200,500,1000 and success
  1,5,10, as trec_eval does.
  Default: ${DEFAULT_TREC_MEASURES.map((m) => `-m ${m}`).join(' ')}

Ranking: by score descending, ties broken by docno descending (byte order), as trec_eval;
-M N then keeps each query's first N (a docno twice past them is not checked, as trec_eval).
A query whose judgements are all 0 is evaluated (and scores 0).

A query none of whose results (within -M) is in its qrels scores 0 whatever its ranking:
their count is a warning on stderr. When no result of the whole run is in the qrels, the
files do not belong together (other docnos or query ids): the report is printed and the
exit code is 1.
`;

/** -M N: a whole number from 1 (trec_eval reads any integer; 0 or less would evaluate nothing). */
function maxRetrievedFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InputError(`trec: -M ${value}: expected a whole number of results per query, at least 1`);
  return Number(value);
}

/** `ragaudit trec QRELS RUN`: trec_eval-compatible evaluation of a run. */
export const trecCommand: Command = {
  name: 'trec',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('trec', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(HELP);
      return 0;
    }
    if (positionals.length !== 2) {
      throw new InputError(
        `trec: expected QRELS and RUN files, got ${positionals.length} argument(s) (see 'ragaudit trec --help')`,
      );
    }
    const measures = values.measure ?? [];
    parseTrecMeasures(measures); // a bad -m fails before the files are read
    const maxRetrieved = maxRetrievedFlag(values['max-retrieved']);
    const [qrels, run] = positionals as [string, string];
    const { report, coverage } = await evaluateTrecFiles({
      cwd: io.cwd,
      qrels,
      run,
      measures,
      complete: values.complete === true,
      perQuery: values['per-query'] === true,
      ...(maxRetrieved !== undefined ? { maxRetrieved } : {}),
    });
    for (const text of report) io.out(text);
    if (coverage.judgedRetrieved === 0) {
      io.err(
        `trec: no result of ${run} is in ${qrels}, so every figure is 0: check that both files use the same docnos and query ids\n`,
      );
      return 1;
    }
    if (coverage.unjudgedQueries > 0)
      io.err(
        `warning: ${coverage.unjudgedQueries} of ${coverage.queries} evaluated queries retrieve no document that ${qrels} judges for them (they score 0)\n`,
      );
    return 0;
  },
};
