/**
 * The TypeScript twin of the JSON scan kernel (assembly/json-scan.ts): the same tape, the same
 * estimates, the same verdicts, for where WebAssembly is not available and for the differential
 * test that holds the two equal.
 */
import { countFeatures, estimateFromFeatures, FEATURE_COUNT } from "../tokens/estimator.js";
import { ENCODING_COUNT, WEIGHT_TABLE } from "../tokens/weights-table.js";

/** Token kinds (the low byte of a tape entry's first word), as the kernel numbers them. */
export const kToken = { object: 1, array: 2, key: 3, string: 4, number: 5, true: 6, false: 7, null: 8 } as const;
/** A string or key with an escape: its bytes are not its text. */
export const kEscaped = 1 << 8;
/** Why a text was not scanned, by the kernel's SCAN_* number. */
export const kScanReasons = { 1: "not JSON", 2: "not UTF-8", 3: "nested too deep", 4: "too many tokens" } as const;
export type ScanReason = (typeof kScanReasons)[keyof typeof kScanReasons];

/**
 * A scanned JSON text: `count` entries of four words (kind | flags, start, end, next; see
 * scanJson) and ENCODING_COUNT estimates per entry (meaningful for string values).
 */
export interface JsonTape {
  count: number;
  words: Uint32Array;
  estimates: Float64Array;
}

export type ScanResult = { tape: JsonTape; reason?: undefined } | { tape?: undefined; reason: ScanReason };

/** The escapes other than `\u`: the byte after the backslash → the unit it stands for. */
const kSimpleEscapes: Readonly<Record<number, number>> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 8, 0x66: 12, 0x6e: 10, 0x72: 13, 0x74: 9 };

class NotScanned {
  constructor(readonly why: 1 | 2 | 3 | 4) {}
}

/** The twin of scanJson (see src/pool/json-scan.ts for the contract). */
export function scanJsonReference(bytes: Uint8Array, maxTokens: number, maxDepth: number): ScanResult {
  const words: number[] = [];
  const estimates: number[] = [];
  const n = bytes.length;
  let at = 0;
  const counts = new Uint32Array(FEATURE_COUNT);
  const push = (word: number, start: number, end: number): number => {
    if (words.length / 4 >= maxTokens) throw new NotScanned(4);
    const i = words.length / 4;
    words.push(word, start, end, i + 1);
    estimates.push(0, 0);
    return i;
  };
  const space = () => {
    while (at < n && (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09)) at++;
  };
  const notJson = (): never => {
    throw new NotScanned(1);
  };
  /** A string from its opening quote: its UTF-16 text, or a throw. */
  const string = (key: boolean): void => {
    const open = at++;
    let text = "";
    let escaped = false;
    for (;;) {
      if (at >= n) notJson();
      const b = bytes[at];
      if (b === 0x22) break;
      if (b === 0x5c) {
        escaped = true;
        const c = bytes[at + 1];
        if (c !== undefined && c in kSimpleEscapes) {
          text += String.fromCharCode(kSimpleEscapes[c]);
          at += 2;
        } else if (c === 0x75) {
          const hex = String.fromCharCode(...bytes.subarray(at + 2, at + 6));
          if (at + 5 >= n || !/^[0-9a-fA-F]{4}$/.test(hex)) notJson();
          text += String.fromCharCode(Number.parseInt(hex, 16));
          at += 6;
        } else notJson();
        continue;
      }
      if (b < 0x20) notJson();
      if (b < 0x80) {
        text += String.fromCharCode(b);
        at++;
        continue;
      }
      const more = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0;
      if (more === 0 || at + more >= n) throw new NotScanned(2);
      const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
      const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
      let cp = b & (more === 1 ? 0x1f : more === 2 ? 0x0f : 0x07);
      for (let k = 1; k <= more; k++) {
        const c = bytes[at + k];
        if (c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) throw new NotScanned(2);
        cp = (cp << 6) | (c & 0x3f);
      }
      text += String.fromCodePoint(cp);
      at += more + 1;
    }
    const close = at++;
    const i = push((key ? kToken.key : kToken.string) | (escaped ? kEscaped : 0), open + 1, close);
    if (!key) {
      for (let row = 0; row < ENCODING_COUNT; row++) {
        counts.fill(0);
        countFeatures(text, 0, text.length, counts, 0);
        estimates[i * ENCODING_COUNT + row] = estimateFromFeatures(counts, 0, WEIGHT_TABLE, row * FEATURE_COUNT);
      }
    }
  };
  const digits = () => {
    const from = at;
    while (at < n && bytes[at] >= 0x30 && bytes[at] <= 0x39) at++;
    if (at === from) notJson();
  };
  const value = (depth: number): void => {
    space();
    if (at >= n) notJson();
    const c = bytes[at];
    if (c === 0x7b || c === 0x5b) {
      if (depth >= maxDepth) throw new NotScanned(3);
      const object = c === 0x7b;
      const i = push(object ? kToken.object : kToken.array, at, 0);
      at++;
      space();
      if (bytes[at] === (object ? 0x7d : 0x5d)) at++;
      else {
        for (;;) {
          if (object) {
            space();
            if (bytes[at] !== 0x22) notJson();
            string(true);
            space();
            if (bytes[at] !== 0x3a) notJson();
            at++;
          }
          value(depth + 1);
          space();
          if (bytes[at] === 0x2c) {
            at++;
            continue;
          }
          if (bytes[at] !== (object ? 0x7d : 0x5d)) notJson();
          at++;
          break;
        }
      }
      words[i * 4 + 2] = at;
      words[i * 4 + 3] = words.length / 4;
      return;
    }
    if (c === 0x22) return void string(false);
    for (const [text, kind] of [["true", kToken.true], ["false", kToken.false], ["null", kToken.null]] as const) {
      if (c !== text.charCodeAt(0)) continue;
      if (String.fromCharCode(...bytes.subarray(at, at + text.length)) !== text) notJson();
      push(kind, at, (at += text.length));
      return;
    }
    if (c !== 0x2d && !(c >= 0x30 && c <= 0x39)) notJson();
    const start = at;
    if (c === 0x2d) at++;
    if (bytes[at] === 0x30) at++;
    else digits();
    if (bytes[at] === 0x2e) {
      at++;
      digits();
    }
    if (bytes[at] === 0x65 || bytes[at] === 0x45) {
      at++;
      if (bytes[at] === 0x2b || bytes[at] === 0x2d) at++;
      digits();
    }
    push(kToken.number, start, at);
  };
  try {
    value(0);
    space();
    if (at !== n) notJson();
  } catch (err) {
    if (err instanceof NotScanned) return { reason: kScanReasons[err.why] };
    throw err;
  }
  return { tape: { count: words.length / 4, words: Uint32Array.from(words), estimates: Float64Array.from(estimates) } };
}
