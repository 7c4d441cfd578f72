/**
 * `ctxfold eval --misses`: why the compacted prompt lost an evidence term (evidence.ts) the next
 * step used. For each missed term at each scored point of the first contender:
 *
 * - **Source**: the latest prompt message before the point, outside the anchors (system /
 *   developer messages and the task), whose texts hold the term: what the next step most likely
 *   read it from.
 * - **Kind**: where in that message the term is: "tool output" (a tool message), "tool arguments"
 *   (an assistant message's call arguments, not its text), "assistant text", "user text",
 *   "system" (any other role). Terms are read only from content texts and call arguments
 *   (termTexts), so reasoning never holds evidence.
 * - **Stage**, inferred from the compacted prompt (the compactor records no per-message
 *   provenance; canonical messages keep the input's ids, `m<index>`): the message is listed in
 *   the index of stored messages that a marker of the output names: a merge note
 *   ("merge_oldest"), a superseded note ("superseded_history") or a step summary
 *   ("historical_text"), a stored note (or step summary) followed to the messages it stands for (they count for
 *   the stage that first moved them out); else it is still in the output under its id, shrunk in place: its tool
 *   output ("tool_outputs"; the step reducer's reductions of recent results count here too), its
 *   arguments ("tool_args") or its text ("historical_text"); else "unattributed" (gone with no
 *   index naming it).
 * - **Carried**: `recoverable` when some ref of the answer resolves to content whose texts (a
 *   JSON content's string leaves, JSON arguments inside it read the same way, any other as it
 *   is) hold the term; `ledger` when a ledger
 *   part's facts (its lines and their keys) hold it: the ledger's text is part of the prompt, so
 *   a missed term is there only in a form its text does not spell.
 *
 * Aggregated per budget by (stage, kind): the count, its share of all misses, how many are
 * recoverable or in the ledger, and the first few examples (term, run, point, message index).
 */
import type { OpenAIChatMessage } from "../adapters/openai-chat.js";
import type { Message } from "../model/schema.js";
import { markOf } from "../model/marks.js";
import { containsTerm } from "../model/terms.js";
import { indexedContains, messageHasTerm, type WordIndex, wordIndex } from "./evidence.js";
import { anchorIndices, callArgs, contentText } from "./metrics.js";
import type { CompactOutput } from "./protocol.js";

/** Where in its source message a missed term was. */
export type MissKind = "tool output" | "tool arguments" | "assistant text" | "user text" | "system";
/** The compaction stage that removed or shrank the source message (see the module comment). */
export type MissStage = "superseded_history" | "tool_args" | "tool_outputs" | "historical_text" | "merge_oldest" | "unattributed";

export interface MissExample {
  term: string;
  runId: string;
  /** The prompt point: how many messages the prompt had. */
  point: number;
  /** The source message's index in the prompt. */
  message: number;
}

export interface MissRow {
  stage: MissStage;
  kind: MissKind;
  count: number;
  /** count / all misses at the budget. */
  share: number;
  /** How many a ref of the answer still holds. */
  recoverable: number;
  /** How many the ledger's facts hold. */
  ledger: number;
  examples: MissExample[];
}

/** The misses of the first contender at one budget, most frequent (stage, kind) first. */
export interface MissReport {
  budget: number;
  contender: string;
  /** Evidence terms scored, and how many of them the compacted prompts lacked. */
  terms: number;
  missed: number;
  rows: MissRow[];
}

const kExamples = 3;

/** Accumulates one budget's misses; caches what the current run's refs hold (refs are content addresses). */
export class MissTally {
  terms = 0;
  readonly rows = new Map<string, MissRow>();
  #runId: string | undefined;
  #refTexts = new Map<string, WordIndex[]>();
  #stored = new Map<string, Stored>();

