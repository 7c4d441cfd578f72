/**
 * Whether two wire messages are the same message, for the wire cache (wire-cache.ts): a call's
 * messages are compared with the previous call's to find the first one that changed.
 *
 * Stricter than jsonEqual (model/equal.ts), which compares canonical messages as JSON: here two
 * values are the same only when parsing them must give the same canonical message, so keys
 * compare in order (an adapter copies unknown fields in key order), a key whose value is
 * undefined is not a missing key (it is copied as a field), and the raw argument text an
 * adapter attached to a rendered value (kRawArgs on an args object, kInventedToolName on an AI SDK
 * tool result; parse reads both) must match. Class instances other than byte
 * arrays, URLs and dates are the same only when they are the same object. Anything judged
 * different is merely parsed again, so erring on "different" costs time, never correctness.
 *
 * Identity short-circuits at every level: a runner's list grown call by call compares by
 * reference, and JSON parsed afresh compares its strings by content (`===`), never by
 * rendering anything.
 */
import { kInventedToolName } from "./ai-sdk.js";
import { kRawArgs } from "./index.js";

export function sameWire(a: unknown, b: unknown): boolean {
  return sameAt(a, b, 0, false);
}

/**
 * Keys of the objects under comparison, in order, without allocating a key list per object
 * (Object.keys on every object of a long conversation costs more than the comparison itself):
 * one shared stack, each comparison using the slots above its caller's.
 */
const keyStack: string[] = [];

/** sameWire, object keys kept on keyStack from `base` on; `args`: a value an adapter may have attached raw argument text to. */
function sameAt(a: unknown, b: unknown, base: number, args: boolean): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !sameAt(a[i], b[i], base, false)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(a) as unknown;
  if (proto !== Object.getPrototypeOf(b)) return false;
  if (proto === Object.prototype || proto === null) return sameObject(a as Loose, b as Loose, base, args);
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    if (a.byteLength !== b.byteLength) return false;
    return Buffer.compare(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), new Uint8Array(b.buffer, b.byteOffset, b.byteLength)) === 0;
  }
  if (a instanceof URL) return a.href === (b as URL).href;
  if (a instanceof Date) return a.getTime() === (b as Date).getTime();
  return false;
}

type Loose = Record<string | symbol, unknown>;

/**
 * Plain objects: the same keys in the same order, the same values. The attached values parse
 * reads are looked at only where an adapter attaches them (symbol lookups on every object
 * would double the cost): raw argument text on an `input` / `args` value, the invented tool
 * name on a `tool-result` part. (Prototypes of plain objects hold no enumerable keys, so
 * for-in lists own keys, as the adapters' own for-in loops read them.)
 */
function sameObject(a: Loose, b: Loose, base: number, args: boolean): boolean {
  if (args && a[kRawArgs] !== b[kRawArgs]) return false;
  // Values first, each key noted on the stack before its value is compared (a nested
  // comparison uses the slots above it); then b's keys against the noted ones, in order.
  let n = 0;
  for (const k in a) {
    keyStack[base + n++] = k;
    const x = a[k];
    const y = b[k];
    if (x !== y && !sameAt(x, y, base + n, k === "input" || k === "args")) return false;
  }
  let m = 0;
  for (const k in b) if (m >= n || keyStack[base + m++] !== k) return false;
  return m === n && (a.type !== "tool-result" || a[kInventedToolName] === b[kInventedToolName]);
}
