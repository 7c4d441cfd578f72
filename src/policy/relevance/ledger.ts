/**
 * The fact ledger: what the removed context established, kept as one compact marked section of
 * the compacted prompt — the files it touched (edited ones said so), the names it used, the
 * errors it met and the decisions it stated — so that a step summary line such as
 * "[step_001..005] 5 file operations" no longer loses every path and name the agent will name
 * again. Built without a model from the messages a stage removes (ledger-facts.ts: stage 3's
 * removed steps and summarised texts, stage 4's merged messages), ranked by how likely a name
 * is to be named again per token of room it takes (fitted on recorded runs: where it was seen
 * — the agent's arguments and the user's words above what a tool printed —, how recently,
 * whether its file was edited, the shape of the name; see termScore), less whatever the kept
 * prompt already shows, and rendered within `ledgerRatio × budget` tokens, names before prose:
 * a name costs a few tokens and is what the next step looks for.
 *
 * Prompt caches: the ledger sits right before the step summary's lines (or a merge's summary),
 * and in a session it grows append-only: the next epoch's ledger starts with the previous
 * epoch's lines, byte for byte (the session hands them over while the conversation extends the
 * one they came from), and appends a block of new facts, so the cached prefix reaches through
 * the old lines. A fresh ledger takes up to seven tenths of its room, each later block at most a
 * quarter; when less than a fifth is left, the ledger starts over (a prefix break, with the facts
 * ranked anew: recent facts are worth more than the room old ones hold). On both corpora pooled,
 * the names a fuller first block keeps are worth more than the cached prefix a half-room block's
 * appends keep: with ledgerRatio 0.2, next-step evidence 90.6% at 8k and 98.0% at 32k for 1,493
 * and 3,354 a call, against 89.7% and 97.7% for 1,468 and 3,318 with half the room at 0.18
 * (docs/eval.md, "Choosing the defaults").
 */
import { termsWithin } from "../../model/terms.js";
import { markOf, marked, type LedgerLine } from "../../model/marks.js";
import type { Message, Part, TextPart } from "../../model/schema.js";
import { oneLine } from "../../steps/rules.js";
import type { ReducedStep } from "../../steps/types.js";
import { FactWindow, isFileTerm } from "./fact-window.js";
import { kSeen } from "./ledger-facts.js";
import { termLines } from "./term-lines.js";
import type { TokenMeasure } from "../../tokens/measure.js";
import type { TokenCounter } from "../../tokens/token-counter.js";

export type { LedgerLine };

/** The first line of a ledger. */
export const kLedgerHeading = "Facts from earlier steps:";
/** What a fresh ledger may fill of its room, what each later block may add, and below what room left it starts over. */
export const kFirstShare = 0.7;
const kNextShare = 0.25;
const kRebuildBelow = 0.2;
/** Error lines and decisions one block shows at most: prose is dear, names are cheap. */
const kMaxErrors = 3;
const kMaxDecisions = 1;
/** Longest error line a ledger shows. */
const kErrorChars = 160;
/** Facts ranked in the first tier, before the rest is (a block at 8k takes fewer). */
const kRankHead = 512;
/** Facts of the ranking a block's first batch reads (see extendLedger). */
const kFirstBatch = 128;
/** Removed messages a ledger reads at most, the latest (bounded work per epoch). */
const kMessages = 256;

/** What a stage removed: the messages, and the reduced steps among them (edits, failures). */
export interface Removed {
  messages: readonly Message[];
  steps: readonly ReducedStep[];
}

/** A name (a file, edited or not, or another name: told apart only for the facts shown), an error line, a decision. */
type Kind = "term" | "error" | "decision";

interface Candidate {
  key: string;
  kind: Kind;
  text: string;
  score: number;
  /** Position of its latest occurrence among the removed messages. */
  last: number;
}

/** Whether `p` is a ledger. */
export const isLedgerPart = (p: Part): boolean => markOf(p)?.kind === "ledger";

/** The tokens the ledger among `messages` takes, by `tokensOf` a message (0 without one). */
export function ledgerTokens(messages: readonly Message[], tokensOf: (m: Message) => number): number {
  const m = messages.find((x) => x.parts.some(isLedgerPart));
  return m === undefined ? 0 : tokensOf(m) - tokensOf({ ...m, parts: m.parts.filter((p) => !isLedgerPart(p)) });
}

