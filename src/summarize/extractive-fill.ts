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
  let l = redactSecrets(typeof label === "string" ? label : String(label))
    .replace(/\s+/g, " ")
    .trim();
  if (l.length > kExtractive.maxLabelChars) l = l.slice(0, safeEnd(l, kExtractive.maxLabelChars - 1)) + "…";
  return l || "text";
}

const header = (label: string, kept: number | string, total: number, orig: number, tokens: number | string): string =>
  `[summary of ${label}: ${kept}/${total} lines, ${orig}→${tokens} tokens]`;

/** What the units cost where they will stand in the summary (see measureCosts). */
interface FillCosts {
  /** Each unit's cost (the sentinel's excluded). */
  units: Float64Array;
  /** A gap marker's cost, and the header's at its upper bound. */
  gap: number;
  header: number;
  /** The cost of unit i's text replaced by `s` (a cut), in the same contexts. */
  as(i: number, s: string): number;
}

/** The header's numbers: the summarised text's lines and tokens under its label. */
interface HeaderFacts {
  label: string;
  totalLines: number;
  origTokens: number;
}

/**
 * Each unit's cost where it will stand: after a line break (a feature or two differ from the
 * start of a text), and for a sentence continuing its line also after the previous sentence and
 * its separator; the larger of the two. The difference of two estimates is exact: a feature
 * looks at most 7 units back, and the context strings hold 8. One batch estimate for all.
 */
function measureCosts(units: readonly Unit[], n: number, maxHeader: string, counter: TokenCounter): FillCosts {
  const joins: number[] = [];
  const texts = units.slice(0, n).map((u) => `\n${u.text}\n`);
  for (let i = 0; i < n; i++) {
    if (!units[i].sameLineAsPrev) continue;
    const tail = units[i - 1].text.slice(-kContext);
    joins.push(i, texts.length);
    texts.push(`${tail}${units[i - 1].sep}${units[i].text}\n`, `${tail}\n`);
  }
  texts.push("\n", `\n${kExtractive.gapMarker}\n`, maxHeader + "\n");
  const raw = counter.estimateMany(texts);
  const nl = raw[texts.length - 3];
  const costs = new Float64Array(n);
  for (let i = 0; i < n; i++) costs[i] = raw[i] - nl;
  for (let j = 0; j < joins.length; j += 2) costs[joins[j]] = Math.max(costs[joins[j]], raw[joins[j + 1]] - raw[joins[j + 1] + 1]);
  const as = (i: number, s: string): number => {
    if (!units[i].sameLineAsPrev) return counter.estimateMany([`\n${s}\n`])[0] - nl;
    const tail = units[i - 1].text.slice(-kContext);
    const r = counter.estimateMany([`\n${s}\n`, `${tail}${units[i - 1].sep}${s}\n`, `${tail}\n`]);
    return Math.max(r[0] - nl, r[1] - r[2]);
  };
  return { units: costs, gap: raw[texts.length - 2] - nl, header: raw[texts.length - 1], as };
}

/**
 * The units kept so far, whole or cut, with the tokens they and their gap markers use. A gap
 * marker stands where kept units are not neighbours in the input, where something was omitted
 * between them, and after a cut unit.
 */
class Selection {
  /** Per unit: 0 not kept, 1 kept whole, 2 kept cut. */
  readonly kept: Uint8Array;
  /** The text of each unit kept cut. */
  readonly cutText = new Map<number, string>();
  /** Kept indices, ascending. */
  readonly sorted: number[] = [];
  /** Kept indices in the order taken (the reverse is the order to drop). */
  readonly taken: number[] = [];
  /** Gap markers with the kept units so far (0 while none is kept). */
  gaps = 0;

  constructor(
    readonly units: readonly Unit[],
    /** Units that can be kept (the sentinel excluded). */
    readonly n: number,
    readonly target: number,
    readonly gapCost: number,
    /** Tokens used by what is kept, the header included when there is one. */
    public used: number,
  ) {
    this.kept = new Uint8Array(n);
  }

  /** Whether a gap marker stands between kept units a and b (a = -1: the start; b = n: the end). */
  gap(a: number, b: number): boolean {
    return b - a > 1 || this.units[b].omittedBefore || (a >= 0 && this.kept[a] === 2);
  }

  /** The tokens left for units when there are `newGaps` gap markers. */
  room(newGaps: number): number {
    return this.target - this.used - newGaps * this.gapCost;
  }

  /** The estimate of what is kept with its gap markers. */
  estimate(): number {
    return this.used + this.gaps * this.gapCost;
  }

  /** Gap markers after adding unit i (kept as `mark`). */
  gapsWith(i: number, mark: 1 | 2): number {
    const [p, s] = this.neighbours(i);
    const before = this.sorted.length === 0 ? 0 : +this.gap(p, s);
    const old = this.kept[i];
    this.kept[i] = mark;
    const after = +this.gap(p, i) + +this.gap(i, s);
    this.kept[i] = old;
    return this.gaps - before + after;
  }

