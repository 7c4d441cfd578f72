/**
 * The focus of a work: what the current step is about, as specific terms (src/model/terms.ts),
 * and the lines of an older tool output that name it. Stage 2 keeps those lines beside an
 * output's observation and ref, so the names the agent is working with survive the output's
 * replacement.
 *
 * - **Focus terms** (`focusTerms`): the specific terms of the latest assistant text and its
 *   tool-call arguments, of the calls of the steps kept whole at the end (the preserved tail),
 *   of the latest user message and of the task (the first user message), in that order,
 *   distinct, at most kMaxFocusTerms (the latest first: a long task gives way). Arguments are
 *   read as `argumentTexts` reads them (a JSON argument's string leaves), secret-named fields
 *   left out (a secret is not a focus: lines naming it would echo it).
 * - **Focus lines** (`focusLines`): the lines of an output holding a focus term as a whole
 *   (containsTerm's rule, found in one pass by the term-lines kernel), ranked by how many
 *   distinct terms they hold, then error lines (steps/detect.ts isErrorLine) first, then nearer
 *   the end; taken in rank order while they fit `maxTokens`, and shown in the output's order,
 *   each led by its line number (from 1), secrets redacted. A line longer than kMaxLineChars
 *   shows the neighbourhoods of its terms. Binary outputs give none; enormous ones are scanned in their
 *   first and last kScanWindowChars only.
 */
import { hashText, hashToHex } from "../../core/hash.js";
import { TermSet, termLines } from "./term-lines.js";
import type { Message } from "../../model/schema.js";
import { argumentTexts, indexOfTerm, specificTerms } from "../../model/terms.js";
import { isBinaryText, isErrorLine } from "../../steps/detect.js";
import { isSecretKey, redactSecrets } from "../../steps/redact.js";
import { defaultTokenCounter } from "../../tokens/token-counter.js";
import { anchorIndices } from "../classify.js";

/** Focus terms kept at most: bounds the work per output (the kernel's tables and the clipping). */
export const kMaxFocusTerms = 256;
/** Characters scanned at each end of an enormous output. */
const kScanWindowChars = 128 << 10;
/** A shown line longer than this is clipped to the neighbourhoods of its terms. */
const kMaxLineChars = 240;
/** Characters on each side of a term that a clipped line keeps. */
const kClipContext = 40;
/** A clipped line looks for its terms in its first this many characters. */
const kClipScanChars = 16 << 10;
/** Ranked lines tried against the token cap at most. */
const kMaxTried = 64;
/** The line that introduces an output's focus lines. */
export const kFocusHeader = "focus lines:";

/** The focus terms of `msgs` whose preserved tail starts at `tail` (see the module comment). */
export function focusTerms(msgs: readonly Message[], tail: number): string[] {
  const { firstUser, latestUser, latestAssistantText } = anchorIndices(msgs);
  const texts: string[] = [];
  const read = (i: number, text: boolean) => {
    if (i < 0) return;
    for (const p of msgs[i].parts) {
      if (p.type === "text" && text) texts.push(p.text);
      else if (p.type === "tool-call") argumentTexts(p.args, texts, isSecretKey);
    }
  };
  read(latestAssistantText, true);
  for (let i = msgs.length - 1; i >= tail && i >= 0; i--) if (i !== latestAssistantText && msgs[i].role === "assistant") read(i, false);
  if (latestUser !== firstUser) read(latestUser, true);
  read(firstUser, true);
  const seen = new Set<string>();
  for (const t of texts) {
    for (const term of specificTerms(t)) {
      if (seen.size >= kMaxFocusTerms) return [...seen];
      seen.add(term);
    }
  }
  return [...seen];
}

/** A focus made ready for many outputs: its terms, their kernel form, and a key naming the term list (memo keys). */
export class Focus {
  readonly set: TermSet;
  readonly key: string;
  constructor(readonly terms: readonly string[]) {
    this.set = new TermSet(terms);
    this.key = hashToHex(hashText(terms.join("\n")));
  }
}

const defaultTokens = (s: string) => Math.ceil(defaultTokenCounter().estimate(s));

/** One candidate line: its index in the output, distinct terms, whether it reads as an error, and its text. */
interface Candidate {
  line: number;
  terms: number;
  error: boolean;
  text: string;
}

/**
 * The focus lines of `text` within about `maxTokens` (see the module comment), rendered as a
 * block led by kFocusHeader; "" when no line names the focus or none fits. `tokensOf` is the
 * measure the cap is in (the compactor passes its own).
 */
