import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument, isMap, isSeq, isScalar, type Node as YamlNode } from 'yaml';
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

/** Reads and parses a YAML file; a syntax error is an InputError naming file:line. */
export function readYaml(file: string, text?: string): YamlSource {
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
  return { file, data: doc.toJS(), lineOf };
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
