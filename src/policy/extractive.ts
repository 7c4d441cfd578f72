/**
 * The extractive summariser: the tiered policy's deterministic fallback, and a summariser in its
 * own right when no model is wanted. It keeps whole lines (or sentences) of the input, in their
 * original order, chosen by a salience score, and it is within the target by construction: the
 * counter's `estimate` of the result is at most `targetTokens`. There is no model and no retry
 * loop, so seed 003's "compactor churn" (an LLM compactor retrying `output_exceeds_target` five
 * times on one payload) cannot happen here.
 *
 * How a summary is made:
 *
 * 1. Units. The text is cut into lines; a line longer than kExtractive.maxUnitChars is cut
 *    further into sentences (after `.` `!` `?` followed by a space, and after `。` `！` `？`,
 *    so CJK text without newlines splits too) and, when a sentence is still too long, at a
 *    space near the limit, else at the limit (never inside a surrogate pair). Blank lines are
 *    dropped, and so is a line repeating an earlier kept candidate (logs repeat).
 * 2. Candidates (bounded work on huge inputs). Only the first and last `sideLines` lines, up to
 *    `sideChars` characters each side, are split into units, plus the lines in between that
 *    read as errors (a regex pass for keywords, each hit line then checked with the error
 *    patterns; the first and last half of at most min(1000, max(64, target)) of them, the
 *    last half found scanning back from the end, so error-dense text is not scanned whole).
 *    `sideLines = max(500, target)` and `sideChars = max(16 KiB, 8 * target)`, so a small
 *    target looks at little and a large one still has enough to fill itself. A line longer
 *    than 2 * sideChars (a 1 MB single line) contributes its first and last sideChars only.
 *    Secrets are redacted per candidate line (redactSecrets), before any cut, so a key is never
 *    split by a unit boundary (a huge line's windows end at a character no key contains); a
 *    private-key block, which spans lines, is redacted on the whole text first.
 * 3. Salience (deterministic): errorHead's choice, the last traceback cause line (else the
 *    first error line) (120); the first unit, the command or title (112); a traceback cause
 *    line (`ValueError: …`, 105); the last unit, the result (106); a line starting as an error
 *    (errorHead's patterns: `Error`, `FAILED`, `fatal:`, `Traceback …`, `panic:`, 100), and
 *    the line after a bare `Error:` label; an exit code (95); an inline error level or name
 *    (`… ERROR …`, `test_x FAILED`, 90); the second and last-but-one units (70, 75); result
 *    lines (`3 passed`, `total`, `done`, 65); the two units before an error (a traceback's
 *    frame and code) and the third and third-last units (62); warnings (50); lines with paths,
 *    numbers, ids or `key=value` (30 to 45); other text (15); punctuation only (5). Ties go to
 *    the unit nearer an end of the text, then to the earlier one.
 * 4. Greedy fill. Each candidate is estimated once, in one `estimateMany` batch, unrounded and
 *    where it will stand: after a line break, with its own line break (and a sentence that
 *    continues its line also after the previous sentence; the larger of the two). A feature of
 *    the estimator looks at most 7 units back, so these differences of estimates add up to the
 *    estimate of the output. The gap marker `…` (a line standing for omitted lines) and the
 *    header are estimated the same way. Units are taken in salience order while the running
 *    sum stays within the target; the change in gap markers a unit causes is charged exactly.
 *    A salient unit (score >= 60) that does not fit is cut at a word boundary with `…` to fit
 *    the room left (when at least kExtractive.minCutRoom tokens are left); the best filler that
 *    did not fit is cut the same way at the end. Cutting a line is summarising it: the result
 *    is still within the target.
 * 5. Output: the header `[summary of ${label}: ${kept}/${total} lines, ${origTokens}→${tokens}
 *    tokens]` (lines are the input's lines, `kept` those contributing a unit; `tokens` is the
 *    output's estimate, header included) when it costs at most half the target, then the kept
 *    units in order, `…` on its own line where lines were omitted. The result is estimated once
 *    more and, should it be over the target after all (never seen in the property tests: the
 *    sums above are upper bounds; it guards floating-point ties), the lowest-ranked units are
 *    dropped until it fits. That is a local, deterministic check, not a retry: nothing is
 *    called again.
 *
 * Edge cases: target <= 0, or an empty text, give "". A text already within the target is
 * returned unchanged (only secrets redacted, and then only if the redacted text still fits).
 * When nothing fits but the header, the header alone is returned; when not even that fits, "".
 *
 * Cost on a 1 MB log with a target of a few hundred tokens: one estimate of the whole text
 * (~1 ms), one regex pass for error keywords over the middle (~2 ms), redaction, scoring and
 * one batch estimate of a few hundred candidate lines (~1 ms each); a few milliseconds.
 */
