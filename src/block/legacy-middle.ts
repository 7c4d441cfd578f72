/**
 * Levels 2 and 3 of the legacy in-memory compaction (legacy.ts, whose module comment states the
 * decisions): whole units of turns leave the middle, between the head (the first keepFirstTurns
 * turns, up to the latest provider compaction) and the recent turns, and one message stands
 * where they were: per-turn one-liners under a header (level 2) or the header alone as a marker
 * (level 3), naming the ref where the removed messages are stored whole. Every rewrite is checked
 * with the provider validator before it is stored.
 */
import { kFormats } from "../adapters/common.js";
import { compactionBoundary } from "../adapters/server-context.js";
import { hashText, hashToHex } from "../core/hash.js";
import type { Message } from "../model/schema.js";
import { extractSteps } from "../steps/reducer.js";
import { putMessages, type OffloadStore } from "../store/index.js";
import type { TokenMeasure } from "../tokens/measure.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import { newViolations, usesThinking, validate, type Issue, type ValidationResult } from "../validate/index.js";
import { turnInProgressOpener } from "../validate/rules.js";
import type { SessionCompactionConfig } from "./config.js";
import { TurnMap } from "./turn-map.js";
import { kTurnSummaryKind, mergeAdjacent, summarizeTurns, summaryMessage } from "./turns.js";

/** The messages as level 1 left them: what the middle removal starts from. */
export interface CutMessages {
  /** The messages, tool outputs cut (an untouched message is the input's object). */
  messages: Message[];
  /** Each message's estimated tokens, and their sum. */
  tokens: number[];
  total: number;
  /** Each message's refs of its cut outputs. */
  refs: string[][];
}

/** The refs of the cut outputs of the messages at `indices`, in that order. */
export function cutRefsOf(cut: CutMessages, indices: Iterable<number>): string[] {
  const out: string[] = [];
  for (const i of indices) out.push(...cut.refs[i]);
  return out;
}

/** What the middle removal works with besides the messages. */
export interface MiddleContext {
  settings: Pick<SessionCompactionConfig, "keepFirstTurns" | "keepRecent" | "maxSummaryTokens">;
  store: OffloadStore;
  counter: TokenCounter;
  measure: TokenMeasure;
  /** The token count aimed at or below. */
  target: number;
}

/** A level 2 or 3 result. */
export interface MiddleRemoved {
  messages: Message[];
  level: 2 | 3;
  /** Estimated tokens of `messages`. */
  tokens: number;
  /** The kept messages' cut refs, in message order, then historyRef. */
  refs: string[];
  /** Where the removed messages are stored whole. */
  historyRef: string;
  removedTurns: number;
}

/**
 * Levels 2 and 3: the candidates tried in order (level 2 with keepRecent recent turns, level
 * 3 with as many, then level 3 with one recent turn fewer at a time down to 1). The first result
 * within the target, else the last candidate's; undefined when no candidate removes anything.
 */
export function removeMiddle(messages: readonly Message[], cut: CutMessages, ctx: MiddleContext): MiddleRemoved | undefined {
  const removal = new MiddleRemoval(messages, cut, ctx);
  const candidates = removal.candidates();
  return candidates.length === 0 ? undefined : removal.best(candidates);
}

/** A run of whole turns that can be kept or removed as one (see legacy.ts's module comment). */
interface Unit {
  /** Message index range [start, end). */
  start: number;
  end: number;
  /** TurnMap ordinals of its first and last turn. */
  firstTurn: number;
  lastTurn: number;
  /** Holds a system or pinned message, or the first user message: never removed. */
  keep: boolean;
}

/** Turn groups as [start, end) message ranges, in order, covering every message. */
function turnGroups(messages: readonly Message[]): [number, number][] {
  if (messages.some((m) => m.turn != null)) {
    const map = TurnMap.fromMessages(messages);
    const out: [number, number][] = [];
    for (let t = 0; t < map.turnCount(); t++) out.push(map.turnMsgRange(t)!);
    return out;
  }
  const starts = [0];
  let prevRole: Message["role"] | undefined;
  let systemRun = -1;
  messages.forEach((m, i) => {
    if (m.role === "system") {
      if (systemRun < 0) systemRun = i;
      return;
    }
    if (prevRole !== undefined && (m.role === "user" || (m.role === "assistant" && prevRole !== "assistant"))) {
      const start = systemRun >= 0 ? systemRun : i;
      if (start > starts[starts.length - 1]) starts.push(start);
    }
    systemRun = -1;
    prevRole = m.role;
  });
  return starts.map((s, k) => [s, k + 1 < starts.length ? starts[k + 1] : messages.length]);
}