  /** Keeps unit i as `mark` at `cost`, with `newGaps` gap markers from then on. */
  take(i: number, mark: 1 | 2, cost: number, newGaps: number): void {
    const [, , at] = this.neighbours(i);
    this.sorted.splice(at, 0, i);
    this.kept[i] = mark;
    this.taken.push(i);
    this.used += cost;
    this.gaps = newGaps;
  }

  /** Drops the unit taken last; false when nothing is kept. */
  dropLast(): boolean {
    const i = this.taken.pop();
    if (i === undefined) return false;
    this.sorted.splice(this.sorted.indexOf(i), 1);
    this.kept[i] = 0;
    this.gaps = this.sorted.length === 0 ? 0 : this.countGaps();
    return true;
  }

  /** The kept units next to unit i (-1 and n where there is none) and where i goes in `sorted`. */
  private neighbours(i: number): [number, number, number] {
    const sorted = this.sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (sorted[m] < i) lo = m + 1;
      else hi = m;
    }
    return [lo > 0 ? sorted[lo - 1] : -1, lo < sorted.length ? sorted[lo] : this.n, lo];
  }

  private countGaps(): number {
    let g = 0;
    let prev = -1;
    for (const i of this.sorted) {
      g += +this.gap(prev, i);
      prev = i;
    }
    return g + +this.gap(prev, this.n);
  }
}

/** The summary of scored `units` within `target` tokens, headed by `label` when the header fits (see extractive.ts). */
export function fill(units: Unit[], target: number, origTokens: number, totalLines: number, label: string, counter: TokenCounter): string {
  const n = units.length - 1;
  // Upper bounds of the header: kept <= total, tokens <= target (an estimate grows with digits, not their values).
  const costs = measureCosts(units, n, header(label, totalLines, totalLines, origTokens, target), counter);
  const withHeader = costs.header <= target / 2;
  const sel = new Selection(units, n, target, costs.gap, withHeader ? costs.header : 0);
  fillBySalience(sel, costs);
  const head: HeaderFacts | undefined = withHeader ? { label, totalLines, origTokens } : undefined;
  let out = render(sel, head, counter);
  // A guard (the sums are upper bounds): drop the lowest-ranked units until the whole fits;
  // when nothing is left to drop, not even the header alone fits.
  while (counter.estimate(out) > target) {
    if (!sel.dropLast()) return "";
    out = render(sel, head, counter);
  }
  return out;
}

/**
 * The greedy fill: units in salience order (ties in input order), each kept whole while it fits
 * the room left; a salient one that does not fit is cut to fit, and so, at the end, is the best
 * unit skipped for want of room.
 */
function fillBySalience(sel: Selection, costs: FillCosts): void {
  const units = sel.units;
  const order = Array.from({ length: sel.n }, (_, k) => k).sort((a, b) => units[b].score - units[a].score || a - b);
  let bestSkipped = -1;
  for (const i of order) {
    const g = sel.gapsWith(i, 1);
    if (costs.units[i] <= sel.room(g)) sel.take(i, 1, costs.units[i], g);
    else if (units[i].score >= kExtractive.salient) tryCut(sel, costs, i);
    else if (bestSkipped === -1) bestSkipped = i;
  }
  if (bestSkipped !== -1) tryCut(sel, costs, bestSkipped);
}

/** Tries to keep unit i cut to fit the room left; true when it did. */
function tryCut(sel: Selection, costs: FillCosts, i: number): boolean {
  const g = sel.gapsWith(i, 2);
  const r = sel.room(g);
  if (r < kExtractive.minCutRoom) return false;
  const cut = cutToFit(sel.units[i].text, r, (t) => costs.as(i, t));
  if (cut === undefined) return false;
  sel.cutText.set(i, cut.text);
  sel.take(i, 2, cut.cost, g);
  return true;
}

/** The kept units in input order: a gap marker where something is omitted, a cut unit ending its line. */
function renderBody(sel: Selection): string {
  const { units, kept, n } = sel;
  const gapLine = kExtractive.gapMarker;
  let body = "";
  let prev = -1;
  for (const i of sel.sorted) {
    if (sel.gap(prev, i)) body += prev === -1 ? `${gapLine}\n` : kept[prev] === 2 ? "\n" : `\n${gapLine}\n`;
    else if (prev !== -1) body += units[i].sameLineAsPrev ? units[prev].sep : "\n";
    body += kept[i] === 2 ? sel.cutText.get(i) : units[i].text;
    prev = i;
  }
  if (prev !== -1 && sel.gap(prev, n) && kept[prev] !== 2) body += `\n${gapLine}`;
  return body;
}

/** The summary: the body under its header when there is one (`head`). */
function render(sel: Selection, head: HeaderFacts | undefined, counter: TokenCounter): string {
  const body = renderBody(sel);
  if (!head) return body;
  const keptLines = new Set(sel.sorted.map((i) => sel.units[i].line)).size;
  // The header states the output's own estimate: settle the number (it changes only with its digit count).
  let tokens = Math.min(sel.target, Math.round(sel.estimate()));
  let out = "";
  for (let round = 0; round < 3; round++) {
    out = header(head.label, keptLines, head.totalLines, head.origTokens, tokens) + (body ? "\n" + body : "");
    const actual = counter.estimate(out);
    if (actual === tokens) break;
    tokens = actual;
  }
  return out;
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