import { CtxfoldError, notStringError } from "../errors.js";
import { kSecretPatterns, redactSecrets } from "../steps/redact.js";
import { TokenCounter, type Encoding } from "../tokens/token-counter.js";
import type { Summarizer } from "../steps/summarizer.js";

/** A Summarizer that answers synchronously (assignable to Summarizer). */
export type SyncSummarizer = (text: string, targetTokens: number, label: string) => string;

export interface ExtractiveSummarizerOptions {
  /** The counter whose `estimate` the target is checked with. @default a new TokenCounter({ encoding }) */
  counter?: TokenCounter;
  /** Encoding of the default counter (must match `counter.encoding` when both are given). @default "o200k_base" */
  encoding?: Encoding;
}

/** The extractive summariser's constants (see the module comment). */
export const kExtractive = Object.freeze({
  /** A line longer than this is split into sentences, and a sentence longer than this at a space. */
  maxUnitChars: 320,
  /** Lines looked at at each end of the text: max(minSideLines, target). */
  minSideLines: 500,
  /** Characters looked at at each end of the text: max(minSideChars, sideCharsPerToken * target). */
  minSideChars: 16_384,
  sideCharsPerToken: 8,
  /** Error-looking lines taken from between the two ends: the first and last half of min(this, max(64, target)). */
  maxMiddleErrorLines: 1000,
  /** Units scoring at least this are salient: cut to fit rather than skipped. */
  salient: 60,
  /** Tokens of room below which no unit is cut to fit. */
  minCutRoom: 5,
  /** A label longer than this is shortened in the header. */
  maxLabelChars: 80,
  /** The line standing for omitted lines. */
  gapMarker: "…",
});

/** An extractive Summarizer over one counter (see summarizeExtractive). */
export function extractiveSummarizer(options: ExtractiveSummarizerOptions = {}): SyncSummarizer {
  const { counter, encoding } = options;
  if (counter !== undefined && (typeof counter?.estimate !== "function" || typeof counter?.estimateMany !== "function")) {
    throw new CtxfoldError("E_BAD_INPUT", "expected a TokenCounter", { path: "options.counter" });
  }
  if (counter && encoding !== undefined && counter.encoding !== encoding) {
    throw new CtxfoldError("E_BAD_INPUT", `counter.encoding is ${counter.encoding}, not ${encoding}`, { path: "options.encoding" });
  }
  const c = counter ?? new TokenCounter(encoding !== undefined ? { encoding } : {});
  const summarize: SyncSummarizer = (text, targetTokens, label) => summarizeExtractive(text, targetTokens, label, c);
  return summarize satisfies Summarizer;
}

interface Unit {
  /** The unit's text, secrets redacted, trailing whitespace removed. */
  text: string;
  /** The whitespace that followed it within its line ("" at the end of a line). */
  sep: string;
  /** Its line in the input (the sentinel's: the number of lines, as countLines gives it). */
  line: number;
  /** It continues the previous unit's line with nothing between them but `sep`. */
  sameLineAsPrev: boolean;
  /** Something non-blank of the input lies between the previous unit and this one. */
  omittedBefore: boolean;
  score: number;
}

