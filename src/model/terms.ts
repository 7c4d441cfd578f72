/**
 * Specific terms: the names of things in a text — file paths, identifiers, symbols, error
 * names, flags, values — as opposed to the words of its prose. One definition serves the eval's
 * next-step evidence (what the agent's next message names) and the policy's focus (what the
 * current step is about). Precisely:
 *
 * - **Candidates** are maximal runs of letters, digits, `_`, `$`, `.`, `/`, `\` and `-` that
 *   start and end with a letter, digit, `_` or `$`, optionally led by `/`, `./`, `../`, `~/`,
 *   `-` or `--` (an absolute or relative path, a command-line flag). `::` joins two runs
 *   (`std::vector`, `Foo::bar`).
 * - A candidate is **specific** when it is at least 3 characters long and any of: it has a
 *   path or member separator inside or a path/flag lead (`/ . \ ::`, `--x`); an `_` or `$`; a
 *   letter and a digit; a lower-case letter followed by an upper-case one (`camelCase`) or two
 *   upper-case letters followed by a lower-case one (`HTTPServer`); it is a number of at least
 *   3 characters (`8080`, `3.14`, `1e-5` count; `42` does not). Plain words (`the`, `Error`,
 *   `README`), and abbreviations made of single letters and dots (`e.g`, `i.e`), are not.
 * - **Presence** (`containsTerm`): the term occurs in the text with no letter, digit or `_` right
 *   before it when it starts with one, nor right after it when it ends with one (a regex `\b` at
 *   its word-character ends: `foo/bar.py` is in `/repo/foo/bar.py`, `--verbose` in `---verbose`;
 *   `bar` is not in `foobar`). Characters are UTF-16 units: an astral-plane letter next to a term
 *   does not join it. Matching is case-sensitive.
 */
import { coreFor, type Backend } from "../core/backend.js";
import { align16, type CoreInstance } from "../core/core-instance.js";

const kCandidate = /(?:\.{1,2}\/|~\/|\/|--?)?[\p{L}\p{N}_$](?:[\p{L}\p{N}_$./\\-]|::)*[\p{L}\p{N}_$]|(?:\.{1,2}\/|~\/|\/|--?)?[\p{L}\p{N}_$]/gu;
const kLead = /^(?:\.{1,2}\/|~\/|\/|--?)/;
const kNumber = /^[+-]?\d[\d.,eE+-]*$/;
const kInitials = /^(?:\p{L}\.)+\p{L}$/u;
const kWordChar = /[\p{L}\p{N}_]/u;

/** Whether one candidate (see the module comment) is a specific term. */
export function isSpecific(t: string): boolean {
  if (t.length < 3) return false;
  if (kNumber.test(t)) return /\d/.test(t);
  if (kInitials.test(t)) return false;
  const lead = kLead.exec(t)?.[0];
  if (lead === "-") return /[\p{L}]/u.test(t.slice(1)) && /[-_\d]/.test(t.slice(1)); // `-rf` is a flag word, `-k_x` / `-O2` specific
  if (lead !== undefined) return t.length - lead.length >= 2;
  if (/[/.\\]|::/.test(t)) return true;
  if (/[_$]/.test(t)) return true;
  if (/\p{L}/u.test(t) && /\p{N}/u.test(t)) return true;
  return /\p{Ll}\p{Lu}|\p{Lu}{2}\p{Ll}/u.test(t);
}

/** Texts shorter than this are scanned here, not in the kernel: the call would cost more than it saves. */
const kKernelFrom = 256;

/**
 * The distinct specific terms of `text`, in order of first occurrence. ASCII text (most tool
 * output) is scanned and judged by character codes: in the WASM kernel from kKernelFrom
 * characters (assembly/specific-terms.ts), here below that or with `backend: "ts"` (scanAscii,
 * isSpecificAscii, its twin), as is text whose only other characters are neither letters nor
 * numbers (they separate candidates, as spaces do); any other text goes through the candidate
 * regex and isSpecific, which are the definition (specificTermsByRegex; differential tests hold
 * the three equal).
 */
