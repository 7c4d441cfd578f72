/**
 * How stored text becomes bytes and back: UTF-8, or WTF-8 where a string holds lone surrogates,
 * so that `getText(put(s)) === s` for every string.
 */
const encoder = new TextEncoder();
// ignoreBOM: a leading U+FEFF is content, not a marker to strip, or "\uFEFF…" would not round-trip.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const kLoneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !new RegExp(kLoneSurrogate.source).test(s);

/**
 * A string's stored bytes: UTF-8, or WTF-8 where the string holds lone surrogates (each as its
 * 3-byte generalised UTF-8 sequence ED A0..BF 80..BF). Plain UTF-8 would turn every lone
 * surrogate into U+FFFD, so two different tool outputs could share a ref and `getText` could not
 * give the string back; WTF-8 is UTF-8 wherever the string is well-formed, so the common case
 * stays byte-identical to what any other tool writes.
 */
export function encodeText(text: string): Uint8Array {
  if (isWellFormed(text)) return encoder.encode(text);
  // A lone surrogate takes 3 bytes in WTF-8, as does the U+FFFD that byteLength counts for it.
  const out = new Uint8Array(Buffer.byteLength(text, "utf8"));
  let at = 0;
  let last = 0;
  for (const m of text.matchAll(kLoneSurrogate)) {
    at += encoder.encodeInto(text.slice(last, m.index), out.subarray(at)).written;
    const unit = text.charCodeAt(m.index);
    out[at++] = 0xed;
    out[at++] = 0x80 | ((unit >> 6) & 0x3f);
    out[at++] = 0x80 | (unit & 0x3f);
    last = m.index + 1;
  }
  encoder.encodeInto(text.slice(last), out.subarray(at));
  return out;
}

/** Where the next surrogate sequence (ED A0..BF 80..BF) starts at or after `from`, or -1. */
function findSurrogate(bytes: Uint8Array, from: number): number {
  for (let i = bytes.indexOf(0xed, from); i >= 0 && i + 2 < bytes.length; i = bytes.indexOf(0xed, i + 1)) {
    if (bytes[i + 1] >= 0xa0 && bytes[i + 1] <= 0xbf && (bytes[i + 2] & 0xc0) === 0x80) return i;
  }
  return -1;
}

/**
 * Text from UTF-8 or WTF-8 bytes (the inverse of encodeText). Bytes without surrogate sequences
 * go through TextDecoder in one call; otherwise the runs between them do, and each sequence
 * becomes its lone code unit. Other invalid bytes (binary put as bytes) decode to U+FFFD.
 */
export function decodeText(bytes: Uint8Array): string {
  let i = findSurrogate(bytes, 0);
  if (i < 0) return decoder.decode(bytes);
  let out = "";
  let last = 0;
  while (i >= 0) {
    out += decoder.decode(bytes.subarray(last, i));
    out += String.fromCharCode(0xd000 | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f));
    last = i + 3;
    i = findSurrogate(bytes, last);
  }
  return out + decoder.decode(bytes.subarray(last));
}
