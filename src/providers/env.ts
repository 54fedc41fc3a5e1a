/**
 * The one place the environment becomes provider settings: a setting the config leaves unset
 * falls back to the variable its provider names (`Provider.env`). The environment is passed in;
 * nothing under src/ but the CLI reads `process.env`.
 */
import type { ProviderEnv } from './registry.js';

/** An environment: `process.env` in the CLI, any record of strings in a program that embeds the audit. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The settings every remote provider may take from the environment. */
export interface EnvSettings {
  base_url?: string | undefined;
  api_key?: string | undefined;
}

function origin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * The key variable's value when it may be sent to `baseURL`: always without `key_home`; with it,
 * only when `baseURL` is unset or on the key's own host (the base URL variable's, else `key_home`).
 */
function envKey(spec: ProviderEnv, baseURL: string | undefined, env: Environment): string | undefined {
  if (!spec.api_key) return undefined;
  const key = env[spec.api_key];
  if (spec.key_home === undefined || !baseURL) return key;
  const home = origin((spec.base_url ? env[spec.base_url] : undefined) ?? spec.key_home);
  return home !== undefined && origin(baseURL) === home ? key : undefined;
}

/** `settings` with `base_url` and `api_key` filled from the environment where the config left them unset. */
export function settingsFromEnv<S extends EnvSettings>(
  provider: { readonly env?: ProviderEnv },
  settings: S,
  env: Environment,
): S {
  const spec = provider.env;
  if (!spec) return settings;
  const base_url = settings.base_url ?? (spec.base_url ? env[spec.base_url] : undefined);
  const api_key = settings.api_key ?? envKey(spec, base_url, env);
  return {
    ...settings,
    ...(base_url !== undefined ? { base_url } : {}),
    ...(api_key !== undefined ? { api_key } : {}),
  };
}