/** Joins turn groups where a cut would fall inside a tool exchange; marks the units never removed. */
function unitsOf(messages: readonly Message[]): { units: Unit[]; turns: number } {
  const n = messages.length;
  const crossing = new Int32Array(n + 1);
  for (const s of extractSteps(messages).steps) {
    if (s.resultMessage === undefined || s.resultMessage <= s.callMessage) continue;
    crossing[s.callMessage + 1]++;
    crossing[s.resultMessage + 1]--;
  }
  const safe = new Uint8Array(n + 1);
  let open = 0;
  for (let b = 0; b <= n; b++) {
    open += crossing[b];
    safe[b] = open === 0 && (b === n || messages[b].role !== "tool") ? 1 : 0;
  }
  const firstUser = messages.findIndex((m) => m.role === "user");
  const groups = turnGroups(messages);
  const units: Unit[] = [];
  groups.forEach(([start, end], t) => {
    const last = units.at(-1);
    if (last && !safe[start]) {
      last.end = end;
      last.lastTurn = t;
    } else {
      units.push({ start, end, firstTurn: t, lastTurn: t, keep: false });
    }
  });
  for (const u of units) {
    for (let i = u.start; i < u.end && !u.keep; i++) {
      const m = messages[i];
      u.keep = m.role === "system" || m.pinned === true || i === firstUser;
    }
  }
  return { units, turns: groups.length };
}