export function specificTerms(text: string, options: { backend?: Backend | "auto" } = {}): string[] {
  if (kNonAscii.test(text)) {
    // A character outside ASCII that is not a letter or a number (an arrow, a dash, an emoji, a
    // box-drawing line) is never inside a candidate: as a space it leaves every candidate as it
    // was, so text whose only non-ASCII characters are such takes the ASCII path.
    // Replaced run by run of non-ASCII characters: the Unicode class is then tried on those
    // alone, not on every ASCII character between them (3x faster on the corpora's texts).
    let letters = false;
    const plain = text.replace(kNonAsciiRun, (run) => {
      const spaced = run.replace(kNonAsciiSeparator, " ");
      letters ||= kNonAscii.test(spaced);
      return spaced;
    });
    if (letters) return specificTermsByRegex(text);
    text = plain;
  }
  if (text.length >= kKernelFrom) {
    const core = coreFor(options.backend);
    if (core) return kernelTerms(core, text);
  }
  const seen = new Set<string>();
  scanAscii(text, (start, end) => {
    if (isSpecificAscii(text, start, end)) seen.add(text.slice(start, end));
  });
  return [...seen];
}

/** specificTerms of one text in the kernel; the regex for a text it finds not ASCII. */
function kernelTerms(core: CoreInstance, text: string): string[] {
  const terms: string[] = [];
  let ascii = true;
  core.forEachStringBatch([text], 0, (b) => {
    const base = core.arena(0).base;
    let slots = 16;
    while (slots < text.length) slots *= 2;
    const ends = align16(b.data + text.length * 2);
    const nonAscii = ends + 16;
    const table = nonAscii + 16;
    const out = align16(table + slots * 4);
    const a = core.arena(out + (Math.floor(text.length / 3) + 2) * 8 - base);
    const pairs = core.run("specificTermSpans", (e) => e.specificTermSpans(b.data, b.offsets, 1, out, ends, nonAscii, table, slots));
    if (a.u8[nonAscii] === 1) ascii = false;
    for (let k = 0, o = out >>> 2; k < pairs; k++, o += 2) terms.push(text.slice(a.u32[o], a.u32[o + 1]));
  });
  core.releaseArena();
  return ascii ? terms : specificTermsByRegex(text);
}

/** specificTerms by the candidate regex and isSpecific alone: the definition the ASCII path must equal. */
export function specificTermsByRegex(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(kCandidate)) {
    const t = m[0];
    if (!seen.has(t) && isSpecific(t)) seen.add(t);
  }
  return [...seen];
}

const kNonAscii = /[^\x00-\x7f]/;
const kNonAsciiRun = /[^\x00-\x7f]+/g;
/** The characters outside ASCII that are neither letters nor numbers: none is ever part of a candidate. */
const kNonAsciiSeparator = /[^\x00-\x7f\p{L}\p{N}]/gu;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
/** An ASCII code that may start or end a candidate: a letter, a digit, `_` or `$`. */
const isEdge = (c: number) => isDigit(c) || isUpper(c) || isLower(c) || c === 0x5f || c === 0x24;
/** An ASCII code that may sit inside a candidate: an edge code, `.`, `/`, `\` or `-`. */
const isInner = (c: number) => isEdge(c) || c === 0x2e || c === 0x2f || c === 0x5c || c === 0x2d;

/**
 * Calls `found` with the range of each candidate kCandidate matches in an ASCII `text`, scanned by character
 * codes: at each position the lead the regex would take (`../` or `./`, `~/`, `/`, `--` or `-`,
 * or none) when an edge character follows it, then the longest run of inner characters and `::`
 * pairs, cut back to its last edge character; the scan goes on after it, as matchAll does.
 */
function scanAscii(text: string, found: (start: number, end: number) => void): void {
  const n = text.length;
  const at = (i: number) => (i < n ? text.charCodeAt(i) : -1);
  for (let p = 0; p < n; ) {
    const c = text.charCodeAt(p);
    let q = p;
    if (c === 0x2e) q = at(p + 1) === 0x2e && at(p + 2) === 0x2f ? p + 3 : at(p + 1) === 0x2f ? p + 2 : -1;
    else if (c === 0x7e) q = at(p + 1) === 0x2f ? p + 2 : -1;
    else if (c === 0x2f) q = p + 1;
    else if (c === 0x2d) q = at(p + 1) === 0x2d && isEdge(at(p + 2)) ? p + 2 : p + 1;
    if (q < 0 || !isEdge(at(q))) {
      p++;
      continue;
    }
    let last = q;
    for (let i = q + 1; i < n; ) {
      const d = text.charCodeAt(i);
      if (isInner(d)) {
        if (isEdge(d)) last = i;
        i++;
      } else if (d === 0x3a && at(i + 1) === 0x3a) i += 2;
      else break;
    }
    found(p, last + 1);
    p = last + 1;
  }
}

