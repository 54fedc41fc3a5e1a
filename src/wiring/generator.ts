import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { loadPrompt } from '../evidence/templates.js';
import { cachedModel, ResponseCache } from '../llm/cache.js';
import type { ChatModel } from '../llm/types.js';
import type { Environment } from '../providers/env.js';
import { createChatModel, isOfflineChatProvider } from './providers.js';

/** The first line of a prompt: how the offline responder recognises the block it was given. */
function firstLine(promptsDir: string, name: string): string {
  return loadPrompt(promptsDir, name).text.split('\n')[0]!;
}

/**
 * The generator a config names, behind the on-disk response cache (keyed by provider, model,
 * full messages and parameters), so a re-run with an unchanged config makes no model call.
 */
export function createGenerator(
  config: Config,
  env: Environment,
  promptsDir: string,
  cacheDir: string,
  /** Instead of `cachedModel` (same arguments): a dry run looks requests up in the cache without sending them. */
  wrap: (model: ChatModel, cache: ResponseCache) => ChatModel = cachedModel,
): ChatModel {
  const g = config.generator;
  const model = createChatModel(
    g,
    env,
    isOfflineChatProvider(g.provider)
      ? {
          cta: config.evidence.cta,
          weakMarker: firstLine(promptsDir, 'evidence-weak'),
          emptyMarker: firstLine(promptsDir, 'evidence-empty'),
          language: config.language,
        }
      : undefined,
  );
  const cached = wrap(model, new ResponseCache(join(cacheDir, 'responses')));
  // The cache answers requests, not the question whether the server can be reached: the check
  // before the first case goes to the model itself.
  return model.preflight ? { ...cached, preflight: () => model.preflight!() } : cached;
}
