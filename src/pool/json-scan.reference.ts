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

/** The literals, by their text, with their token kinds. */
const kLiterals = [
  ["true", kToken.true],
  ["false", kToken.false],
  ["null", kToken.null],
] as const;

class NotScanned {
  constructor(readonly why: 1 | 2 | 3 | 4) {}
}

const notJson = (): never => {
  throw new NotScanned(1);
};

/** The twin of scanJson (see src/pool/json-scan.ts for the contract). */
export function scanJsonReference(bytes: Uint8Array, maxTokens: number, maxDepth: number): ScanResult {
  const scan = new ReferenceScan(bytes, maxTokens, maxDepth);
  try {
    scan.text();
  } catch (err) {
    if (err instanceof NotScanned) return { reason: kScanReasons[err.why] };
    throw err;
  }
  return { tape: scan.tape() };
}

/**
 * One scan of a JSON text, recursive descent over its bytes: the position, and the tape and
 * estimates so far. A text it cannot scan throws NotScanned with the reason.
 */
class ReferenceScan {
  private readonly words: number[] = [];
  private readonly estimates: number[] = [];
  private readonly n: number;
  private at = 0;
  /** The estimator's feature counts of one string (scratch). */
  private readonly counts = new Uint32Array(FEATURE_COUNT);

  constructor(
    private readonly bytes: Uint8Array,
    private readonly maxTokens: number,
    private readonly maxDepth: number,
  ) {
    this.n = bytes.length;
  }

  /** The whole text: one value, and nothing after it but white space. */
  text(): void {
    this.value(0);
    this.space();
    if (this.at !== this.n) notJson();
  }

  /** The tape of the text scanned. */
  tape(): JsonTape {
    return { count: this.words.length / 4, words: Uint32Array.from(this.words), estimates: Float64Array.from(this.estimates) };
  }

  /** Appends a tape entry (its `next` the entry after it, until a container's close says otherwise); returns its index. */
  private push(word: number, start: number, end: number): number {
    if (this.words.length / 4 >= this.maxTokens) throw new NotScanned(4);
    const i = this.words.length / 4;
    this.words.push(word, start, end, i + 1);
    this.estimates.push(0, 0);
    return i;
  }

  private space(): void {
    const { bytes, n } = this;
    while (this.at < n && (bytes[this.at] === 0x20 || bytes[this.at] === 0x0a || bytes[this.at] === 0x0d || bytes[this.at] === 0x09)) this.at++;
  }

  /** The value after white space at `at`, nested `depth` containers deep. */
  private value(depth: number): void {
    this.space();
    if (this.at >= this.n) notJson();
    const c = this.bytes[this.at];
    if (c === 0x7b || c === 0x5b) this.container(depth, c === 0x7b);
    else if (c === 0x22) this.string(false);
    else if (!this.literal(c)) this.number(c);
  }

  /** An object or array from its opening bracket to past its closing one; its entry's range and `next` are filled in then. */
  private container(depth: number, object: boolean): void {
    if (depth >= this.maxDepth) throw new NotScanned(3);
    const i = this.push(object ? kToken.object : kToken.array, this.at, 0);
    const close = object ? 0x7d : 0x5d;
    this.at++;
    this.space();
    if (this.bytes[this.at] === close) this.at++;
    else this.members(depth, object, close);
    this.words[i * 4 + 2] = this.at;
    this.words[i * 4 + 3] = this.words.length / 4;
  }

  /** A container's members (an object's each a key, a colon and a value), comma-separated, and the `close` byte after them. */
  private members(depth: number, object: boolean, close: number): void {
    for (;;) {
      if (object) this.key();
      this.value(depth + 1);
      this.space();
      if (this.bytes[this.at] !== 0x2c) break;
      this.at++;
    }
    if (this.bytes[this.at] !== close) notJson();
    this.at++;
  }

  /** An object member's key and the colon after it. */
  private key(): void {
    this.space();
    if (this.bytes[this.at] !== 0x22) notJson();
    this.string(true);
    this.space();
    if (this.bytes[this.at] !== 0x3a) notJson();
    this.at++;
  }