/** The lines of the ledger among `messages` (a session's previous output), or none. */
export function ledgerLines(messages: readonly Message[]): readonly LedgerLine[] {
  for (const m of messages)
    for (const p of m.parts) {
      const mark = markOf(p);
      if (mark?.kind === "ledger") return mark.lines;
    }
  return [];
}

/** The weights of a fact's rank (log-odds of being named again, fitted on recorded agent runs). */
const kT = {
  err: 1.5,
  dec: -1,
  args: 0.4,
  user: 0.4,
  output: -0.7,
  onlyOutput: -1.9,
  def: -0.9,
  count: 0.15,
  rec: 0.5,
  rec2: 0.8,
  edited: 0.5,
  number: -0.7,
  dot: 0.4,
  camel: 0.5,
  under: 0.3,
  len: 0.025,
  slash: -0.3,
};

/** Characters a token of a name holds, about (names split finer than prose), and a typical name's tokens. */
const kNameCharsPerToken = 3.2;
const kTypicalNameTokens = 3;

/**
 * How likely a term is to be named again per token it takes (log-odds, fitted on recorded
 * runs, less the log of its tokens against a typical name's): a term the agent wrote in its
 * arguments or a user named rises, one only a tool printed falls far, recent ones rise most,
 * edited files rise; dotted, camelCase and snake_case names (members, functions, modules) and
 * longer names rise, bare numbers fall. A block is a knapsack: ranked by odds alone, one long
 * path takes the room of three short names as likely to be named, so a name's odds are
 * divided by its length in tokens (a typical name of three tokens keeps its odds, which keeps
 * names against error lines and decisions where they were). Chosen on both corpora (docs/eval.md,
 * "How a ledger ranks its names"): more evidence on every source for no more cost.
 */
function termScore(t: string, seen: number, count: number, recency: number, edited: boolean): number {
  return (
    (seen & kSeen.args ? kT.args : 0) +
    (seen & kSeen.user ? kT.user : 0) +
    (seen & kSeen.output ? kT.output : 0) +
    (seen === kSeen.output ? kT.onlyOutput : 0) +
    (seen & kSeen.definition ? kT.def : 0) +
    kT.count * Math.log2(Math.min(count, 16)) +
    kT.rec * recency +
    kT.rec2 * recency * recency +
    (edited ? kT.edited : 0) +
    (/^[+-]?\d/.test(t) ? kT.number : 0) +
    (t.includes(".") ? kT.dot : 0) +
    (/\p{Ll}\p{Lu}/u.test(t) ? kT.camel : 0) +
    (t.includes("_") ? kT.under : 0) +
    kT.len * Math.min(t.length, 40) +
    (t.includes("/") ? kT.slash : 0) -
    Math.log(Math.max(1, t.length / kNameCharsPerToken) / kTypicalNameTokens)
  );
}

/** The window's terms as facts: their keys, scores and window positions, side by side (objects are made only for those the ranking reaches). */
interface TermFacts {
  keys: string[];
  scores: Float64Array;
  last: Int32Array;
}

/**
 * Every fact of the removed messages, scored (see the module comment): the errors and
 * decisions, and the terms; and the files they edited. Bounded work per epoch: the facts of the
 * latest removed messages only (older facts rank low, and a session's earlier epochs put theirs
 * into the lines this ledger starts with), aggregated in `window` (a session's, kept across its
 * epochs).
 */
