/**
 * Byte-level helpers for the TREC parsers and evaluator: byte-string comparison (strcmp) and
 * hashing, a strtod-compatible number parser, growable typed arrays.
 */

/** FNV-1a 32-bit hash of buf[s, e). */
export function hashBytes(buf: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h;
}

/** strcmp() of a[as, as+al) and b[bs, bs+bl): byte order, as C compares unsigned chars. */
export function compareBytes(a: Uint8Array, as: number, al: number, b: Uint8Array, bs: number, bl: number): number {
  const n = al < bl ? al : bl;
  for (let i = 0; i < n; i++) {
    const d = a[as + i]! - b[bs + i]!;
    if (d !== 0) return d;
  }
  return al - bl;
}

export function bytesEqual(a: Uint8Array, as: number, al: number, b: Uint8Array, bs: number, bl: number): boolean {
  if (al !== bl) return false;
  for (let i = 0; i < al; i++) if (a[as + i] !== b[bs + i]) return false;
  return true;
}

type Typed = Int32Array | Uint32Array | Float64Array;
/** A typed array of length n holding a's values. */
export function grow<T extends Typed>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
  1e21, 1e22,
];

/**
 * Parses a decimal number in buf[s, e) as strtod() would, or returns NaN. Fast path (Clinger):
 * at most 15 significant digits and a power of ten ≤ 22 give one exact operand each side of
 * a single IEEE division or multiplication, hence the correctly rounded result; anything else
 * goes to Number(), which is also correctly rounded.
 */
export function parseScore(buf: Uint8Array, s: number, e: number): number {
  let p = s;
  let neg = false;
  if (p < e && (buf[p] === 45 || buf[p] === 43)) neg = buf[p++] === 45;
  let mant = 0;
  let digits = 0;
  let exp = 0;
  let any = false;
  while (p < e) {
    const d = buf[p]! - 48;
    if (d < 0 || d > 9) break;
    any = true;
    if (mant !== 0 || d !== 0) digits++;
    mant = mant * 10 + d;
    p++;
  }
  if (p < e && buf[p] === 46) {
    p++;
    while (p < e) {
      const d = buf[p]! - 48;
      if (d < 0 || d > 9) break;
      any = true;
      if (mant !== 0 || d !== 0) digits++;
      mant = mant * 10 + d;
      exp--;
      p++;
    }
  }
  if (any && p < e && (buf[p] === 101 || buf[p] === 69)) {
    p++;
    let eneg = false;
    if (p < e && (buf[p] === 45 || buf[p] === 43)) eneg = buf[p++] === 45;
    let ev = 0;
    let edigits = 0;
    while (p < e) {
      const d = buf[p]! - 48;
      if (d < 0 || d > 9) break;
      if (ev < 1e6) ev = ev * 10 + d;
      edigits++;
      p++;
    }
    if (edigits === 0) return NaN;
    exp += eneg ? -ev : ev;
  }
  if (any && p === e && digits <= 15) {
    let v: number | undefined;
    if (mant === 0) v = 0;
    else if (exp >= 0 && exp <= 22) v = mant * POW10[exp]!;
    else if (exp < 0 && exp >= -22) v = mant / POW10[-exp]!;
    if (v !== undefined) return neg ? -v : v;
  }
  // Slow path: long mantissas, big exponents, "inf"... Number() is correctly rounded.
  const text = Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString('latin1');
  const lower = text.toLowerCase().replace(/^[+-]/, '');
  if (lower === 'inf' || lower === 'infinity') return text.startsWith('-') ? -Infinity : Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return NaN;
  return Number(text);
}

/** Parses an integer grade (trec_eval documents -127..127; any integer is accepted). */
export function parseGrade(buf: Uint8Array, s: number, e: number): number {
  let p = s;
  let neg = false;
  if (p < e && (buf[p] === 45 || buf[p] === 43)) neg = buf[p++] === 45;
  if (p === e || e - p > 9) return NaN;
  let v = 0;
  for (; p < e; p++) {
    const d = buf[p]! - 48;
    if (d < 0 || d > 9) return NaN;
    v = v * 10 + d;
  }
  return neg ? -v : v;
}