  /** @internal The cache of what refs hold, emptied when the run changes (recordMisses reads it). */
  caches(runId: string): { texts: Map<string, WordIndex[]>; stored: Map<string, Stored> } {
    if (runId !== this.#runId) {
      this.#runId = runId;
      this.#refTexts = new Map();
      this.#stored = new Map();
    }
    return { texts: this.#refTexts, stored: this.#stored };
  }

  add(stage: MissStage, kind: MissKind, carried: { recoverable: boolean; ledger: boolean }, example: MissExample): void {
    const key = `${stage}\u0000${kind}`;
    let row = this.rows.get(key);
    if (row === undefined) this.rows.set(key, (row = { stage, kind, count: 0, share: 0, recoverable: 0, ledger: 0, examples: [] }));
    row.count++;
    if (carried.recoverable) row.recoverable++;
    if (carried.ledger) row.ledger++;
    if (row.examples.length < kExamples) row.examples.push(example);
  }

  report(budget: number, contender: string): MissReport {
    const rows = [...this.rows.values()].sort((a, b) => b.count - a.count || a.stage.localeCompare(b.stage) || a.kind.localeCompare(b.kind));
    const missed = rows.reduce((n, r) => n + r.count, 0);
    for (const r of rows) r.share = missed === 0 ? 0 : r.count / missed;
    return { budget, contender, terms: this.terms, missed, rows };
  }
}

/** The point's evidence the answer `out` lacks, each diagnosed into `t` (see the module comment). */
export function recordMisses(t: MissTally, runId: string, input: readonly OpenAIChatMessage[], evidence: readonly string[], out: CompactOutput): void {
  t.terms += evidence.length;
  const missed = evidence.filter((term) => !out.messages.some((m) => messageHasTerm(m, term)));
  if (missed.length === 0) return;
  const caches = t.caches(runId);
  const fates = out.canonical && out.resolve ? storedFates(out.canonical, out.resolve, caches.stored) : new Map<string, MissStage>();
  const kept = new Set((out.canonical ?? []).map((m) => m.id));
  const ledger = ledgerFacts(out.canonical ?? []);
  const anchors = anchorIndices(input);
  for (const term of missed) {
    const at = sourceIndex(input, anchors, term);
    if (at < 0) continue;
    const kind = missKind(input[at], term);
    const id = `m${at}`;
    const stage = fates.get(id) ?? (kept.has(id) ? shrunkStage(kind) : "unattributed");
    const carried = { recoverable: refsHold(out, term, caches.texts), ledger: ledger.some((f) => containsTerm(f, term)) };
    t.add(stage, kind, carried, { term, runId, point: input.length, message: at });
  }
}

/** The latest non-anchor message of the prompt whose texts hold `term`, or -1. */
function sourceIndex(input: readonly OpenAIChatMessage[], anchors: ReadonlySet<number>, term: string): number {
  for (let i = input.length - 1; i >= 0; i--) if (!anchors.has(i) && messageHasTerm(input[i], term)) return i;
  return -1;
}

/** Where in `m` the term is (see MissKind). */
export function missKind(m: OpenAIChatMessage, term: string): MissKind {
  if (m.role === "tool" || m.role === "function") return "tool output";
  if (m.role === "assistant") {
    if (!containsTerm(contentText(m), term) && callArgs(m).length > 0) return "tool arguments";
    return "assistant text";
  }
  return m.role === "user" ? "user text" : "system";
}

/** The stage that shrinks a message kept in place, by the kind of what it lost. */
const shrunkStage = (kind: MissKind): MissStage => (kind === "tool output" ? "tool_outputs" : kind === "tool arguments" ? "tool_args" : "historical_text");

/** The output's markers that name an index of stored messages, with the stage that wrote each. */
function storedIndexes(out: readonly Message[]): { ref: string; stage: MissStage }[] {
  const found: { ref: string; stage: MissStage }[] = [];
  for (const m of out) {
    const meta = m.meta?.ctxfold as { kind?: unknown; ref?: unknown } | undefined;
    if (meta?.kind === "superseded" && typeof meta.ref === "string") found.push({ ref: meta.ref, stage: "superseded_history" });
    for (const p of m.parts) {
      const mark = markOf(p);
      if (mark?.kind === "merge") found.push({ ref: mark.ref, stage: "merge_oldest" });
      else if (mark?.kind === "step-summary") found.push({ ref: mark.ref, stage: "historical_text" });
    }
  }
  return found;
}

/** What a stored message is: its id, and the indexes of stored messages it names as a note (a merge or superseded note, a step summary merged into it), each with the stage that wrote it. */
interface Stored {
  id: string | null;
  notes: { ref: string; stage: MissStage }[];
}

/**
 * The stage that moved each stored message out, by the id it had: the first marker naming it
 * wins, and a stored note (a superseded or merge note, or a step summary, that a later merge
 * took in) is followed to the messages it stands for, which count for the stage that first
 * moved them out.
 */
function storedFates(out: readonly Message[], resolve: (ref: string) => string, stored: Map<string, Stored>): Map<string, MissStage> {
  const fates = new Map<string, MissStage>();
  const seen = new Set<string>();
  const visit = (ref: string, stage: MissStage): void => {
    if (seen.has(ref)) return;
    seen.add(ref);
    for (const messageRef of indexRefs(resolve, ref)) {
      const m = storedMessage(resolve, messageRef, stored);
      for (const note of m.notes) visit(note.ref, note.stage);
      if (m.id !== null && !fates.has(m.id)) fates.set(m.id, stage);
    }
  };
  for (const { ref, stage } of storedIndexes(out)) visit(ref, stage);
  return fates;
}

/** The stage that writes a note of `meta.ctxfold.kind`, if it is one. */
const noteStage = (kind: unknown): MissStage | undefined => (kind === "superseded" ? "superseded_history" : kind === "merge" ? "merge_oldest" : undefined);

/** The message refs an index of stored messages lists, chunks followed; none when it does not resolve or is no index. */
function indexRefs(resolve: (ref: string) => string, ref: string, top = true): string[] {
  const index = parseJson(tryResolve(resolve, ref)) as { ctxfold?: unknown; refs?: unknown; chunks?: unknown } | undefined;
  if (index?.ctxfold !== "messages") return [];
  if (top && Array.isArray(index.chunks)) return index.chunks.flatMap((c) => (typeof c === "string" ? indexRefs(resolve, c, false) : []));
  return Array.isArray(index.refs) ? index.refs.filter((r): r is string => typeof r === "string") : [];
}

/** A step summary's text names the index of the messages it stands for so (steps/messages.ts stepSummary); its mark is not stored. */
const kStepSummaryRef = /\(removed messages: ([^\s)]+)\)/g;

