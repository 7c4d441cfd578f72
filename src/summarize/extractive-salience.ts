/**
 * The extractive summariser's salience (step 3 of extractive.ts's module comment): each unit
 * scored by what it reads as (an error, its cause, an exit code, a result, …) and where it
 * stands (the ends of the text, the context of an error), deterministically.
 */
import { kErrorInline, kErrorStart, kExitCode, type Unit } from "./extractive-units.js";

/** A traceback's cause line: `ValueError: bad`. */
const kCause = /^[\w.$]*(?:Error|Exception)\b/;
/** A result or summary line. */
const kResult =
  /\b(?:\d+ (?:passed|failed|errors?|warnings?|tests?|skipped|succeeded|files? changed)|summary|total|results?|succeeded|success(?:ful(?:ly)?)?|finished|completed|done)\b/i;
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

export function scoreUnits(units: Unit[]): void {
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
