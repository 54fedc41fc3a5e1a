import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import type { ProviderServer } from './provider-server.js';

/**
 * Starts `server` for the enclosing test file (or describe block), resets its script and log and
 * any stubbed environment after each test, and stops it at the end. `url` is set once started.
 */
export function serveDuringSuite(server: ProviderServer): { readonly url: string } {
  const state = { url: '' };
  let close: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    ({ url: state.url, close } = await server.start());
  });
  afterAll(() => close());
  afterEach(() => {
    server.reset();
    vi.unstubAllEnvs();
  });
  return state;
}