/**
 * `text` summarised within `targetTokens` (by `counter.estimate`), extractively: see the module
 * comment. Deterministic: the same text, target, label and encoding give the same summary.
 */
export function summarizeExtractive(text: string, targetTokens: number, label: string, counter: TokenCounter): string {
  if (typeof text !== "string") throw notStringError("text", text);
  if (typeof targetTokens !== "number" || Number.isNaN(targetTokens)) {
    throw new CtxfoldError("E_BAD_INPUT", "expected a number of tokens", { path: "targetTokens" });
  }
  const target = Math.floor(targetTokens);
  if (target <= 0 || text.length === 0) return "";
  const origTokens = counter.estimate(text);
  if (origTokens <= target) {
    const redacted = redactSecrets(text);
    if (redacted === text || counter.estimate(redacted) <= target) return redacted;
  }

  // A private-key block spans lines, which the per-line redaction below would not see whole.
  if (text.includes("PRIVATE KEY")) text = redactSecrets(text, kSecretPatterns.filter((p) => p.kind === "private-key"));

  const units = collectUnits(text, target);
  scoreUnits(units);
  return fill(units, target, origTokens, units[units.length - 1].line, oneLineLabel(label), counter);
}

// ---------------------------------------------------------------------------------------------
// Units and candidates

/** Keywords whose lines between the two ends of a huge text are candidates (then checked); used with the g flag. */
const kErrorKeywords = /Error|ERROR|error[:[]|Exception|FAIL|fatal|FATAL|panic|Traceback|Caused by|exit (?:code|status)|exited with|returncode/;

/** Characters a secret is made of: a window of a huge line is never cut between two of them. */
const kSecretChar = /[A-Za-z0-9_\-+/=.~]/;

/** Characters of the middle scanned at a time from the back for error lines. */
const kBackChunk = 64 << 10;

/** Characters of context a cost is measured after (the estimator's features look 7 units back). */
const kContext = 8;

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  if (starts.length > 1 && starts[starts.length - 1] === text.length) starts.pop(); // a trailing newline starts no line
  return starts;
}

function collectUnits(text: string, target: number): Unit[] {
  const starts = lineStartsOf(text);
  const n = starts.length;
  const lineEnd = (i: number): number => {
    let e = i + 1 < n ? starts[i + 1] - 1 : text.length;
    if (e > starts[i] && text.charCodeAt(e - 1) === 13) e--;
    return e;
  };
  const sideLines = Math.max(kExtractive.minSideLines, target);
  const sideChars = Math.max(kExtractive.minSideChars, kExtractive.sideCharsPerToken * target);

  // The first and last lines, bounded by count and characters.
  let headEnd = 0;
  for (let chars = 0; headEnd < n && headEnd < sideLines && chars < sideChars; headEnd++) chars += lineEnd(headEnd) - starts[headEnd];
  let tailStart = n;
  for (let chars = 0; tailStart > headEnd && n - tailStart < sideLines && chars < sideChars; ) {
    tailStart--;
    chars += lineEnd(tailStart) - starts[tailStart];
  }
  const picked: number[] = [];
  for (let i = 0; i < headEnd; i++) picked.push(i);
  const maxMiddle = Math.min(kExtractive.maxMiddleErrorLines, Math.max(64, target));
  if (tailStart > headEnd) picked.push(...middleErrorLines(text, starts, headEnd, tailStart, lineEnd, maxMiddle));
  for (let i = tailStart; i < n; i++) picked.push(i);

  const units: Unit[] = [];
  const seen = new Set<string>();
  let omitted = false;
  let prevEnd = 0; // where the previous picked line ended
  for (const li of picked) {
    const s = starts[li];
    const e = lineEnd(li);
    if (s > prevEnd && !omitted) omitted = s - prevEnd > 4096 || /\S/.test(text.slice(prevEnd, s));
    prevEnd = e;
    const raw = text.slice(s, e);
    const key = raw.trim();
    if (key.length === 0) continue;
    if (seen.has(key)) {
      omitted = true;
      continue;
    }
    seen.add(key);
    // A huge line: only its two ends, cut where no secret can be split.
    const windows = raw.length > 2 * sideChars ? [raw.slice(0, cutForward(raw, sideChars)), raw.slice(cutBackward(raw, raw.length - sideChars))] : [raw];
    windows.forEach((w, wi) => {
      const pieces = splitUnits(redactSecrets(w).trimEnd(), kExtractive.maxUnitChars);
      pieces.forEach((p, pi) => {
        units.push({ text: p.text, sep: p.sep, line: li, sameLineAsPrev: pi > 0, omittedBefore: omitted || (wi > 0 && pi === 0), score: 0 });
        omitted = false;
      });
    });
  }
  if (prevEnd < text.length && !omitted) omitted = text.length - prevEnd > 4096 || /\S/.test(text.slice(prevEnd));
  // The sentinel after the last unit says whether anything was omitted at the end.
  units.push({ text: "", sep: "", line: n, sameLineAsPrev: false, omittedBefore: omitted, score: -1 });
  return units;
}