  /** A string from its opening quote (a key when `key`): its entry, and for a value its estimates. */
  private string(key: boolean): void {
    const open = this.at++;
    const { text, escaped } = this.stringText();
    const close = this.at++;
    const i = this.push((key ? kToken.key : kToken.string) | (escaped ? kEscaped : 0), open + 1, close);
    if (!key) this.estimate(i, text);
  }

  /** A string's UTF-16 text, from past its opening quote up to its closing one, and whether it held an escape. */
  private stringText(): { text: string; escaped: boolean } {
    let text = "";
    let escaped = false;
    for (;;) {
      if (this.at >= this.n) notJson();
      const b = this.bytes[this.at];
      if (b === 0x22) return { text, escaped };
      if (b === 0x5c) {
        escaped = true;
        text += this.escape();
      } else if (b < 0x20) notJson();
      else if (b < 0x80) {
        text += String.fromCharCode(b);
        this.at++;
      } else text += this.utf8Char(b);
    }
  }

  /** The escape at `at` (its backslash): the unit it stands for, moving past it. */
  private escape(): string {
    const { bytes, at } = this;
    const c = bytes[at + 1];
    if (c !== undefined && c in kSimpleEscapes) {
      this.at += 2;
      return String.fromCharCode(kSimpleEscapes[c]);
    }
    if (c !== 0x75) notJson();
    const hex = String.fromCharCode(...bytes.subarray(at + 2, at + 6));
    if (at + 5 >= this.n || !/^[0-9a-fA-F]{4}$/.test(hex)) notJson();
    this.at += 6;
    return String.fromCharCode(Number.parseInt(hex, 16));
  }

  /**
   * The multi-byte UTF-8 sequence at `at` that `b` leads, decoded as strictly as the Unicode
   * table of well-formed sequences has it: its character, moving past it.
   */
  private utf8Char(b: number): string {
    const { bytes, at } = this;
    const more = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0;
    if (more === 0 || at + more >= this.n) throw new NotScanned(2);
    const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    let cp = b & (more === 1 ? 0x1f : more === 2 ? 0x0f : 0x07);
    for (let k = 1; k <= more; k++) {
      const c = bytes[at + k];
      if (c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) throw new NotScanned(2);
      cp = (cp << 6) | (c & 0x3f);
    }
    this.at += more + 1;
    return String.fromCodePoint(cp);
  }

  /** A string value's estimates, one per encoding, into entry `i`'s. */
  private estimate(i: number, text: string): void {
    for (let row = 0; row < ENCODING_COUNT; row++) {
      this.counts.fill(0);
      countFeatures(text, 0, text.length, this.counts, 0);
      this.estimates[i * ENCODING_COUNT + row] = estimateFromFeatures(this.counts, 0, WEIGHT_TABLE, row * FEATURE_COUNT);
    }
  }

  /** `true`, `false` or `null` at `at` when `c` starts one of them (false when it starts none). */
  private literal(c: number): boolean {
    for (const [text, kind] of kLiterals) {
      if (c !== text.charCodeAt(0)) continue;
      if (String.fromCharCode(...this.bytes.subarray(this.at, this.at + text.length)) !== text) notJson();
      this.push(kind, this.at, (this.at += text.length));
      return true;
    }
    return false;
  }

  /** A number at `at`, whose first byte is `c`: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?. */
  private number(c: number): void {
    if (c !== 0x2d && !(c >= 0x30 && c <= 0x39)) notJson();
    const start = this.at;
    if (c === 0x2d) this.at++;
    if (this.bytes[this.at] === 0x30) this.at++;
    else this.digits();
    if (this.bytes[this.at] === 0x2e) {
      this.at++;
      this.digits();
    }
    if (this.bytes[this.at] === 0x65 || this.bytes[this.at] === 0x45) {
      this.at++;
      if (this.bytes[this.at] === 0x2b || this.bytes[this.at] === 0x2d) this.at++;
      this.digits();
    }
    this.push(kToken.number, start, this.at);
  }

  /** One or more digits at `at`. */
  private digits(): void {
    const from = this.at;
    while (this.at < this.n && this.bytes[this.at] >= 0x30 && this.bytes[this.at] <= 0x39) this.at++;
    if (this.at === from) notJson();
  }
}
