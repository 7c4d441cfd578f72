/**
 * The rough content class of a corpus text, for the calibration scripts' reports
 * (`npm run calibrate`, `npm run calibrate:models`): what a text mostly is, judged by its
 * characters and its lines. Reporting only: nothing in ctxfold's counting depends on it.
 */
export const kClasses = ["prose", "code", "json", "logs", "cjk", "emoji", "intl"] as const;
export type ContentClass = (typeof kClasses)[number];

/** A rough content class of a corpus text, for reporting only. */
export function contentClass(t: string): ContentClass {
  let cjk = 0;
  let astral = 0;
  let other = 0;
  for (let i = 0; i < t.length; i++) {
    const u = t.charCodeAt(i);
    if (u < 0x80) continue;
    if ((u >= 0x2e80 && u < 0xa000) || (u >= 0xac00 && u < 0xd7b0)) cjk++;
    else if (u >= 0xd800 && u < 0xdc00) astral++;
    else other++;
  }
  const n = Math.max(1, t.length);
  if (cjk / n > 0.1) return "cjk";
  if (astral / n > 0.02) return "emoji";
  if (other / n > 0.1) return "intl";
  const s = t.trimStart();
  if ((s.startsWith("{") || s.startsWith("[")) && /[}\]]\s*$/.test(t)) return "json";
  const lines = t.split("\n");
  const logish = lines.filter((l) => /^(\s*at |\s*File "|\[?\d{4}-\d\d-\d\d|[A-Z]+:|\s*\d+ |[-drwx]{10} |Traceback|\+\+\+|---|@@)/.test(l)).length;
  if (lines.length > 3 && logish / lines.length > 0.3) return "logs";
  const codeish = lines.filter((l) => /[;{}]\s*$|^\s*(def|class|import|from|return|if|for|const|let|function)\b|^\s{4,}\S/.test(l)).length;
  if (lines.length > 3 && codeish / lines.length > 0.3) return "code";
  return "prose";
}