/**
 * Lines in [from, to) that read as errors: a regex pass for keywords (a line at most once),
 * each hit line checked with the error patterns; the first half of `max` found from the front,
 * the other half from the back (scanned in chunks of kBackChunk characters, last chunk first),
 * so a text dense with errors is not scanned whole.
 */
function middleErrorLines(text: string, starts: number[], from: number, to: number, lineEnd: (i: number) => number, max: number): number[] {
  const re = new RegExp(kErrorKeywords.source, "g");
  const isError = (li: number): boolean => {
    const t = text.slice(starts[li], Math.min(lineEnd(li), starts[li] + 400)).trim();
    return kErrorStart.test(t) || kErrorInline.test(t) || kExitCode.test(t);
  };
  /** Error lines among lines [a, b), in order, at most `limit`. */
  const scan = (a: number, b: number, limit: number): number[] => {
    const found: number[] = [];
    const hi = b < starts.length ? starts[b] : text.length;
    re.lastIndex = starts[a];
    let line = a;
    for (let m = re.exec(text); m !== null && m.index < hi; m = re.exec(text)) {
      while (line + 1 < b && starts[line + 1] <= m.index) line++; // hits come in order: walk, no search
      if (isError(line) && found.push(line) >= limit) break;
      if (line + 1 >= b) break;
      re.lastIndex = starts[line + 1];
    }
    return found;
  };
  const half = Math.max(1, max >> 1);
  const front = scan(from, to, half);
  if (front.length < half) return front; // the whole middle was scanned
  const floor = front[front.length - 1] + 1;
  const back: number[] = [];
  for (let end = to; end > floor && back.length < half; ) {
    // The chunk: from the line holding the position kBackChunk characters before `end`.
    const pos = Math.max(starts[floor], starts[end - 1] - kBackChunk);
    let a = floor;
    let b = end - 1;
    while (a < b) {
      const m = (a + b + 1) >> 1;
      if (starts[m] <= pos) a = m;
      else b = m - 1;
    }
    const found = scan(a, end, Infinity);
    for (let k = found.length - 1; k >= 0 && back.length < half; k--) back.push(found[k]);
    end = a;
  }
  return [...front, ...back.reverse()];
}

/** An end for the head window near `at`, after a character no secret contains. */
function cutForward(s: string, at: number): number {
  for (let i = at; i > at - 1024 && i > 0; i--) if (!kSecretChar.test(s[i - 1])) return i;
  return safeEnd(s, at);
}

