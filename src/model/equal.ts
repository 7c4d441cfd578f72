/**
 * Whether two JSON-like values are equal as JSON.stringify would render them (a key whose
 * value is undefined counts as absent; byte arrays compare by their bytes), without rendering
 * them: a session compares each call's messages with the previous call's, and strings the two
 * share (a runner's conversation, parsed again) compare by reference, so the comparison costs
 * the number of values, not the number of bytes (JSON.stringify of a 500-step run is ~10 ms).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a.byteLength !== b.byteLength) return false;
    return Buffer.compare(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), new Uint8Array(b.buffer, b.byteOffset, b.byteLength)) === 0;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k of Object.keys(x)) {
    if (x[k] === undefined) continue;
    keys++;
    if (!jsonEqual(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (y[k] !== undefined) keys--;
  return keys === 0;
}