function candidates(removed: Removed, window: FactWindow): { prose: Candidate[]; terms: TermFacts; edited: Set<string> } {
  const edited = new Set<string>();
  const editCalls = new Set<string>();
  for (const st of removed.steps) {
    if (st.callId === undefined) continue;
    if (st.action === "write") {
      editCalls.add(st.callId);
      if (typeof st.minimalArgs.path === "string") edited.add(st.minimalArgs.path);
    }
  }
  window.set(removed.messages.slice(-kMessages));
  window.addEdited(edited, editCalls);
  const n = window.size;
  const prose = new Map<string, Candidate>();
  const recency = (i: number) => (n > 1 ? i / (n - 1) : 1);
  for (const [d, s] of window.decisions) {
    const last = window.at(s.last);
    prose.set(`decision:${d}`, { key: `decision:${d}`, kind: "decision", text: d, score: kT.dec + recency(last), last });
  }
  // Error lines: the error head of each failed step (the reducer's, redacted), in step order.
  removed.steps.forEach((st, k) => {
    if (st.success || !st.error) return;
    const line = oneLine(st.error, kErrorChars);
    const last = Math.round((k / Math.max(1, removed.steps.length - 1)) * (n - 1));
    prose.set(`error:${line}`, { key: `error:${line}`, kind: "error", text: line, score: kT.err + recency(last), last });
  });
  const terms: TermFacts = { keys: [], scores: new Float64Array(window.termCount), last: new Int32Array(window.termCount) };
  window.forEachTerm((t, seen, count, last) => {
    const k = terms.keys.length;
    terms.keys.push(t);
    terms.last[k] = window.at(last);
    terms.scores[k] = termScore(t, seen, count, recency(terms.last[k]), edited.has(t));
  });
  return { prose: [...prose.values()], terms, edited };
}

const byRank = (a: Candidate, b: Candidate) => b.score - a.score || b.last - a.last || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** One block's lines: edited files, other files, other names, then one line per error and per decision. */
function renderBlock(picked: readonly Candidate[], edited: ReadonlySet<string>): LedgerLine[] {
  const lines: LedgerLine[] = [];
  const [edits, files, names]: Candidate[][] = [[], [], []];
  for (const c of picked) if (c.kind === "term") (!isFileTerm(c.key) ? names : edited.has(c.key) ? edits : files).push(c);
  for (const [label, items] of [
    ["edited", edits],
    ["files", files],
    ["names", names],
  ] as const) {
    // Space-separated: a separator of its own would cost a token per name.
    if (items.length > 0) lines.push({ text: `- ${label}: ${items.map((c) => c.text).join(" ")}`, keys: items.map((c) => c.key) });
  }
  for (const c of picked) if (c.kind === "error") lines.push({ text: `- error: ${c.text}`, keys: [c.key] });
  for (const c of picked) if (c.kind === "decision") lines.push({ text: `- decision: ${c.text}`, keys: [c.key] });
  return lines;
}

/**
 * All facts best first (byRank), sorted a tier at a time as far down as a ledger block reads:
 * the best kRankHead facts, then the next three times as many, and so on (a fact's tier is set
 * by its score alone, so ties never straddle two tiers and the tiers in turn are the full order).
 */
function* ranked(prose: readonly Candidate[], terms: TermFacts): Generator<Candidate> {
  const term = (k: number): Candidate => ({ key: terms.keys[k], kind: "term", text: terms.keys[k], score: terms.scores[k], last: terms.last[k] });
  const where = (low: number, high: number): Candidate[] => {
    const out = prose.filter((c) => c.score >= low && c.score < high);
    for (let k = 0; k < terms.keys.length; k++) if (terms.scores[k] >= low && terms.scores[k] < high) out.push(term(k));
    return out.sort(byRank);
  };
  const n = prose.length + terms.keys.length;
  const scores = new Float64Array(n);
  scores.set(terms.scores);
  prose.forEach((c, i) => (scores[terms.keys.length + i] = c.score));
  scores.sort();
  for (let head = kRankHead, high = Infinity; ; head *= 4) {
    const low = head < n ? scores[n - head] : -Infinity;
    yield* where(low, high);
    if (head >= n) return;
    high = low;
  }
}

/** The text of a ledger with these lines. */
export const ledgerText = (lines: readonly LedgerLine[]) => [kLedgerHeading, ...lines.map((l) => l.text)].join("\n");

/**
 * The ledger's lines after a stage removed `removed`: the lines of `prior`, then a block of the
 * best facts that neither they nor `kept` (the kept prompt's text) show, the whole within `room`
 * tokens. `fresh` (the call's first ledger, `prior` the previous epoch's): the prior lines are
 * dropped when they leave less than a fifth of `room`, and the ledger starts over.
 */
