/**
 * Escaping and number formatting for the HTML report (html.ts): every text from the data goes
 * through `esc`, every SVG coordinate through `coord`, and a value that is not a finite number
 * prints as "n/a" (or 0 / "" where a coordinate or an attribute needs one).
 */

/** The text `s` safe in HTML text and in a quoted attribute value. */
export function esc(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => kEntities[c]);
}
const kEntities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** A coordinate for an SVG attribute: one decimal, 0 for anything non-finite. */
export function coord(v: number): string {
  if (!isNum(v)) return "0";
  const r = Math.round(v * 10) / 10;
  return String(r === 0 ? 0 : r);
}

/** An integer with thousands separators ("n/a" when not a finite number). */
export function int(v: number | null | undefined): string {
  return isNum(v) ? Math.round(v).toLocaleString("en-US") : "n/a";
}
/** A share as a percentage with one decimal, more when one would round a miss to 100% or a hit to 0%. */
export function share(v: number | null | undefined): string {
  if (!isNum(v)) return "n/a";
  const p = v * 100;
  let digits = 1;
  while (digits < 4 && ((p < 100 && Number(p.toFixed(digits)) >= 100) || (p > 0 && Number(p.toFixed(digits)) <= 0))) digits++;
  return `${p.toFixed(digits)}%`;
}
/** A number for a data-* attribute ("" when not finite). */
export const attrNum = (v: number): string => (isNum(v) ? String(v) : "");
export function ratio(v: number | null | undefined): string {
  return isNum(v) ? `${v.toFixed(v < 0.1 ? 3 : 2)}×` : "n/a";
}
/** Two decimals below 10, one below 100, else a whole number with separators; `unit` after it. */
const magnitude =
  (unit: string) =>
  (v: number | null | undefined): string =>
    isNum(v) ? `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString("en-US")}${unit}` : "n/a";
export const ms = magnitude(" ms");
export const perSecond = magnitude("/s");
/** A tick label: 500 → "500", 2,500 → "2.5k", 1,200,000 → "1.2M". */
export function compact(v: number): string {
  const trim = (x: number) => String(Math.round(x * 100) / 100);
  if (Math.abs(v) >= 1e6) return `${trim(v / 1e6)}M`;
  if (Math.abs(v) >= 1e3) return `${trim(v / 1e3)}k`;
  return Math.round(v * 100) % 100 === 0 ? int(v) : trim(v);
}

/** Nice tick values in [0, max]: steps of 1, 2, 2.5 or 5 × 10^k, about `count` of them. */
export function ticks(max: number, count: number, integer: boolean): number[] {
  if (!isNum(max) || max <= 0) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
  if (integer) step = Math.max(1, Math.ceil(step));
  const out: number[] = [];
  for (let i = 0; i * step <= max * (1 + 1e-9) && out.length < 100; i++) out.push(Math.round(i * step * 1e6) / 1e6);
  return out;
}
