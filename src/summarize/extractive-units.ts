/**
 * The extractive summariser's units and candidates (steps 1 and 2 of extractive.ts's module
 * comment): a text cut into lines, a long line into sentences, only the two ends of a huge text
 * and the error lines between them looked at, secrets redacted per candidate line.
 */
import { redactSecrets, secretAcross } from "../steps/redact.js";

/** The extractive summariser's constants (see extractive.ts's module comment). */
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

/** errorHead's line patterns (src/steps/detect.ts), at the start of a line. */
export const kErrorStart =
  /^(?:[\w.$]*(?:Error|Exception|Exit)\b|error(?:\[\w+\])?:|ERROR\b|Error\b|fatal:|FATAL\b|FAILED\b|FAIL\b|Traceback \(most recent call last\):|panic:|Caused by:|thread '.*' panicked|.*: (?:command not found|No such file or directory|Permission denied)\b|.*\bdid not appear verbatim\b|No replacement was performed)/;
/** An error level or error name inside a line: `2024-01-01 ERROR …`, `test_x FAILED`. */
export const kErrorInline = /\b(?:ERROR|FATAL|FAILED|FAIL|CRITICAL|[A-Z]\w*(?:Error|Exception)|error(?:\[\w+\])?:|fatal:|panic(?:ked)?:?)(?![\w])/;
/** An exit code (errorHead's kExitPatterns). */
export const kExitCode =
  /<returncode>\s*-?\d+|\b(?:exit(?:ed)?(?: with)?(?: status| code)|exit_code|exitcode|return ?code|returncode)\b["']?\s*[:=]?\s*-?\d+|\bprocess exited with code -?\d+/i;

/** A candidate of the summary: a line, or a sentence or piece of a long one. */
export interface Unit {
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

/** Keywords whose lines between the two ends of a huge text are candidates (then checked); used with the g flag. */
const kErrorKeywords = /Error|ERROR|error[:[]|Exception|FAIL|fatal|FATAL|panic|Traceback|Caused by|exit (?:code|status)|exited with|returncode/;

/** Characters a secret is made of (A-Z a-z 0-9 _ - + / = . ~), by char code: a window of a huge line is never cut between two of them. */
const kSecretChar = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.~") kSecretChar[c.charCodeAt(0)] = 1;
const isSecretChar = (c: number): boolean => c < 128 && kSecretChar[c] === 1;

/** Characters of the middle scanned at a time from the back for error lines. */
const kBackChunk = 64 << 10;

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  if (starts.length > 1 && starts[starts.length - 1] === text.length) starts.pop(); // a trailing newline starts no line
  return starts;
}

/** The candidate units of `text` for a summary within `target` tokens, in order, then a sentinel (text "", line = the number of lines). */
export function collectUnits(text: string, target: number): Unit[] {
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

/**
 * An end for the head window near `at`: after a character no secret contains, and before any
 * secret the cut would split (secretAcross: a value is never cut off from its name). Inside a
 * token longer than the search (1,024 characters) the cut stays at `at`: no name sits beside it.
 */
export const cutForward = (s: string, at: number): number => secretSafeCut(s, at, kHeadEnd);

/** A start for the tail window near `at`: before a character no secret contains, and past any secret the cut would split. */
export const cutBackward = (s: string, at: number): number => secretSafeCut(s, at, kTailStart);

/** Which way a cut moves: to a boundary it finds, to where it stands when there is none, and out of a secret it would split. */
interface CutSide {
  boundary(s: string, at: number): number;
  stay(s: string, at: number): number;
  outOf(secret: { start: number; end: number }): number;
}

const kHeadEnd: CutSide = { boundary: boundaryBefore, stay: safeEnd, outOf: (secret) => secret.start };
const kTailStart: CutSide = { boundary: boundaryAfter, stay: startAt, outOf: (secret) => secret.end };

/** A cut near `at` on `side` (cutForward, cutBackward); each secret it moves out of moves it one way, so it ends. */
function secretSafeCut(s: string, at: number, side: CutSide): number {
  let i = side.boundary(s, at);
  if (i < 0) return side.stay(s, at);
  for (let across = secretAcross(s, i); across; across = secretAcross(s, i)) {
    const to = side.outOf(across);
    const j = side.boundary(s, to);
    i = j < 0 ? side.stay(s, to) : j;
  }
  return i;
}

/** The latest position in (at - 1024, at], above 0, right after a character no secret contains; -1 when there is none. */
function boundaryBefore(s: string, at: number): number {
  for (let i = at; i > at - 1024 && i > 0; i--) if (!isSecretChar(s.charCodeAt(i - 1))) return i;
  return -1;
}

/** The earliest position in [at, at + 1024), below the end, at a character no secret contains; -1 when there is none. */
function boundaryAfter(s: string, at: number): number {
  for (let i = at; i < at + 1024 && i < s.length; i++) if (!isSecretChar(s.charCodeAt(i))) return i;
  return -1;
}

/** `at`, moved on one unit when it would start inside a surrogate pair. */
function startAt(s: string, at: number): number {
  return at < s.length && isLowSurrogate(s.charCodeAt(at)) ? at + 1 : at;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c < 0xdc00;
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c < 0xe000;

/** `end`, moved back one unit when it would split a surrogate pair. */
export function safeEnd(s: string, end: number): number {
  return end > 0 && end < s.length && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end)) ? end - 1 : end;
}

export const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 0x3000 || c === 0xa0 || c === 11 || c === 12;

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