/** The message stored under `ref` (memoised): its id, and the indexes it names as a note. */
function storedMessage(resolve: (ref: string) => string, ref: string, stored: Map<string, Stored>): Stored {
  let s = stored.get(ref);
  if (s !== undefined) return s;
  const m = parseJson(tryResolve(resolve, ref)) as { id?: unknown; parts?: unknown; meta?: { ctxfold?: { kind?: unknown; ref?: unknown } } } | undefined;
  s = { id: typeof m?.id === "string" ? m.id : null, notes: [] };
  const note = m?.meta?.ctxfold;
  const stage = noteStage(note?.kind);
  if (stage && typeof note?.ref === "string") s.notes.push({ ref: note.ref, stage });
  for (const p of Array.isArray(m?.parts) ? (m.parts as { text?: unknown }[]) : [])
    if (typeof p?.text === "string") for (const x of p.text.matchAll(kStepSummaryRef)) s.notes.push({ ref: x[1], stage: "historical_text" });
  stored.set(ref, s);
  return s;
}

/** Whether some ref of the answer resolves to content whose texts hold `term` (each ref's texts indexed once per run). */
function refsHold(out: CompactOutput, term: string, texts: Map<string, WordIndex[]>): boolean {
  if (!out.refs || !out.resolve) return false;
  for (const ref of out.refs) {
    let ix = texts.get(ref);
    if (ix === undefined) texts.set(ref, (ix = refTexts(tryResolve(out.resolve, ref)).map(wordIndex)));
    if (ix.some((x) => indexedContains(x, term))) return true;
  }
  return false;
}

/** A stored content's texts: a JSON value's string leaves (a leaf that is itself JSON, as a stored call's arguments are, read the same way), any other text as it is. */
function refTexts(content: string | undefined): string[] {
  if (content === undefined) return [];
  const value = parseJson(content);
  if (value === null || typeof value !== "object") return [content];
  const leaves: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      const inner = /^\s*[[{]/.test(v) ? parseJson(v) : undefined;
      if (inner !== null && typeof inner === "object") walk(inner);
      else leaves.push(v);
    } else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  walk(value);
  return leaves;
}

/** The facts of the output's ledger parts: each line's text and keys. */
function ledgerFacts(out: readonly Message[]): string[] {
  const facts: string[] = [];
  for (const m of out)
    for (const p of m.parts) {
      const mark = markOf(p);
      if (mark?.kind === "ledger") for (const line of mark.lines) facts.push(line.text, ...line.keys);
    }
  return facts;
}

function tryResolve(resolve: (ref: string) => string, ref: string): string | undefined {
  try {
    return resolve(ref);
  } catch {
    return undefined;
  }
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
