/** Helpers shared by the clients of remote model servers: URL credentials and cache scope. */
import { ConfigError, isSecretParam, redact } from '../errors.js';

/** JSON with object keys sorted at every depth (undefined members dropped, as JSON does). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
      return sorted;
    }
    return v;
  });
}

/**
 * What, besides the request, decides a client's answers: provider, server and fixed settings.
 * The response cache hashes it, so two servers serving the same model name never share answers.
 */
export function canonicalScope(parts: Record<string, unknown>): string {
  return canonicalJson(parts);
}

/**
 * The credentials a URL carries: password, a token as the user name, secret query parameters.
 * Registered with rememberSecrets so they are redacted by value wherever they appear.
 */
export function urlSecrets(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const u = new URL(url);
    const out: string[] = [];
    if (u.password) out.push(decodeURIComponent(u.password), u.password);
    else if (u.username && /^https?:$/.test(u.protocol)) out.push(decodeURIComponent(u.username), u.username);
    for (const [k, v] of u.searchParams) if (isSecretParam(k)) out.push(v);
    return out;
  } catch {
    return [];
  }
}

/**
 * The SDK clients cannot send `user:pass@` from a base URL (fetch refuses such URLs, and the
 * request would be retried as a connection failure): say so at once, with the URL redacted.
 */
export function refuseUrlCredentials(component: string, baseURL: string, keyEnv: string): void {
  let u: URL;
  try {
    u = new URL(baseURL);
  } catch {
    throw new ConfigError(`${component}: base URL '${redact(baseURL)}' is not a URL`);
  }
  if (u.username || u.password) {
    throw new ConfigError(
      `${component}: the base URL ${redact(baseURL)} carries credentials (user:password@), which this client cannot send; remove them and give the key as api_key or ${keyEnv}`,
    );
  }
}