export function focusLines(text: string, focus: Focus | readonly string[], maxTokens: number, tokensOf: (s: string) => number = defaultTokens): string {
  const f = focus instanceof Focus ? focus : new Focus(focus);
  if (!(maxTokens > 0) || text === "" || f.terms.length === 0 || isBinaryText(text)) return "";
  const windows = scanWindows(text);
  const { pairs, ends } = termLines(
    windows.map((w) => w.text),
    f.set,
  );
  const candidates: Candidate[] = [];
  windows.forEach((w, k) => {
    const from = k > 0 ? ends[k - 1] : 0;
    const wanted: number[] = [];
    for (let j = from; j < ends[k]; j++) wanted.push(pairs[2 * j]);
    const texts = linesAt(w.text, wanted);
    for (let j = from; j < ends[k]; j++) {
      const t = texts[j - from];
      candidates.push({ line: w.firstLine + pairs[2 * j], terms: pairs[2 * j + 1], error: isErrorLine(t), text: t });
    }
  });
  if (candidates.length === 0) return "";
  candidates.sort((a, b) => b.terms - a.terms || Number(b.error) - Number(a.error) || b.line - a.line);
  let left = maxTokens - tokensOf(kFocusHeader) - 1;
  const chosen: { line: number; shown: string }[] = [];
  const shownTexts = new Set<string>();
  for (const c of candidates.slice(0, kMaxTried)) {
    const body = redactSecrets(clipLine(c.text.trimEnd(), f.terms));
    if (shownTexts.has(body)) continue;
    const shown = `${c.line + 1}: ${body}`;
    const cost = tokensOf(shown) + 1;
    if (cost > left) continue;
    left -= cost;
    chosen.push({ line: c.line, shown });
    shownTexts.add(body);
  }
  if (chosen.length === 0) return "";
  chosen.sort((a, b) => a.line - b.line);
  return [kFocusHeader, ...chosen.map((c) => c.shown)].join("\n");
}

/** The parts of `text` scanned: all of it, or for an enormous one its first and last kScanWindowChars cut at line ends. */
function scanWindows(text: string): { text: string; firstLine: number }[] {
  if (text.length <= 2 * kScanWindowChars) return [{ text, firstLine: 0 }];
  const headEnd = text.lastIndexOf("\n", kScanWindowChars);
  const head = text.slice(0, headEnd > 0 ? headEnd : kScanWindowChars);
  const tailStart = text.indexOf("\n", text.length - kScanWindowChars) + 1 || text.length - kScanWindowChars;
  let firstLine = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < tailStart; i = text.indexOf("\n", i + 1)) firstLine++;
  return [
    { text: head, firstLine: 0 },
    { text: text.slice(tailStart), firstLine },
  ];
}

/** The texts of lines `wanted` (ascending indices, from 0) of `text`, one walk over its newlines. */
function linesAt(text: string, wanted: readonly number[]): string[] {
  const out: string[] = [];
  let line = 0;
  let start = 0;
  for (const w of wanted) {
    while (line < w) {
      start = text.indexOf("\n", start) + 1;
      line++;
    }
    const end = text.indexOf("\n", start);
    out.push(text.slice(start, end < 0 ? text.length : end).replace(/\r$/, ""));
  }
  return out;
}

/**
 * A line within kMaxLineChars: as it is when short, else the neighbourhoods (kClipContext
 * characters each side) of the focus terms it holds in its first kClipScanChars, in order,
 * joined by "…", until the length is reached; its head when no term is found there.
 */
function clipLine(line: string, terms: readonly string[]): string {
  if (line.length <= kMaxLineChars) return line;
  const region = line.slice(0, kClipScanChars);
  const spans: [number, number][] = [];
  for (const term of terms) {
    const at = indexOfTerm(region, term);
    if (at >= 0) spans.push([Math.max(0, at - kClipContext), Math.min(line.length, at + term.length + kClipContext)]);
  }
  if (spans.length === 0) return line.slice(0, kMaxLineChars - 1) + "…";
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: [number, number][] = [];
  let used = 0;
  for (const [a, b] of spans) {
    const last = merged[merged.length - 1];
    const grow = last && a <= last[1] ? Math.max(0, b - last[1]) : b - a;
    if (used + grow > kMaxLineChars && merged.length > 0) break;
    used += grow;
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  const body = merged.map(([a, b]) => line.slice(a, b)).join(" … ");
  return (merged[0][0] > 0 ? "…" : "") + body + (merged[merged.length - 1][1] < line.length ? "…" : "");
}