/** A start for the tail window near `at`, before a character no secret contains. */
function cutBackward(s: string, at: number): number {
  for (let i = at; i < at + 1024 && i < s.length; i++) if (!kSecretChar.test(s[i])) return i;
  return at < s.length && isLowSurrogate(s.charCodeAt(at)) ? at + 1 : at;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c < 0xdc00;
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c < 0xe000;

/** `end`, moved back one unit when it would split a surrogate pair. */
function safeEnd(s: string, end: number): number {
  return end > 0 && end < s.length && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end)) ? end - 1 : end;
}

const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 0x3000 || c === 0xa0 || c === 11 || c === 12;

/**
 * A line cut into units: whole when at most `max` characters; else at every sentence end
 * (`.` `!` `?` before whitespace; `。` `！` `？` anywhere, with the closing quotes or brackets
 * after them), and a piece still longer than `max` at its last space past half of `max`, else
 * at `max` (outside a surrogate pair). Each unit's trailing whitespace becomes its `sep`.
 */
export function splitUnits(line: string, max: number): { text: string; sep: string }[] {
  if (line.length <= max) return [{ text: line, sep: "" }];
  const out: { text: string; sep: string }[] = [];
  let u = 0; // start of the current unit
  const emit = (end: number): void => {
    let next = end;
    while (next < line.length && isSpace(line.charCodeAt(next))) next++;
    const text = line.slice(u, end).trimEnd();
    if (text.trim().length > 0) out.push({ text, sep: line.slice(u + text.length, next) });
    else if (out.length > 0) out[out.length - 1].sep += line.slice(u, next);
    u = next;
  };
  let i = 0;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 0x3002 || c === 0xff01 || c === 0xff1f) {
      let end = i + 1;
      while (end < line.length && /[”’」』）)\]"']/.test(line[end])) end++;
      emit(end);
      i = u;
      continue;
    }
    if ((c === 46 || c === 33 || c === 63) && i + 1 < line.length && isSpace(line.charCodeAt(i + 1)) && i + 1 - u > 1) {
      emit(i + 1);
      i = u;
      continue;
    }
    if (i + 1 - u >= max) {
      let cut = -1;
      for (let j = i; j > u + (max >> 1); j--) {
        if (isSpace(line.charCodeAt(j))) {
          cut = j;
          break;
        }
      }
      emit(cut !== -1 ? cut : safeEnd(line, i + 1));
      i = u;
      continue;
    }
    i++;
  }
  if (u < line.length) emit(line.length);
  return out.length > 0 ? out : [{ text: line.trim(), sep: "" }];
}

// ---------------------------------------------------------------------------------------------
// Salience

