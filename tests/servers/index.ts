/** Local provider servers for tests; see provider-server.ts for the scripting API. */
export * from './provider-server.js';
export * from './openai-server.js';
export * from './anthropic-server.js';
export * from './rerank-server.js';