/**
 * isSpecific of the ASCII candidate `text[start..end)`, by character codes (the same answer, rule
 * for rule; nothing sliced), step for step as the kernel's twin (assembly/specific-terms.ts):
 * the cheap refusals first (too short, a lower-case word), then the rules in isSpecific's order.
 * Each step reads the candidate from `start`, `n` codes long.
 */
function isSpecificAscii(text: string, start: number, end: number): boolean {
  const n = end - start;
  if (n < 3 || isLowerWord(text, start, end)) return false;
  const c0 = text.charCodeAt(start);
  if (isAsciiNumber(text, start, n, c0)) return true;
  if (isInitials(text, start, n)) return false;
  const lead = leadLength(text, start, c0);
  const seen = classesAfterFirst(text, start, n);
  if (lead === 1 && c0 === 0x2d) return (seen & kLetter) !== 0 && (seen & kFlagMark) !== 0; // `-rf` is a flag word, `-k_x` / `-O2` specific
  if (lead > 0) return n - lead >= 2;
  const letter = (seen & kLetter) !== 0 || isUpper(c0) || isLower(c0);
  const digit = (seen & kDigit) !== 0 || isDigit(c0);
  return hasSeparator(text, start, n) || (letter && digit) || hasCaseShift(text, start, n);
}

/** Lower-case letters only: a word of prose, as most candidates are, and never specific. */
function isLowerWord(text: string, start: number, end: number): boolean {
  let i = start;
  while (i < end && isLower(text.charCodeAt(i))) i++;
  return i === end;
}

/** A number, `[+-]?\d[\d.,eE+-]*` (it has a digit); `c0` is the candidate's first code. */
function isAsciiNumber(text: string, start: number, n: number, c0: number): boolean {
  const s = c0 === 0x2b || c0 === 0x2d ? 1 : 0;
  if (!(s < n && isDigit(text.charCodeAt(start + s)))) return false;
  for (let i = s + 1; i < n; i++) {
    const c = text.charCodeAt(start + i);
    if (!(isDigit(c) || c === 0x2e || c === 0x2c || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d)) return false;
  }
  return true;
}

/** Single letters joined by dots (`e.g`, `i.e`). */
function isInitials(text: string, start: number, n: number): boolean {
  if (n % 2 === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(start + i);
    if (!(i % 2 === 0 ? isUpper(c) || isLower(c) : c === 0x2e)) return false;
  }
  return true;
}

/** The length of the candidate's lead (`../`, `./`, `~/`, `/`, `--`, `-`), 0 when none; `c0` is its first code. */
function leadLength(text: string, start: number, c0: number): number {
  if (c0 === 0x2e) {
    const c1 = text.charCodeAt(start + 1);
    return c1 === 0x2e && text.charCodeAt(start + 2) === 0x2f ? 3 : c1 === 0x2f ? 2 : 0;
  }
  if (c0 === 0x7e) return text.charCodeAt(start + 1) === 0x2f ? 2 : 0;
  if (c0 === 0x2f) return 1;
  if (c0 === 0x2d) return text.charCodeAt(start + 1) === 0x2d ? 2 : 1;
  return 0;
}

/** classesAfterFirst's bits: a letter, a digit, a flag's mark (`-`, `_` or a digit). */
const kLetter = 1;
const kDigit = 2;
const kFlagMark = 4;

/** What the candidate's codes after the first hold, as kLetter | kDigit | kFlagMark bits. */
function classesAfterFirst(text: string, start: number, n: number): number {
  let seen = 0;
  for (let i = 1; i < n; i++) {
    const c = text.charCodeAt(start + i);
    if (isUpper(c) || isLower(c)) seen |= kLetter;
    else if (isDigit(c)) seen |= kDigit;
    if (c === 0x2d || c === 0x5f || isDigit(c)) seen |= kFlagMark;
  }
  return seen;
}

/** A path or member separator (`/ . \ ::`), an `_` or a `$` anywhere in the candidate. */
function hasSeparator(text: string, start: number, n: number): boolean {
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(start + i);
    if (c === 0x2f || c === 0x2e || c === 0x5c || c === 0x5f || c === 0x24 || (c === 0x3a && i + 1 < n && text.charCodeAt(start + i + 1) === 0x3a)) return true;
  }
  return false;
}