/** Units before the returned one form the head, never removed: the first `keepFirstTurns` turns, and every unit up to the one holding the latest provider compaction (`boundary`). */
function headEndOf(units: readonly Unit[], keepFirstTurns: number, boundary: number): number {
  let headEnd = 0;
  while (headEnd < units.length && (units[headEnd].firstTurn < keepFirstTurns || units[headEnd].start <= boundary)) headEnd++;
  return headEnd;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** How the removed turns are shown: per-turn one-liners under a header (level 2), or the header alone as a marker (level 3). */
type Mode = "summary" | "marker";

/** One way to remove the middle: how it is shown, and the unit where the kept recent turns start. */
interface Candidate {
  mode: Mode;
  start: number;
}

/** The units of one input, and the removals of their middle: what is removed, what stands for it, what is kept. */
class MiddleRemoval {
  readonly #messages: readonly Message[];
  readonly #cut: CutMessages;
  readonly #ctx: MiddleContext;
  readonly #units: Unit[];
  readonly #turns: number;
  /** Each unit's estimated tokens, its messages as level 1 left them. */
  readonly #unitTokens: number[];
  /** The first unit after the head (see headEndOf). */
  readonly #headEnd: number;
  /** The ref a summary names while its candidate is only measured or checked (as long as a real one). */
  readonly #placeholderRef: string;
  readonly #linesCache = new Map<string, string[]>();

  constructor(messages: readonly Message[], cut: CutMessages, ctx: MiddleContext) {
    this.#messages = messages;
    this.#cut = cut;
    this.#ctx = ctx;
    const { units, turns } = unitsOf(messages);
    this.#units = units;
    this.#turns = turns;
    this.#unitTokens = units.map((u) => {
      let t = 0;
      for (let i = u.start; i < u.end; i++) t += cut.tokens[i];
      return t;
    });
    this.#headEnd = headEndOf(units, ctx.settings.keepFirstTurns, compactionBoundary(messages));
    this.#placeholderRef = `${ctx.store.prefix}/history_${"0".repeat(16)}.json`;
  }

  /** The candidates in the order tried (see removeMiddle), leaving out those removing nothing and repeats. */
  candidates(): Candidate[] {
    const out: Candidate[] = [];
    const add = (mode: Mode, start: number): void => {
      if (this.#removedUnits(start).length === 0) return;
      if (out.some((c) => c.mode === mode && c.start === start)) return;
      out.push({ mode, start });
    };
    const keepRecent = this.#ctx.settings.keepRecent;
    add("summary", this.#recentStart(keepRecent));
    add("marker", this.#recentStart(keepRecent));
    for (let k = keepRecent - 1; k >= 1; k--) add("marker", this.#recentStart(k));
    return out;
  }

  /**
   * The first candidate's result within the target, else the last candidate's (the smallest the
   * levels reach). A candidate that cannot fit is not realised, unless it is the last.
   */
  best(candidates: readonly Candidate[]): MiddleRemoved | undefined {
    const check = new RewriteCheck(this.#messages, this.#units);
    let best: MiddleRemoved | undefined;
    for (let c = 0; c < candidates.length; c++) {
      const { mode, start } = candidates[c];
      const isLast = c === candidates.length - 1;
      if (!isLast && !this.#mayFit(mode, start)) continue;
      const r = this.#realize(mode, start, check);
      if (!r) continue;
      if (r.tokens <= this.#ctx.target || isLast) return r;
      best = r;
    }
    return best;
  }

  /** Whether a candidate may be within the target, by an upper bound: merging the summary into a neighbour saves that message's overheads. */
  #mayFit(mode: Mode, start: number): boolean {
    const removed = this.#removedUnits(start);
    const lines = mode === "summary" ? this.#linesFor(removed) : [];
    const kept = removed.reduce((t, a) => t - this.#unitTokens[a], this.#cut.total);
    return kept + this.#ctx.measure.of(this.#summaryFor(mode, removed, this.#placeholderRef, lines)) <= this.#ctx.target;
  }

  /**
   * The result for one candidate: checked with the validator (keeping more units before the
   * recent turns while it would introduce a violation, one at a time, or straight to a unit
   * opening with signed reasoning for the thinking rule), then stored and named. When no
   * start passes and the turn in progress opens in the middle, the head is extended to keep
   * that opening unit (the summary then follows its tool results and starts no user turn),
   * and the search runs once more.
   */
  #realize(mode: Mode, start: number, check: RewriteCheck): MiddleRemoved | undefined {
    const heads = [this.#headEnd];
    if (check.openerUnit >= this.#headEnd && check.openerUnit + 1 < start) heads.push(check.openerUnit + 1);
    for (const head of heads) {
      for (let s = start; s > head; ) {
        const removed = this.#removedUnits(s, head);
        if (removed.length === 0) break;
        const lines = mode === "summary" ? this.#linesFor(removed) : [];
        const issues = check.newIssues(this.#assemble(removed, this.#summaryFor(mode, removed, this.#placeholderRef, lines)));
        if (issues.length === 0) return this.#store(mode, removed, lines);
        s = issues.every((i) => i.code === "THINKING_DROPPED") ? check.retreat(s, head) : s - 1;
      }
    }
    return undefined;
  }

  /**
   * A removal that passed the check, made real: the removed messages stored whole, one ref each,
   * under an index (putMessages, as the tiered compactor stores them, so recall and `show
   * --format` read them back), and the summary naming the index's ref.
   */
  #store(mode: Mode, removed: readonly number[], lines: string[]): MiddleRemoved {
    const units = this.#units;
    const originals = removed.flatMap((a) => this.#messages.slice(units[a].start, units[a].end));
    const historyRef = putMessages(this.#ctx.store, originals).ref;
    const out = this.#assemble(removed, this.#summaryFor(mode, removed, historyRef, lines));
    const gone = new Set(removed);
    const kept = units.flatMap((u, a) => (gone.has(a) ? [] : Array.from({ length: u.end - u.start }, (_, k) => u.start + k)));
    const refs = [...cutRefsOf(this.#cut, kept), historyRef];
    return { messages: out, level: mode === "summary" ? 2 : 3, tokens: this.#ctx.measure.sum(out), refs, historyRef, removedTurns: this.#turnCount(removed) };
  }

  /** Index of the first unit of the last k turns (never inside the head). */
  #recentStart(k: number): number {
    let s = this.#units.length;
    while (s > this.#headEnd && this.#units[s - 1].lastTurn >= this.#turns - k) s--;
    return s;
  }

  /** The units removed when the recent turns start at unit `start` (and the head ends before unit `head`). */
  #removedUnits(start: number, head = this.#headEnd): number[] {
    const out: number[] = [];
    for (let a = head; a < start; a++) if (!this.#units[a].keep) out.push(a);
    return out;
  }

  /** Turns in the removed units. */
  #turnCount(removed: readonly number[]): number {
    return removed.reduce((n, a) => n + this.#units[a].lastTurn - this.#units[a].firstTurn + 1, 0);
  }

  /** The summary (or marker) message for a set of removed units, naming `ref`. */
  #summaryFor(mode: Mode, removed: readonly number[], ref: string, lines: string[]): Message {
    const first = this.#units[removed[0]].firstTurn;
    const last = this.#units[removed[removed.length - 1]].lastTurn;
    const count = this.#turnCount(removed);
    const span = first === last ? `turn ${first}` : `turns ${first}–${last}`;
    const what = mode === "summary" ? "summarised below" : "removed";
    const header = `[ctxfold: ${plural(count, "earlier turn")} (${span}) ${what} to save context; the original messages: ${ref}]`;
    const m = summaryMessage(mode === "summary" ? lines : [], header, `ctxfold-compact-${hashToHex(hashText(`${mode}\u0000${ref}`))}`);
    return { ...m, meta: { ctxfold: { kind: kTurnSummaryKind, level: mode === "summary" ? 2 : 3, ref, turns: count } } };
  }

  /** The per-turn one-liners of the removed units' original messages, within maxSummaryTokens (memoised per set). */
  #linesFor(removed: readonly number[]): string[] {
    const key = removed.join(",");
    let lines = this.#linesCache.get(key);
    if (!lines) {
      const units = this.#units;
      const turns = removed.map((a) => ({
        label: units[a].firstTurn === units[a].lastTurn ? `Turn ${units[a].firstTurn}` : `Turns ${units[a].firstTurn}–${units[a].lastTurn}`,
        messages: this.#messages.slice(units[a].start, units[a].end),
      }));
      lines = summarizeTurns(turns, this.#ctx.settings.maxSummaryTokens, (text) => this.#ctx.counter.estimate(text)).lines;
      this.#linesCache.set(key, lines);
    }
    return lines;
  }

  /** Kept messages (cut as level 1 left them) with the summary where the first removed unit was. */
  #assemble(removed: readonly number[], summary: Message): Message[] {
    const gone = new Set(removed);
    const out: Message[] = [];
    const gapBefore: boolean[] = [];
    let gap = false;
    this.#units.forEach((u, a) => {
      if (gone.has(a)) {
        if (a === removed[0]) {
          out.push(summary);
          gapBefore.push(true);
        }
        gap = true;
        return;
      }
      for (let i = u.start; i < u.end; i++) {
        out.push(this.#cut.messages[i]);
        gapBefore.push(gap);
        gap = false;
      }
    });
    return mergeAdjacent(out, gapBefore);
  }
}

/**
 * The provider validator's verdict on a rewrite of the input: the violations it would introduce,
 * for every format, with extended thinking on whenever the input used it; and where the units
 * stand for Anthropic's extended thinking rule (see legacy.ts's module comment).
 */
class RewriteCheck {
  readonly #messages: readonly Message[];
  readonly #thinking: boolean;
  /** The input's validation per format, made on the first check. */
  #before: ValidationResult[] | undefined;
  /** Units whose first non-system message is an assistant message opening with signed reasoning. */
  readonly #reasoningLed: boolean[];
  /** The unit holding the message that opens the tool-use turn in progress (thinking rule), or -1. */
  readonly openerUnit: number;

  constructor(messages: readonly Message[], units: readonly Unit[]) {
    this.#messages = messages;
    this.#thinking = usesThinking(messages);
    this.#reasoningLed = units.map((u) => {
      const m = messages.slice(u.start, u.end).find((x) => x.role !== "system");
      const p = m?.role === "assistant" ? m.parts[0] : undefined;
      return p?.type === "reasoning" && (!!p.signature || !!p.redacted);
    });
    const opener = this.#thinking ? turnInProgressOpener(messages, { compactionOpens: true }) : -1;
    this.openerUnit = opener < 0 ? -1 : units.findIndex((u) => u.start <= opener && opener < u.end);
  }

  /** The violations `after` has that the input did not. */
  newIssues(after: readonly Message[]): Issue[] {
    const thinking = this.#thinking;
    const before = (this.#before ??= kFormats.map((f) => validate(this.#messages, f, { thinking })));
    return kFormats.flatMap((f, j) => newViolations(before[j], validate(after, f, { thinking })));
  }

  /**
   * Where the recent turns start next when the result would break Anthropic's extended
   * thinking rule (the tool-use turn in progress must open with signed reasoning): at the
   * nearest earlier unit that opens with it; failing that, everything but the first unit of
   * the middle is kept, a last try.
   */
  retreat(s: number, head: number): number {
    for (let u = s - 1; u > head; u--) if (this.#reasoningLed[u]) return u;
    return head + 1 < s ? head + 1 : head;
  }
}
