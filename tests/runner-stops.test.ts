/**
 * A run against services that cannot answer stops early and says why once, its ledger intact
 * and resumable: a closed port fails the check before the first case (exit 2, no ledger); a
 * server that hangs is stopped by the per-request timeout and the circuit breaker after
 * `circuit_breaker` cases; a 401 stops the run at the first case (one message, not one error per
 * case); the resume against a healthy server asks exactly the cases that have no result.
 * Before, every case failed on its own (222 s of errors on a closed port, 315 s per question
 * on a hanging server) and the run "completed" with one error per case.
 *
 * The generator is the real OpenAI-compatible client against a local server. The fault of each
 * failure (src/errors.ts ProviderFault) is the client's to say; `classified` passes it through and,
 * where the client does not say, names it as the contract does (no HTTP status: connection; 401: auth).
 */
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { ProviderError, type ProviderFault } from '../src/errors.js';
import type { ChatModel } from '../src/llm/types.js';
import { buildAuditSetup } from '../src/wiring/audit-setup.js';
import { runAudit } from '../src/runs/audit-run.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';
import { Ledger } from '../src/store/ledger.js';
import { createRemoteChatModel } from '../src/wiring/providers.js';
import { chatServer, REPO, removeWorkDirs, workDir } from './fixtures/audit/harness.js';
import { CHAT } from './servers/openai-server.js';
import { hang, status } from './servers/provider-server.js';

const CASES = loadCases([join(REPO, 'cases', 'demo', 'questions-core.yml')]).slice(0, 8);
const KEY = 'sk-test-stops-0123456789';