/** errorHead's line patterns (src/steps/detect.ts), at the start of a line. */
const kErrorStart = /^(?:[\w.$]*(?:Error|Exception|Exit)\b|error(?:\[\w+\])?:|ERROR\b|Error\b|fatal:|FATAL\b|FAILED\b|FAIL\b|Traceback \(most recent call last\):|panic:|Caused by:|thread '.*' panicked|.*: (?:command not found|No such file or directory|Permission denied)\b|.*\bdid not appear verbatim\b|No replacement was performed)/;
/** A traceback's cause line: `ValueError: bad`. */
const kCause = /^[\w.$]*(?:Error|Exception)\b/;
/** An error level or error name inside a line: `2024-01-01 ERROR …`, `test_x FAILED`. */
const kErrorInline = /\b(?:ERROR|FATAL|FAILED|FAIL|CRITICAL|[A-Z]\w*(?:Error|Exception)|error(?:\[\w+\])?:|fatal:|panic(?:ked)?:?)(?![\w])/;
/** An exit code (errorHead's kExitPatterns). */
const kExitCode = /<returncode>\s*-?\d+|\b(?:exit(?:ed)?(?: with)?(?: status| code)|exit_code|exitcode|return ?code|returncode)\b["']?\s*[:=]?\s*-?\d+|\bprocess exited with code -?\d+/i;
/** A result or summary line. */
const kResult = /\b(?:\d+ (?:passed|failed|errors?|warnings?|tests?|skipped|succeeded|files? changed)|summary|total|results?|succeeded|success(?:ful(?:ly)?)?|finished|completed|done)\b/i;
const kWarning = /\b(?:warn(?:ing)?s?|deprecated)\b/i;
const kPath = /[\w.-][\\/][\w.-]|\w\.(?:py|ts|tsx|js|jsx|mjs|rs|go|c|h|cc|cpp|java|kt|rb|php|json|md|txt|log|ya?ml|toml|sh|sql|html|css)\b/;
const kHexId = /\b[0-9a-f]{7,64}\b/;
const kKeyValue = /[\w.-][ \t]*[=:][ \t]*\S/;
const kBareLabel = /^(?:error|ERROR|Error|FAILED|FATAL):?$/;

function contentScore(t: string): number {
  if (kCause.test(t)) return 105;
  if (kErrorStart.test(t)) return 100;
  if (kExitCode.test(t)) return 95;
  if (kErrorInline.test(t)) return 90;
  if (kResult.test(t)) return 65;
  if (kWarning.test(t)) return 50;
  const features = (kPath.test(t) ? 1 : 0) + (/\d/.test(t) ? 1 : 0) + (kHexId.test(t) ? 1 : 0) + (kKeyValue.test(t) ? 1 : 0);
  if (features > 0) return 25 + 5 * features;
  return /[\p{L}\p{N}]/u.test(t) ? 15 : 5;
}

function scoreUnits(units: Unit[]): void {
  const n = units.length - 1; // the last is the sentinel
  for (let k = 0; k < n; k++) units[k].score = contentScore(units[k].text.trim());
  // Context of an error: the two units before it (a traceback's frame and code), the one after a bare label.
  for (let k = 0; k < n; k++) {
    const t = units[k].text.trim();
    if (units[k].score >= 100 && !kBareLabel.test(t)) {
      for (const j of [k - 1, k - 2]) if (j >= 0) units[j].score = Math.max(units[j].score, 62);
    }
    if (kBareLabel.test(t) && k + 1 < n) units[k + 1].score = Math.max(units[k + 1].score, 100);
  }
  // The line errorHead reports: the last traceback cause line (`ValueError: …`), else the first error line.
  let head = -1;
  for (let k = n - 1; k >= 0 && head === -1; k--) if (units[k].score === 105) head = k;
  for (let k = 0; k < n && head === -1; k++) if (units[k].score === 100) head = k;
  if (head !== -1) units[head].score = 120;
  // The first and last units: the command or title, and the result.
  [112, 70, 62].forEach((s, k) => k < n && (units[k].score = Math.max(units[k].score, s)));
  [106, 75, 62].forEach((s, k) => n - 1 - k >= 0 && (units[n - 1 - k].score = Math.max(units[n - 1 - k].score, s)));
  // Ties: nearer an end first (a fraction below 1, so it never crosses a score step).
  for (let k = 0; k < n; k++) units[k].score += 0.5 * (1 - Math.min(k, n - 1 - k) / Math.max(1, n / 2));
}

// ---------------------------------------------------------------------------------------------
// Greedy fill and rendering

/** A label as a summary shows it: one line, secrets redacted, at most kExtractive.maxLabelChars ("text" when empty). */
export function oneLineLabel(label: string): string {
  let l = redactSecrets(typeof label === "string" ? label : String(label)).replace(/\s+/g, " ").trim();
  if (l.length > kExtractive.maxLabelChars) l = l.slice(0, safeEnd(l, kExtractive.maxLabelChars - 1)) + "…";
  return l || "text";
}

const header = (label: string, kept: number | string, total: number, orig: number, tokens: number | string): string =>
  `[summary of ${label}: ${kept}/${total} lines, ${orig}→${tokens} tokens]`;

function fill(units: Unit[], target: number, origTokens: number, totalLines: number, label: string, counter: TokenCounter): string {
  const n = units.length - 1;
  const gapLine = kExtractive.gapMarker;
  // Upper bounds of the header: kept <= total, tokens <= target (an estimate grows with digits, not their values).
  const maxHeader = header(label, totalLines, totalLines, origTokens, target);
  // Each unit's cost where it will stand: after a line break (a feature or two differ from the
  // start of a text), and for a sentence continuing its line also after the previous sentence
  // and its separator; the larger of the two. The difference of two estimates is exact: a
  // feature looks at most 7 units back, and the context strings hold 8.
  const joins: number[] = [];
  const texts = units.slice(0, n).map((u) => `\n${u.text}\n`);
  for (let i = 0; i < n; i++) {
    if (!units[i].sameLineAsPrev) continue;
    const tail = units[i - 1].text.slice(-kContext);
    joins.push(i, texts.length);
    texts.push(`${tail}${units[i - 1].sep}${units[i].text}\n`, `${tail}\n`);
  }
  texts.push("\n", `\n${gapLine}\n`, maxHeader + "\n");
  const raw = counter.estimateMany(texts);
  const nl = raw[texts.length - 3];
  const costs = new Float64Array(n);
  for (let i = 0; i < n; i++) costs[i] = raw[i] - nl;
  for (let j = 0; j < joins.length; j += 2) costs[joins[j]] = Math.max(costs[joins[j]], raw[joins[j + 1]] - raw[joins[j + 1] + 1]);
  const gapCost = raw[texts.length - 2] - nl;
  const headerCost = raw[texts.length - 1];
  /** The cost of unit i's text replaced by `s` (a cut), in the same contexts. */
  const costAs = (i: number, s: string): number => {
    if (!units[i].sameLineAsPrev) return counter.estimateMany([`\n${s}\n`])[0] - nl;
    const tail = units[i - 1].text.slice(-kContext);
    const r = counter.estimateMany([`\n${s}\n`, `${tail}${units[i - 1].sep}${s}\n`, `${tail}\n`]);
    return Math.max(r[0] - nl, r[1] - r[2]);
  };
  const withHeader = headerCost <= target / 2;

  const kept = new Uint8Array(n); // 1 whole, 2 cut
  const cutText = new Map<number, string>();
  const sorted: number[] = []; // kept indices, ascending
  const taken: number[] = []; // kept indices, in the order taken (the reverse is the order to drop)
  let used = withHeader ? headerCost : 0;
  let gaps = 0; // gap markers with the kept units so far (0 while none is kept)

  const gap = (a: number, b: number): boolean => b - a > 1 || units[b].omittedBefore || (a >= 0 && kept[a] === 2);
  const neighbours = (i: number): [number, number, number] => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (sorted[m] < i) lo = m + 1;
      else hi = m;
    }
    return [lo > 0 ? sorted[lo - 1] : -1, lo < sorted.length ? sorted[lo] : n, lo];
  };
  /** Gap markers after adding unit i (kept as `mark`). */
  const gapsWith = (i: number, mark: 1 | 2): number => {
    const [p, s] = neighbours(i);
    const before = sorted.length === 0 ? 0 : +gap(p, s);
    const old = kept[i];
    kept[i] = mark;
    const after = +gap(p, i) + +gap(i, s);
    kept[i] = old;
    return gaps - before + after;
  };
  const take = (i: number, mark: 1 | 2, cost: number, newGaps: number): void => {
    const [, , at] = neighbours(i);
    sorted.splice(at, 0, i);
    kept[i] = mark;
    taken.push(i);
    used += cost;
    gaps = newGaps;
  };
  const room = (newGaps: number): number => target - used - newGaps * gapCost;

  /** Tries to cut unit i to fit the room left; true when it did. */
  const tryCut = (i: number): boolean => {
    const g = gapsWith(i, 2);
    const r = room(g);
    if (r < kExtractive.minCutRoom) return false;
    const cut = cutToFit(units[i].text, r, (t) => costAs(i, t));
    if (cut === undefined) return false;
    cutText.set(i, cut.text);
    take(i, 2, cut.cost, g);
    return true;
  };

  const order = Array.from({ length: n }, (_, k) => k).sort((a, b) => units[b].score - units[a].score || a - b);
  let bestSkipped = -1;
  for (const i of order) {
    const g = gapsWith(i, 1);
    if (costs[i] <= room(g)) take(i, 1, costs[i], g);
    else if (units[i].score >= kExtractive.salient) tryCut(i);
    else if (bestSkipped === -1) bestSkipped = i;
  }
  if (bestSkipped !== -1) tryCut(bestSkipped);

  const render = (): string => {
    let body = "";
    let prev = -1;
    for (const i of sorted) {
      if (gap(prev, i)) body += prev === -1 ? `${gapLine}\n` : kept[prev] === 2 ? "\n" : `\n${gapLine}\n`;
      else if (prev !== -1) body += units[i].sameLineAsPrev ? units[prev].sep : "\n";
      body += kept[i] === 2 ? cutText.get(i) : units[i].text;
      prev = i;
    }
    if (prev !== -1 && gap(prev, n) && kept[prev] !== 2) body += `\n${gapLine}`;
    if (!withHeader) return body;
    const keptLines = new Set(sorted.map((i) => units[i].line)).size;
    // The header states the output's own estimate: settle the number (it changes only with its digit count).
    let tokens = Math.min(target, Math.round(used + gaps * gapCost));
    let out = "";
    for (let round = 0; round < 3; round++) {
      out = header(label, keptLines, totalLines, origTokens, tokens) + (body ? "\n" + body : "");
      const actual = counter.estimate(out);
      if (actual === tokens) break;
      tokens = actual;
    }
    return out;
  };

  let out = render();
  // A guard (the sums are upper bounds): drop the lowest-ranked units until the whole fits.
  while (counter.estimate(out) > target) {
    const i = taken.pop();
    if (i === undefined) return withHeader && counter.estimate(out) <= target ? out : "";
    sorted.splice(sorted.indexOf(i), 1);
    kept[i] = 0;
    gaps = sorted.length === 0 ? 0 : countGaps(sorted, gap, n);
    out = render();
  }
  return out;
}

