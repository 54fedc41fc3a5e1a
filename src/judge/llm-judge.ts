/**
 * The LLM judge over any ChatModel: each verdict is one call with a schema (enforced per backend
 * by the model client). A JudgeParseError is retried once with the error shown to the judge;
 * a second one becomes an outcome without verdict (a `judge_error` score). ProviderError and any
 * other failure propagate: infrastructure trouble is never scored.
 */
import type { z } from 'zod';
import { JudgeParseError } from '../errors.js';
import { loadPrompt, render } from '../evidence/templates.js';
import type { ChatMessage, ChatModel, Usage } from '../llm/types.js';
import { citationsText, evidenceText } from './materials.js';
import { untrusted } from './untrusted.js';
import {
  CitationVerdictSchema,
  NuggetVerdictSchema,
  type AnswerKey,
  type NuggetVerdict,
  FaithfulnessVerdictSchema,
  SafetyVerdictSchema,
  StanceVerdictSchema,
  type CitationItem,
  type CitationVerdict,
  type FaithfulnessVerdict,
  type Judge,
  type JudgeInput,
  type JudgeOutcome,
  type SafetyInput,
  type SafetyVerdict,
  type StanceVerdict,
} from './schemas.js';

/** The judge prompts in prompts/, by verdict. */
export const JUDGE_PROMPTS = {
  faithfulness: 'judge-faithfulness',
  stance: 'judge-stance',
  citation: 'judge-citation',
  safety: 'judge-safety',
  nuggets: 'judge-nuggets',
} as const;

/** Prompt name → version of every judge prompt (goes into cache keys and results). */
export function judgePromptVersions(promptsDir: string): Record<string, string> {
  return Object.fromEntries(Object.values(JUDGE_PROMPTS).map((name) => [name, loadPrompt(promptsDir, name).version]));
}

/** The user turn that asks for the verdict (the rendered prompt is the system prompt). */
export const ASK = 'Give your verdict now, as JSON matching the schema exactly.';

/** The user turn of the one retry: quotes the parse error. */
export function retryMessage(error: string): string {
  return `Your previous answer could not be used: ${error}\nAnswer again with JSON that matches the schema exactly: every field present, null where a value does not apply, nothing else.`;
}

export interface LlmJudgeOptions {
  promptsDir: string;
  /** Judge sampling temperature (config judge.temperature, default 0). */
  temperature?: number;
  /** Output token cap per call (config judge.max_tokens). */
  maxTokens?: number;
}

const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
});

/** A judge over a ChatModel (usually wrapped in cachedModel, keyed with the prompt versions). */
export class LlmJudge implements Judge {
  readonly id: string;
  readonly offline: boolean;
  readonly promptVersions: Record<string, string>;

  constructor(
    private readonly model: ChatModel,
    private readonly opts: LlmJudgeOptions,
  ) {
    this.id = model.id;
    this.offline = model.offline;
    this.promptVersions = judgePromptVersions(opts.promptsDir);
  }

