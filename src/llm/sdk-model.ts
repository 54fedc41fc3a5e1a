/**
 * What the two SDK chat clients (OpenAI-compatible, Anthropic) share: the key and base-URL
 * checks, the lazily loaded SDK client, one call under the request deadline and the retry layer,
 * the preflight target, and the Completion a checked answer becomes. Each client keeps only its
 * wire format: the request body, the answer check, the preflight requests.
 */
import { ConfigError, rememberSecrets } from '../errors.js';
import { REQUEST_DEFAULTS } from '../setting-defaults.js';
import { splitQuery } from './http.js';
import type { PreflightTarget } from './preflight.js';
import { canonicalScope, refuseUrlCredentials, urlSecrets } from './remote.js';
import { timedCall } from './retry.js';
import type { ChatModel, Completion, CompletionRequest, RemoteModelOptions, Usage } from './types.js';

/**
 * The SDK's own timer, set past the request's deadline: withDeadline (http.ts) ends every attempt
 * at `deadlineMs` and aborts the SDK's request, which clears its timer, so that timer never decides.
 * Less than a second past it, so the whole seconds the SDK announces to the server
 * (`X-Stainless-Timeout`) stay the deadline's.
 */
export function sdkTimerMs(deadlineMs: number): number {
  return deadlineMs + 999;
}

/** The options both SDKs' client constructors take from here. */
export interface SdkClientOptions {
  apiKey: string;
  baseURL: string;
  defaultQuery?: Record<string, string>;
  timeout: number;
  maxRetries: number;
}

/** Who a client is: the provider's name, its own API root, its key variable. */
export interface SdkProvider {
  provider: 'openai' | 'anthropic';
  defaultUrl: string;
  keyEnv: string;
  /** The ConfigError message when neither a key nor a base URL is given. */
  missingKey: (id: string) => string;
}

/** What a checked answer carries into its Completion. */
export interface AnswerParts {
  text: string;
  usage: Usage;
  /** The model the server says answered (empty or absent: the configured one). */
  model?: string | null | undefined;
}

/** A Completion from a checked answer: the synchronous clients and the batch clients build it alike. */
export function completionOf<T>(parts: AnswerParts, configuredModel: string, latencyMs: number): Completion<T> {
  return { text: parts.text, usage: parts.usage, latencyMs, model: parts.model || configuredModel };
}

/** A ChatModel over a provider SDK: the SDK never retries (`maxRetries: 0`), withRetry does. */
export abstract class SdkChatModel<
  Client,
  Options extends RemoteModelOptions = RemoteModelOptions,
> implements ChatModel {
  readonly id: string;
  readonly offline = false;
  readonly cacheScope: string;
  /** The base URL without its query string (which goes to the SDK's defaultQuery). */
  protected readonly baseURL: string;
  /** The key sent (a placeholder for local servers, which ignore it but the SDKs insist on one). */
  protected readonly apiKey: string;
  /** The deadline of one attempt, ms: the one the request ends at. */
  protected readonly deadlineMs: number;
  private readonly clientOptions: SdkClientOptions;
  private client?: Promise<Client>;

  constructor(
    protected readonly opts: Options,
    private readonly who: SdkProvider,
    private readonly makeClient: (options: SdkClientOptions) => Promise<Client>,
    scope: Record<string, unknown>,
  ) {
    this.id = `${who.provider}:${opts.model}`;
    // The SDKs append paths to the base URL as a string: a query string (Azure's
    // `?api-version=`) goes to defaultQuery so it stays after the path.
    const { url, query } = splitQuery(opts.baseURL ?? who.defaultUrl);
    this.baseURL = url;
    const key = opts.apiKey;
    if (!key && !opts.baseURL) throw new ConfigError(who.missingKey(this.id));
    refuseUrlCredentials(this.id, url, who.keyEnv);
    // Always an explicit key, so an SDK never goes looking for credential files.
    this.apiKey = key || 'not-needed';
    rememberSecrets([key, ...urlSecrets(opts.baseURL)]);
    this.cacheScope = canonicalScope({ provider: who.provider, baseURL: opts.baseURL ?? who.defaultUrl, ...scope });
    this.deadlineMs = opts.timeoutMs ?? REQUEST_DEFAULTS.timeoutMs;
    this.clientOptions = {
      apiKey: this.apiKey,
      baseURL: this.baseURL,
      ...(Object.keys(query).length > 0 && { defaultQuery: query }),
      timeout: sdkTimerMs(this.deadlineMs),
      maxRetries: 0,
    };
    // The SDK's module starts loading now, while the run opens its database; the first call awaits it.
    this.sdk().catch(() => undefined);
  }

  abstract complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>>;

  /** The SDK client, its module loaded once a client is made (a run on offline stand-ins never loads it). */
  protected sdk(): Promise<Client> {
    this.client ??= this.makeClient(this.clientOptions);
    return this.client;
  }

  /**
   * One model call: each attempt under the deadline, retried by the retry layer, failures mapped
   * to ProviderErrors without the key; `latencyMs` is what the caller waited, retries included.
   */
  protected async call<R>(
    attempt: (client: Client, signal: AbortSignal) => Promise<R>,
  ): Promise<{ value: R; latencyMs: number }> {
    const client = await this.sdk();
    return timedCall((signal) => attempt(client, signal), {
      provider: this.who.provider,
      endpoint: this.baseURL,
      keyEnv: this.who.keyEnv,
      apiKey: this.apiKey,
      opts: { ...this.opts, timeoutMs: this.deadlineMs },
      ...(this.opts.sleep && { sleep: this.opts.sleep }),
    });
  }

  /** What a preflight names and scrubs, and the deadline it shortens to. */
  protected preflightTarget(): PreflightTarget {
    return {
      component: this.id,
      url: this.baseURL,
      keyEnv: this.who.keyEnv,
      secrets: [this.apiKey],
      timeoutMs: this.opts.timeoutMs,
    };
  }
}
