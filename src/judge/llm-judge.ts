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
import { criteria } from './criteria/index.js';
import type { Criterion } from './criteria/types.js';
import type { Judge, JudgeOutcome } from './schemas.js';

/** The judge prompts in prompts/, by verdict (the registry's criteria, src/judge/criteria/). */
export function judgePrompts(): Record<string, string> {
  return Object.fromEntries(criteria().map((c) => [c.name, c.prompt]));
}

/** Prompt name → version of every judge prompt (goes into cache keys and results). */
export function judgePromptVersions(promptsDir: string): Record<string, string> {
  return Object.fromEntries(criteria().map((c) => [c.prompt, loadPrompt(promptsDir, c.prompt).version]));
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

  verdict<V, Q>(c: Criterion<V, Q>, asked: Q): Promise<JudgeOutcome<V>> {
    return this.ask(c.prompt, c.vars(asked), c.schema, c.check && ((v: V) => c.check!(v, asked)));
  }
}