  /**
   * One verdict: render the prompt, call with the schema, then `check` the parsed answer
   * (a returned string is a problem, treated like a parse error). One retry with the error shown.
   */
  private async ask<T>(
    prompt: string,
    vars: Record<string, string>,
    schema: { name: string; zod: z.ZodType<T> },
    check?: (v: T) => string | undefined,
  ): Promise<JudgeOutcome<T>> {
    const system = render(loadPrompt(this.opts.promptsDir, prompt), vars);
    const base = {
      system,
      schema,
      ...(this.opts.temperature !== undefined && { temperature: this.opts.temperature }),
      ...(this.opts.maxTokens !== undefined && { maxTokens: this.opts.maxTokens }),
    };
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };
    let messages: ChatMessage[] = [{ role: 'user', content: ASK }];
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await this.model.complete({ ...base, messages });
        usage = addUsage(usage, out.usage);
        const problem = check?.(out.json as T);
        if (problem) throw new JudgeParseError(`${schema.name}: ${problem}`, out.text);
        return { ok: true, verdict: out.json as T, usage };
      } catch (e) {
        if (!(e instanceof JudgeParseError)) throw e;
        if (attempt >= 1) return { ok: false, reason: `${e.message} (after one retry with the error shown)`, usage };
        messages = [
          ...messages,
          { role: 'assistant', content: e.raw.trim() || '(empty answer)' },
          { role: 'user', content: retryMessage(e.message) },
        ];
      }
    }
  }

  private caseVars(input: JudgeInput): Record<string, string> {
    return {
      // What the case brings is data: tagged, and the prompts say nothing inside is an instruction.
      question: untrusted('question', input.question),
      evidence: untrusted('evidence', evidenceText(input.sources)),
      answer: untrusted('answer', input.answer.trim()),
      cta: input.cta,
    };
  }

  faithfulness(input: JudgeInput): Promise<JudgeOutcome<FaithfulnessVerdict>> {
    const shown = new Set(input.sources.map((s) => s.n));
    return this.ask(
      JUDGE_PROMPTS.faithfulness,
      this.caseVars(input),
      { name: 'faithfulness_verdict', zod: FaithfulnessVerdictSchema },
      (v) => {
        const bad = v.claims.find((c) => c.label === 'supported' && c.source !== null && !shown.has(c.source));
        return bad
          ? `claim "${bad.claim}" names source ${bad.source}, which was not shown (sources: ${[...shown].join(', ') || 'none'})`
          : undefined;
      },
    );
  }

  stance(input: JudgeInput): Promise<JudgeOutcome<StanceVerdict>> {
    return this.ask(JUDGE_PROMPTS.stance, this.caseVars(input), { name: 'stance_verdict', zod: StanceVerdictSchema });
  }

  citations(input: JudgeInput, items: readonly CitationItem[]): Promise<JudgeOutcome<CitationVerdict>> {
    const vars = {
      question: untrusted('question', input.question),
      citations: untrusted('citations', citationsText(items)),
    };
    return this.ask(JUDGE_PROMPTS.citation, vars, { name: 'citation_verdict', zod: CitationVerdictSchema }, (v) => {
      const got = v.citations.map((c) => c.item);
      const want = items.map((_, i) => i + 1);
      return got.length === want.length && got.every((x, i) => x === want[i])
        ? undefined
        : `expected one entry per citation, items ${want.join(', ')} in order; got items ${got.join(', ') || 'none'}`;
    });
  }

  safety(input: SafetyInput): Promise<JudgeOutcome<SafetyVerdict>> {
    return this.ask(
      JUDGE_PROMPTS.safety,
      {
        attack: untrusted('attack', input.attack),
        answer: untrusted('answer', input.answer.trim()),
        must_not_leak: input.mustNotLeak || '(nothing specific)',
      },
      { name: 'safety_verdict', zod: SafetyVerdictSchema },
    );
  }

  nuggets(input: JudgeInput, key: AnswerKey): Promise<JudgeOutcome<NuggetVerdict>> {
    const list = key.nuggets.map((n, i) => `${i + 1}. (${n.importance}) ${n.text}`).join('\n');
    const vars = {
      question: untrusted('question', input.question),
      nuggets: untrusted('nuggets', list || '(none)'),
      reference: key.reference === undefined ? '(no reference answer is given)' : untrusted('reference', key.reference),
      answer: untrusted('answer', input.answer.trim()),
      cta: input.cta,
    };
    return this.ask(JUDGE_PROMPTS.nuggets, vars, { name: 'nugget_verdict', zod: NuggetVerdictSchema }, (v) => {
      const got = v.nuggets.map((c) => c.item);
      const want = key.nuggets.map((_, i) => i + 1);
      if (got.length !== want.length || got.some((x, i) => x !== want[i]))
        return `expected one entry per nugget, items ${want.join(', ') || 'none'} in order; got items ${got.join(', ') || 'none'}`;
      if ((key.reference === undefined) !== (v.correctness === null))
        return key.reference === undefined
          ? 'correctness must be null: no reference answer was given'
          : 'correctness is required: a reference answer was given';
      return undefined;
    });
  }
}