function countGaps(sorted: number[], gap: (a: number, b: number) => boolean, n: number): number {
  let g = 0;
  let prev = -1;
  for (const i of sorted) {
    g += +gap(prev, i);
    prev = i;
  }
  return g + +gap(prev, n);
}

/**
 * The longest prefix of `text` that, cut at a word boundary and ended with `…`, costs at most
 * `room` by `cost` (unrounded, in context); undefined when not even a word fits. Exponential
 * then binary search over the prefix length: a prefix's estimate never exceeds the whole's.
 */
function cutToFit(text: string, room: number, cost: (s: string) => number): { text: string; cost: number } | undefined {
  const costOf = (len: number): number => cost(text.slice(0, len) + "…");
  let good = 0;
  let bad = text.length;
  for (let len = 16; len < text.length; len *= 2) {
    if (costOf(len) <= room) good = len;
    else {
      bad = len;
      break;
    }
  }
  while (bad - good > 1) {
    const m = (good + bad) >> 1;
    if (costOf(m) <= room) good = m;
    else bad = m;
  }
  if (good === 0) return undefined;
  let end = safeEnd(text, good);
  // Back to a word boundary when the text has one in the second half of the prefix (not in CJK runs).
  for (let j = end; j > end >> 1; j--) {
    if (isSpace(text.charCodeAt(j)) || j === text.length) {
      end = j;
      break;
    }
  }
  const prefix = text.slice(0, end).trimEnd();
  if (prefix.trim().length === 0) return undefined;
  const out = prefix + "…";
  const c = cost(out);
  return c <= room ? { text: out, cost: c } : undefined;
}
