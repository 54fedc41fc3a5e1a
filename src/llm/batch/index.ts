/** Batch API clients (OpenAI Batch API, Anthropic Message Batches) behind one interface. */
export * from './types.js';
export { OpenAIBatchClient, type OpenAIBatchClientOptions } from './openai-batch.js';
export { AnthropicBatchClient, type AnthropicBatchClientOptions } from './anthropic-batch.js';
export {
  BatchCollector,
  BatchScheduler,
  batchCachedModel,
  batchCustomId,
  caseSlug,
  type BatchCollectorOptions,
  type BatchJournal,
  type BatchJournalEntry,
} from './collector.js';
