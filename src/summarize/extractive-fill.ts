/**
 * The extractive summariser's greedy fill and rendering (steps 4 and 5 of extractive.ts's module
 * comment): units taken in salience order while their estimates, measured where they will stand,
 * stay within the target; salient ones cut to fit; the header and gap markers; the final guard.
 */
import { redactSecrets } from "../steps/redact.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import { isSpace, kExtractive, safeEnd, type Unit } from "./extractive-units.js";

/** Characters of context a cost is measured after (the estimator's features look 7 units back). */
const kContext = 8;

/** A label as a summary shows it: one line, secrets redacted, at most kExtractive.maxLabelChars ("text" when empty). */
export function oneLineLabel(label: string): string {
  let l = redactSecrets(typeof label === "string" ? label : String(label)).replace(/\s+/g, " ").trim();
  if (l.length > kExtractive.maxLabelChars) l = l.slice(0, safeEnd(l, kExtractive.maxLabelChars - 1)) + "…";
  return l || "text";
}

const header = (label: string, kept: number | string, total: number, orig: number, tokens: number | string): string =>
  `[summary of ${label}: ${kept}/${total} lines, ${orig}→${tokens} tokens]`;

/** The summary of scored `units` within `target` tokens, headed by `label` when the header fits (see extractive.ts). */
export function fill(units: Unit[], target: number, origTokens: number, totalLines: number, label: string, counter: TokenCounter): string {
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