/** A lower-case letter followed by an upper-case one (`camelCase`), or two upper-case letters followed by a lower-case one (`HTTPServer`). */
function hasCaseShift(text: string, start: number, n: number): boolean {
  for (let i = 0; i + 1 < n; i++) {
    const c = text.charCodeAt(start + i);
    const d = text.charCodeAt(start + i + 1);
    if (isLower(c) && isUpper(d)) return true;
    if (isUpper(c) && isUpper(d) && i + 2 < n && isLower(text.charCodeAt(start + i + 2))) return true;
  }
  return false;
}

/** Whether `term` occurs in `text` as a whole starting at index `at` (see the module comment). */
export function occursAt(text: string, term: string, at: number): boolean {
  if (term === "" || at < 0 || !text.startsWith(term, at)) return false;
  const end = at + term.length;
  return (
    (at === 0 || !isWordUnit(text.charCodeAt(at - 1)) || !isWordUnit(term.charCodeAt(0))) &&
    (end >= text.length || !isWordUnit(text.charCodeAt(end)) || !isWordUnit(term.charCodeAt(term.length - 1)))
  );
}

/** The string leaves of a JSON value (numbers as JSON writes them), depth first; those under a key `omit` names are left out. */
function jsonLeaves(v: unknown, out: string[], omit?: (key: string) => boolean): void {
  if (typeof v === "string") out.push(v);
  else if (typeof v === "number") out.push(JSON.stringify(v));
  else if (Array.isArray(v)) for (const x of v) jsonLeaves(x, out, omit);
  else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) if (!omit?.(k)) jsonLeaves(x, out, omit);
}

/**
 * The texts of a tool call's argument string that terms are read from, appended to `out`: an
 * argument that is JSON gives its string leaves (and numbers, as JSON.stringify writes them), so
 * an escaped newline never glues two names together; any other argument is taken as it is.
 * `omit`: keys whose values are left out, whole (what ctxfold writes passes the secret-named ones).
 */
export function argumentTexts(args: string, out: string[] = [], omit?: (key: string) => boolean): string[] {
  const t = args.trimStart();
  if (t.startsWith("{") || t.startsWith("[") || t.startsWith('"')) {
    try {
      jsonLeaves(JSON.parse(args), out, omit);
      return out;
    } catch {
      // not JSON: the argument as it is
    }
  }
  out.push(args);
  return out;
}

/**
 * Whether one UTF-16 code unit is a word character for presence: a letter, a digit or `_`. A
 * surrogate never is, so a character outside the BMP next to a term counts as a boundary.
 */
export function isWordUnit(unit: number): boolean {
  if (unit < 0x80) return (unit >= 0x30 && unit <= 0x39) || (unit >= 0x41 && unit <= 0x5a) || (unit >= 0x61 && unit <= 0x7a) || unit === 0x5f;
  return kWordChar.test(String.fromCharCode(unit));
}

/** Where `term` first occurs in `text` as a whole at or after `from` (see the module comment), or -1. */
export function indexOfTerm(text: string, term: string, from = 0): number {
  if (term === "") return -1;
  for (let at = text.indexOf(term, from); at >= 0; at = text.indexOf(term, at + 1)) {
    if (occursAt(text, term, at)) return at;
  }
  return -1;
}

/** Whether `term` occurs in `text` as a whole (see the module comment). */
export function containsTerm(text: string, term: string): boolean {
  return indexOfTerm(text, term) >= 0;
}

/**
 * Every term `text` holds as a whole: the substrings `t` with containsTerm(text, t), `text`
 * itself included, each once. Its substrings between a start and an end that occursAt allows,
 * so a set of them answers containsTerm for many terms against one short text (a name) without
 * scanning it for each.
 */
export function termsWithin(text: string): Set<string> {
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (i === 0 || !isWordUnit(text.charCodeAt(i - 1)) || !isWordUnit(text.charCodeAt(i))) starts.push(i);
    if (i === text.length - 1 || !isWordUnit(text.charCodeAt(i + 1)) || !isWordUnit(text.charCodeAt(i))) ends.push(i + 1);
  }
  const out = new Set<string>();
  for (const a of starts) for (const e of ends) if (e > a) out.add(text.slice(a, e));
  return out;
}
