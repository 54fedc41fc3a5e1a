import { readFileSync, statSync } from 'node:fs';
import {
  LineCounter,
  parseDocument,
  isAlias,
  isMap,
  isPair,
  isSeq,
  isScalar,
  isNode,
  type Document,
  type Node as YamlNode,
} from 'yaml';
import type { z } from 'zod';
import { InputError } from './errors.js';

/** A YAML file parsed with positions kept, so a problem can name its line. */
export interface YamlSource {
  file: string;
  data: unknown;
  /** 1-based line of the node at `path` (or of its closest existing ancestor). */
  lineOf(path: readonly PropertyKey[]): number;
}

/**
 * Reads a text file as people save them: a UTF-8 byte-order mark is dropped, CRLF line ends
 * are read as LF, and bytes that are not UTF-8 are an InputError naming file:line (never
 * silently replaced by U+FFFD, which would change a question or a pattern unseen).
 */
export function readText(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new InputError(`${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let text: string;
  try {
    // fatal: invalid sequences throw; the BOM is removed (ignoreBOM false).
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new InputError(`${file}:${firstInvalidUtf8Line(bytes)}: not valid UTF-8 (save the file as UTF-8)`);
  }
  return text.replace(/\r\n?/g, '\n');
}

/** The 1-based line holding the first byte sequence that is not UTF-8. */
function firstInvalidUtf8Line(bytes: Buffer): number {
  let line = 1;
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, i));
      } catch {
        return line;
      }
      line++;
      start = i + 1;
    }
  }
  return line;
}

/**
 * The largest YAML file read (8 MiB). The parser holds about a hundred times a file's size in
 * memory while it reads it (a 16 MiB case file of short cases peaked at 1.6 GB): a larger set
 * is split into several files of a directory, which are read one after another.
 */
export const MAX_YAML_BYTES = 8 * 1024 * 1024;

/**
 * How many nodes aliases may stand for in one file, all aliases together. A few anchors reused
 * across a case file stay far below it; nested aliases that double at each level (an "alias
 * bomb") pass it within a few lines, before anything is built from them.
 */
export const MAX_ALIAS_NODES = 100_000;

export interface ReadYamlOptions {
  /** Refuse a file larger than this many bytes (default {@link MAX_YAML_BYTES}). */
  maxBytes?: number;
}

const limitText = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`);

/** Reads and parses a YAML file; a syntax error, a file too large or an alias bomb is an InputError naming file:line. */
export function readYaml(file: string, text?: string, opts: ReadYamlOptions = {}): YamlSource {
  const maxBytes = opts.maxBytes ?? MAX_YAML_BYTES;
  // Checked before reading, so a huge file is never held in memory.
  const size = text === undefined ? fileSize(file) : Buffer.byteLength(text);
  if (size !== undefined && size > maxBytes)
    throw new InputError(
      `${file}: ${size} bytes, more than the ${limitText(maxBytes)} a YAML input file may hold: split it into several files in a directory`,
    );
  const source = text ?? readText(file);
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((err) => {
      const line = err.linePos?.[0]?.line ?? lineCounter.linePos(err.pos[0]).line;
      return `${file}:${line}: ${err.message.split('\n')[0]}`;
    });
    throw new InputError(`${file}: invalid YAML`, problems);
  }
  const aliasProblem = checkAliases(doc, (pos) => lineCounter.linePos(pos).line);
  if (aliasProblem) throw new InputError(`${file}: invalid YAML`, [`${file}:${aliasProblem}`]);
  let data: unknown;
  try {
    // The parser's own alias guard stays on behind the check above (it counts differently).
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_NODES });
  } catch (e) {
    if (!(e instanceof ReferenceError)) throw e;
    throw new InputError(`${file}: invalid YAML`, [`${file}:1: ${e.message}`]);
  }
  const lineOf = (path: readonly PropertyKey[]): number => {
    let node: unknown = doc.contents;
    let line = node && (node as YamlNode).range ? lineCounter.linePos((node as YamlNode).range![0]).line : 1;
    for (const key of path) {
      let next: unknown;
      if (isMap(node)) {
        const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
        // A missing key is reported at its map; an existing key at the key's own line.
        if (pair?.key && isScalar(pair.key) && pair.key.range) line = lineCounter.linePos(pair.key.range[0]).line;
        next = pair?.value;
      } else if (isSeq(node) && typeof key === 'number') {
        next = node.items[key];
      }
      if (!next) break;
      node = next;
      const range = (node as YamlNode).range;
      if (range && !isMap(node)) line = lineCounter.linePos(range[0]).line;
      else if (range && isMap(node) && typeof key === 'number') line = lineCounter.linePos(range[0]).line;
    }
    return line;
  };
  return { file, data, lineOf };
}

/** The size of a file in bytes; undefined when it cannot be read (readText then says why). */
function fileSize(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch {
    return undefined;
  }
}

/**
 * Walks the document in order, counting the nodes each alias stands for, and returns the first
 * problem as `line: message`: an alias with no anchor before it, an alias inside the node it
 * names (a loop), or aliases that together stand for more than {@link MAX_ALIAS_NODES} nodes.
 * An alias names the last anchor of that name before it, as the parser resolves it.
 */
function checkAliases(doc: Document, lineAt: (pos: number) => number): string | undefined {
  const anchors = new Map<string, { node: unknown; size: number }>();
  let standsFor = 0;
  let problem: string | undefined;
  const size = (node: unknown): number => {
    if (problem) return 0;
    if (isAlias(node)) {
      const at = lineAt(node.range?.[0] ?? 0);
      const target = anchors.get(node.source);
      if (!target) problem = `${at}: alias *${node.source} names no anchor before it`;
      else if (Number.isNaN(target.size)) problem = `${at}: alias *${node.source} is inside the node it names (a loop)`;
      else if ((standsFor += target.size) > MAX_ALIAS_NODES)
        problem = `${at}: aliases stand for more than ${MAX_ALIAS_NODES} nodes by here (an alias bomb?): write the values out, or use fewer nested aliases`;
      return problem ? 0 : target!.size;
    }
    const anchor = isNode(node) ? node.anchor : undefined;
    const entry = { node, size: NaN };
    if (anchor) anchors.set(anchor, entry);
    let n = 1;
    if (isMap(node) || isSeq(node))
      for (const item of node.items as unknown[]) n += isPair(item) ? size(item.key) + size(item.value) : size(item);
    // Capped: nested aliases grow exponentially, and past the limit the exact count does not matter.
    entry.size = Math.min(n, MAX_ALIAS_NODES + 1);
    return entry.size;
  };
  size(doc.contents);
  return problem;
}

/** Formats zod issues as `file:line: path: message`, all of them. */
export function zodProblems(
  src: YamlSource,
  error: Pick<z.ZodError, 'issues'>,
  pathPrefix: readonly PropertyKey[] = [],
): string[] {
  return error.issues.map((issue) => {
    const path = [...pathPrefix, ...issue.path];
    let message = issue.message;
    if (issue.code === 'unrecognized_keys')
      message = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
    const keyPath = issue.code === 'unrecognized_keys' && issue.keys[0] ? [...path, issue.keys[0]] : path;
    return `${src.file}:${src.lineOf(keyPath)}: ${formatPath(path) || '(top)'}: ${message}`;
  });
}

/** `[3, 'expected_topic_ids', 0]` → `[3].expected_topic_ids[0]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}
