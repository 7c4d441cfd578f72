/**
 * The extractive summariser: the tiered policy's deterministic fallback, and a summariser in its
 * own right when no model is wanted. It keeps whole lines (or sentences) of the input, in their
 * original order, chosen by a salience score, and it is within the target by construction: the
 * counter's `estimate` of the result is at most `targetTokens`. There is no model and no retry
 * loop, so the tiered policy's "compactor churn" (an LLM compactor retrying `output_exceeds_target` five
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
import { fill, oneLineLabel } from "./extractive-fill.js";
import { scoreUnits } from "./extractive-salience.js";
import { collectUnits } from "./extractive-units.js";

export { oneLineLabel } from "./extractive-fill.js";
export { kExtractive, splitUnits } from "./extractive-units.js";

/** A Summarizer that answers synchronously (assignable to Summarizer). */
export type SyncSummarizer = (text: string, targetTokens: number, label: string) => string;

export interface ExtractiveSummarizerOptions {
  /** The counter whose `estimate` the target is checked with. @default a new TokenCounter({ encoding }) */
  counter?: TokenCounter;
  /** Encoding of the default counter (must match `counter.encoding` when both are given). @default "o200k_base" */
  encoding?: Encoding;
}

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
  if (text.includes("PRIVATE KEY"))
    text = redactSecrets(
      text,
      kSecretPatterns.filter((p) => p.kind === "private-key"),
    );

  const units = collectUnits(text, target);
  scoreUnits(units);
  return fill(units, target, origTokens, units[units.length - 1].line, oneLineLabel(label), counter);
}
