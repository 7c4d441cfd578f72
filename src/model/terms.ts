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

const kCandidate = /(?:\.{1,2}\/|~\/|\/|--?)?[\p{L}\p{N}_$](?:[\p{L}\p{N}_$.\/\\-]|::)*[\p{L}\p{N}_$]|(?:\.{1,2}\/|~\/|\/|--?)?[\p{L}\p{N}_$]/gu;
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
  if (lead === "-" ) return /[\p{L}]/u.test(t.slice(1)) && /[-_\d]/.test(t.slice(1)); // `-rf` is a flag word, `-k_x` / `-O2` specific
  if (lead !== undefined) return t.length - lead.length >= 2;
  if (/[/.\\]|::/.test(t)) return true;
  if (/[_$]/.test(t)) return true;
  if (/\p{L}/u.test(t) && /\p{N}/u.test(t)) return true;
  return /\p{Ll}\p{Lu}|\p{Lu}{2}\p{Ll}/u.test(t);
}

/** The distinct specific terms of `text`, in order of first occurrence. */
export function specificTerms(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(kCandidate)) {
    const t = m[0];
    if (!seen.has(t) && isSpecific(t)) seen.add(t);
  }
  return [...seen];
}

/** Whether `term` occurs in `text` as a whole starting at index `at` (see the module comment). */
export function occursAt(text: string, term: string, at: number): boolean {
  if (term === "" || at < 0 || !text.startsWith(term, at)) return false;
  const end = at + term.length;
  return (at === 0 || !isWordUnit(text.charCodeAt(at - 1)) || !isWordUnit(term.charCodeAt(0))) && (end >= text.length || !isWordUnit(text.charCodeAt(end)) || !isWordUnit(term.charCodeAt(term.length - 1)));
}

/** The string leaves of a JSON value (numbers as JSON writes them), depth first. */
function jsonLeaves(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (typeof v === "number") out.push(JSON.stringify(v));
  else if (Array.isArray(v)) for (const x of v) jsonLeaves(x, out);
  else if (v !== null && typeof v === "object") for (const x of Object.values(v)) jsonLeaves(x, out);
}

/**
 * The texts of a tool call's argument string that terms are read from, appended to `out`: an
 * argument that is JSON gives its string leaves (and numbers, as JSON.stringify writes them), so
 * an escaped newline never glues two names together; any other argument is taken as it is.
 */
export function argumentTexts(args: string, out: string[] = []): string[] {
  const t = args.trimStart();
  if (t.startsWith("{") || t.startsWith("[") || t.startsWith('"')) {
    try {
      jsonLeaves(JSON.parse(args), out);
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
