/**
 * The three registries by kind: the provider lists `--help` shows, and every environment
 * variable a provider reads (whose values are secrets to keep out of every output).
 */
import { CHAT_PROVIDERS } from './chat.js';
import { EMBEDDING_PROVIDERS } from './embedders.js';
import { RERANK_PROVIDERS } from './rerankers.js';
import type { ProviderEnv } from './registry.js';

export type ProviderKind = 'chat' | 'reranker' | 'embedder';

/** What a listing needs of a provider, whatever its kind. */
interface Listed {
  readonly help: string;
  readonly offline: boolean;
  readonly env?: ProviderEnv;
}

const REGISTRIES: Record<ProviderKind, Readonly<Record<string, Listed>>> = {
  chat: CHAT_PROVIDERS,
  reranker: RERANK_PROVIDERS,
  embedder: EMBEDDING_PROVIDERS,
};

/** One provider as a listing shows it. */
export interface ProviderListing {
  name: string;
  help: string;
  offline: boolean;
}

/** The providers of a kind, in the registry's order. */
export function providerList(kind: ProviderKind): ProviderListing[] {
  return Object.entries(REGISTRIES[kind]).map(([name, p]) => ({ name, help: p.help, offline: p.offline }));
}

/**
 * The providers of a kind as `--help` lists them: one line each, the name padded to a column,
 * offline stand-ins marked, every line after `indent`.
 */
export function providerHelp(kind: ProviderKind, indent = ''): string {
  const list = providerList(kind);
  const width = Math.max(...list.map((p) => p.name.length));
  return list
    .map((p) => `${indent}${p.name.padEnd(width)}  ${p.help}${p.offline ? ' (OFFLINE STAND-IN)' : ''}`)
    .join('\n');
}

/** Every environment variable a provider reads: keys, and base URLs (which may carry credentials). */
export function providerEnvVariables(): { keys: string[]; urls: string[] } {
  const specs = Object.values(REGISTRIES).flatMap((r) => Object.values(r).flatMap((p) => (p.env ? [p.env] : [])));
  const unique = (xs: (string | undefined)[]) => [...new Set(xs.filter((x): x is string => x !== undefined))];
  return { keys: unique(specs.map((s) => s.api_key)), urls: unique(specs.map((s) => s.base_url)) };
}