/** The client's errors with their fault (the client's own, or named per the ProviderFault contract). */
function classified(inner: ChatModel, counter: { preflights: number }): ChatModel {
  const fault = (e: unknown): unknown => {
    if (!(e instanceof ProviderError) || e.details.fault) return e;
    const f: ProviderFault =
      e.details.status === undefined
        ? 'connection'
        : e.details.status === 401 || e.details.status === 403
          ? 'auth'
          : e.details.status >= 500
            ? 'server'
            : 'client';
    return new ProviderError(e.message, { ...e.details, fault: f });
  };
  return {
    id: inner.id,
    offline: false,
    complete: async (req) => {
      try {
        return await inner.complete(req);
      } catch (e) {
        throw fault(e);
      }
    },
    preflight: async () => {
      counter.preflights++;
      try {
        await (inner.preflight
          ? inner.preflight()
          : inner.complete({ system: 'ping', messages: [{ role: 'user', content: 'ping' }], maxTokens: 1 }));
      } catch (e) {
        throw fault(e);
      }
    },
  };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('runs that meet services that cannot answer', { timeout: 120_000 }, () => {
  let dir: string;
  let ctx: RunContext;
  let mode: 'hang' | 'unauthorized' | 'healthy' = 'healthy';
  let preflightPasses = 0;
  const chat = chatServer({
    override: (req) => {
      // The check before the first case is a one-token ping: answer it, so the faults below meet the cases.
      if (
        (req.body as { messages: { content: string }[] }).messages.some((m) => m.content === 'ping') &&
        preflightPasses-- > 0
      )
        return undefined;
      if (mode === 'hang') return hang();
      if (mode === 'unauthorized')
        return status(401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } });
      return undefined;
    },
  });
  let url: string;
  let close: () => Promise<void>;
  const generator = (base: string, counter = { preflights: 0 }) =>
    classified(
      createRemoteChatModel(
        {
          provider: 'openai',
          model: 'test-model',
          base_url: `${base}/v1`,
          api_key: KEY,
          timeout_ms: 400,
          retries: 0,
          max_retry_after_ms: 1000,
        },
        {},
      ),
      counter,
    );
  const questions = () =>
    chat
      .requestsTo(CHAT)
      .map((r) => (r.body as { messages: { role: string; content: string }[] }).messages.at(-1)!.content)
      .filter((q) => q !== 'ping');

  beforeAll(async () => {
    ({ url, close } = await chat.start());
    dir = workDir('stops');
    const loaded = loadConfig(undefined, {});
    loaded.config.circuit_breaker = 3;
    loaded.config.generator.concurrency = 1;
    ctx = await createRunContext(loaded, { env: {}, cwd: dir });
  });
  afterAll(async () => {
    await ctx?.close();
    await close?.();
    removeWorkDirs();
  });

  it('a closed port fails the check before the first case: exit 2, no case asked, no ledger', async () => {
    const out = join(dir, 'closed');
    const counter = { preflights: 0 };
    const { deps } = buildAuditSetup(ctx, {});
    const err = await runAudit(
      { ...deps, generator: generator(`http://127.0.0.1:${await closedPort()}`, counter) },
      CASES,
      [],
      { outputDir: out },
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 2 });
    expect((err as Error).message).toMatch(
      /^cannot start: a service cannot be used \(checked before the first case\)\n {2}generator openai:test-model: /,
    );
    expect(counter.preflights).toBe(1);
    expect(existsSync(out)).toBe(false);
  });

  it('a hanging server: each case ends at timeout_ms, the breaker stops the run after 3, resumable', async () => {
    const out = join(dir, 'hang');
    mode = 'hang';
    preflightPasses = 1;
    chat.reset();
    const { deps } = buildAuditSetup(ctx, {});
    let ledgerFile = '';
    const err = await runAudit({ ...deps, generator: generator(url) }, CASES, [], {
      outputDir: out,
      onLedger: (f) => (ledgerFile = f),
    }).catch((e: unknown) => e);
    // Three cases asked (one request each, retries 0), then no more.
    expect(questions()).toEqual(CASES.slice(0, 3).map((c) => c.value.question));
    expect(err).toMatchObject({ exitCode: 1 });
    const message = (err as Error).message;
    expect(message).toMatch(
      /^run stopped: 3 cases in a row could not reach a service \(circuit_breaker: 3\); the last: /,
    );
    expect(message).toContain(`--resume ${ledgerFile}`);
    expect(message).not.toContain(KEY);
    // The ledger reads back: two error records; the case that tripped the breaker is no result.
    const ledger = Ledger.open(ledgerFile);
    expect(
      [...ledger.done.keys()].map((id) => ledger.record(id)!).map((r) => [r.id, r.status, r.error?.stage]),
    ).toEqual(CASES.slice(0, 2).map((c) => [c.value.id, 'error', 'generation']));

    // Against a healthy server, the resume asks every case without a result, each once, and nothing else.
    mode = 'healthy';
    chat.reset();
    const { result } = await runAudit({ ...deps, generator: generator(url) }, CASES, [], {
      outputDir: out,
      resume: ledgerFile,
    });
    expect(questions().sort()).toEqual(CASES.map((c) => c.value.question).sort());
    expect(result.cases.map((c) => c.status)).toEqual(CASES.map(() => 'ok'));
    expect(readdirSync(out).filter((f) => f.endsWith('.ledger.jsonl'))).toHaveLength(1);
  });

  it('a 401 stops the run at once with one message, not one error per case', async () => {
    const out = join(dir, 'unauthorized');
    mode = 'unauthorized';
    preflightPasses = 1;
    chat.reset();
    const { deps } = buildAuditSetup(ctx, {});
    let ledgerFile = '';
    const err = await runAudit({ ...deps, generator: generator(url) }, CASES, [], {
      outputDir: out,
      onLedger: (f) => (ledgerFile = f),
    }).catch((e: unknown) => e);
    expect(questions()).toHaveLength(1);
    expect(err).toMatchObject({ exitCode: 1 });
    expect((err as Error).message).toMatch(
      /^run stopped: openai: 401 Unauthorized .*\(every later request would fail the same way\)\n0 of 8 cases are finished/,
    );
    expect(Ledger.open(ledgerFile).done.size).toBe(0);
  });
});