export function extendLedger(
  kit: { readonly measure: TokenMeasure; readonly counter: TokenCounter },
  prior: readonly LedgerLine[],
  removed: Removed,
  kept: string,
  room: number,
  fresh: boolean,
  window = new FactWindow(),
): LedgerLine[] {
  const { prose, terms, edited } = candidates(removed, window);
  let lines = [...prior];
  if (fresh && lines.length > 0 && room - kit.measure.text(ledgerText(lines)) < kRebuildBelow * room) lines = [];
  const used = lines.length > 0 ? kit.measure.text(ledgerText(lines)) : kit.measure.text(kLedgerHeading);
  const blockRoom = Math.min(room - used, Math.floor((lines.length > 0 ? kNextShare : kFirstShare) * room));
  if (blockRoom <= 8) return lines;
  const shown = [kept, lines.map((l) => l.text).join("\n")];
  const held = new Set(lines.flatMap((l) => l.keys));
  const picked: (Candidate & { tokens: number })[] = [];
  let cost = 8; // line labels
  let errors = 0;
  let decisions = 0;
  /** The terms the picked names hold (a name shows them all), and the picked names by key. */
  const shownByPicked = new Set<string>();
  const pickedTerms = new Map<string, Candidate & { tokens: number }>();
  const it = ranked(prose, terms);
  // Facts go through the estimator and the prompt's text in batches of the ranking, as far down
  // as the block reaches; each batch twice the last, so a large room (thousands of names at
  // 32k) reads the prompt's text a few times rather than once per hundred names, and the work
  // past the block's end stays under the work before it.
  for (let size = kFirstBatch, chunk = take(it, size); chunk.length > 0 && cost + 2 <= blockRoom; chunk = take(it, (size *= 2))) {
    const estimates = kit.counter.estimateMany(chunk.map((c) => c.text));
    // Which of the chunk's names the prompt already shows: one pass over its text for them all.
    const names = chunk.filter((c) => c.kind === "term" && !held.has(c.key));
    const found =
      names.length > 0
        ? termLines(
            shown,
            names.map((c) => c.key),
          ).found
        : undefined;
    const present = new Set(names.filter((_, k) => found![k] === 1).map((c) => c.key));
    for (const [k, c] of chunk.entries()) {
      if (cost + 2 > blockRoom) break;
      const prose = c.kind !== "term";
      if (held.has(c.key) || (c.kind === "error" && errors >= kMaxErrors) || (c.kind === "decision" && decisions >= kMaxDecisions)) continue;
      const tokens = Math.ceil(estimates[k]) + (prose ? 3 : 0);
      if (cost + tokens > blockRoom) continue;
      if (prose ? shown.some((t) => t.includes(c.text)) : present.has(c.key) || shownByPicked.has(c.key)) continue;
      // A longer name shows the shorter ones it holds (`django.conf` in `django.conf.settings`): they give their room back.
      const item = { key: c.key, kind: c.kind, text: c.text, score: c.score, last: c.last, tokens };
      if (!prose) {
        const within = termsWithin(c.key);
        for (const t of within) {
          const shorter = t.length < c.key.length ? pickedTerms.get(t) : undefined;
          if (shorter === undefined) continue;
          cost -= shorter.tokens;
          picked.splice(picked.indexOf(shorter), 1);
          pickedTerms.delete(t);
        }
        for (const t of within) shownByPicked.add(t);
        pickedTerms.set(c.key, item);
      }
      cost += tokens;
      picked.push(item);
      if (c.kind === "error") errors++;
      if (c.kind === "decision") decisions++;
    }
  }
  // The estimate per item can miss by a few tokens: the block is measured whole, and its
  // lowest-ranked facts leave until it fits.
  let block = renderBlock(picked, edited);
  while (picked.length > 0 && kit.measure.text(ledgerText([...lines, ...block])) > used + blockRoom) {
    picked.pop();
    block = renderBlock(picked, edited);
  }
  return [...lines, ...block];
}

/** The next `n` items of `it` (fewer at its end). */
function take<T>(it: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  while (out.length < n) {
    const r = it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

/** A ledger part with these lines. */
export const ledgerPart = (lines: readonly LedgerLine[]): TextPart => marked({ type: "text", text: ledgerText(lines) }, { kind: "ledger", lines: [...lines] });
