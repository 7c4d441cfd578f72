/**
 * Block compaction's legacy in-memory compaction: DefaultCompaction, the built-in CompactionStrategy
 * (used when there is no session), which delegates to compactMessages() — the design's
 * compact_messages() — and its three levels: 1. truncate tool outputs, 2. summarise turns,
 * 3. drop the middle.
 *
 * Decisions where block compaction's design is silent (each is also stated where it is made):
 * - Target: the estimated tokens of the result should be at most the largest count at which
 *   the trigger (shouldCompactSession) no longer fires, ≈ (compactAtPct −
 *   compactBudgetThresholdPct) × maxContextTokens: compacting any less would leave the trigger
 *   firing on the very next check. Each level runs only while the result is above it.
 * - Tokens are the token measure's estimates (tokens/measure.ts: the texts a model reads plus
 *   the provider's per-message and per-call overheads, whole tokens per message), summed without
 *   a request's reply primer: what the session orchestrator's estimates and the ContextTracker,
 *   whose count the trigger fires on, add up.
 * - Turns come from TurnMap (turn ids; a message without one is its own group). Messages with
 *   no turn id at all get turns of our own making: a new turn starts at every user message and
 *   at every assistant message that does not follow another assistant message, so an
 *   assistant message and the tool results answering it are one turn, as runners tag them (and
 *   as the generator does). Starting turns at user messages alone, an agent run with one task
 *   would be a single turn and levels 2 and 3 could never remove anything. System messages
 *   belong to the turn that follows them.
 * - Turns are only ever removed whole, and a cut never falls inside a tool exchange: a point
 *   where a tool message starts, or a call made before the point is answered after it, joins
 *   the turns on both sides into one unit.
 * - Never removed: system messages, pinned messages and the first user message (the task),
 *   with the whole unit they sit in; the first keepFirstTurns turns; the last keepRecent
 *   turns (level 3: at least 1 when keepRecent ≥ 1). When that is still over the target,
 *   the result is the smallest one the levels reach (tokensAfter > target, `fits` false).
 * - A provider's compaction (adapters/server-context.ts) is never removed either: the head runs
 *   to the unit holding the latest one, so the summary stands after it, where the provider
 *   reads (the tiered compactor moves what precedes it out; this strategy keeps it).
 * - Removed messages are stored whole (JSON of the original, uncut messages, kind "history")
 *   and the summary or marker names the ref; cut outputs are stored too (truncateToolOutput):
 *   nothing removed is lost.
 * - The summary is one user message where the first removed turn was. Where removal leaves two
 *   user or two assistant messages side by side, the later is merged into the earlier
 *   (mergeAdjacent); so when the kept head ends with a user message (keepFirstTurns ≤ 1), the
 *   summary is appended to it as a text part of its own, after the message's original parts.
 * - Every rewrite is checked with the provider validator for every format (with extended
 *   thinking on for the result whenever the input used it): a level 2 or 3 result that would
 *   introduce a violation the input did not have keeps more units before the recent turns
 *   until none is introduced. The one rule removal can break is Anthropic's extended thinking
 *   rule: the summary is a user turn, so the tool-use turn in progress must then open with
 *   signed reasoning at the first kept assistant message after it; the recent turns then
 *   start at the nearest earlier unit that opens so. When none does, the head is extended
 *   to keep the unit where the turn in progress opens: the summary then follows that unit's
 *   tool results, is sent in the same user turn as them and starts no turn of its own (with
 *   the default keepFirstTurns 2 and one task, the head usually is that already).
 * - The lifecycle callbacks (beforeCompactionStart / afterCompactionEnd) are not fired here:
 *   the caller that picks the strategy (config.inMemoryStrategy or this one) fires them, so a
 *   custom strategy gets them too.
 */
import { kFormats } from "../adapters/common.js";
import { compactionBoundary } from "../adapters/server-context.js";
import { hashText, hashToHex } from "../core/hash.js";
import { TurnMap } from "./turn-map.js";
import { CtxfoldError } from "../errors.js";
import type { Message } from "../model/schema.js";
import { extractSteps } from "../steps/reducer.js";
import { createMemoryStore, type OffloadStore } from "../store/index.js";
import { tokenMeasure } from "../tokens/measure.js";
import { defaultTokenCounter, TokenCounter } from "../tokens/token-counter.js";
import { newViolations, usesThinking, validate, type Issue, type ValidationResult } from "../validate/index.js";
import { turnInProgressOpener } from "../validate/rules.js";
import { resolveSessionConfig, shouldCompactSession, type SessionCompactionConfig, type SessionCompactionInput, type CompactionSettings, type CompactionStrategy } from "./config.js";
import { kTurnSummaryKind, mergeAdjacent, summarizeTurns, summaryMessage, truncateToolOutputs } from "./turns.js";

/** How far compaction went: 0 nothing to do, 1 tool outputs cut, 2 middle summarised, 3 middle dropped. */
export type CompactionLevel = 0 | 1 | 2 | 3;

export interface CompactMessagesOptions {
  /** Where cut outputs and removed messages are stored. @default a new in-memory store */
  store?: OffloadStore;
  /** Token estimates. @default a TokenCounter (o200k_base) shared by calls without one */
  counter?: TokenCounter;
}

export interface CompactMessagesResult {
  /** The compacted messages: a new array; untouched messages are the input's objects. */
  messages: Message[];
  /** The level whose result this is (see CompactionLevel). */
  level: CompactionLevel;
  /** Estimated tokens of the input and of the result. */
  tokensBefore: number;
  tokensAfter: number;
  /** The token count compaction aimed at or below (see targetTokens). */
  target: number;
  /** tokensAfter ≤ target. */
  fits: boolean;
  /** Every ref the result names: cut outputs, in message order, then the removed history. */
  refs: string[];
  /** Where the removed messages are stored whole (levels 2 and 3). */
  historyRef?: string;
  /** Turns removed (levels 2 and 3). */
  removedTurns: number;
}

/**
 * The most estimated tokens a compacted context may hold: the largest whole count at which
 * shouldCompactSession does not fire, ≈ (compactAtPct − compactBudgetThresholdPct) ×
 * maxContextTokens, at least 0. Infinity for an unbounded context.
 */
export function targetTokens(config: Pick<CompactionSettings, "compactAtPct" | "compactBudgetThresholdPct">, maxContextTokens: number): number {
  if (maxContextTokens === Infinity) return Infinity;
  let t = Math.max(0, Math.floor((config.compactAtPct - config.compactBudgetThresholdPct) * maxContextTokens));
  while (t > 0 && shouldCompactSession(t, maxContextTokens, config)) t--;
  while (!shouldCompactSession(t + 1, maxContextTokens, config)) t++;
  return t;
}

/** A run of whole turns that can be kept or removed as one (see the module comment). */
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

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * Block compaction's compact_messages(): reduces `messages` until their estimated tokens are at most
 * the target (targetTokens), in three levels, each run only when the previous one did not get
 * there:
 *
 * 0. Already within the target: the messages as they are (a new array of the same objects).
 * 1. Truncate tool outputs to `toolOutputMaxLines` (truncateToolOutputs), message by message,
 *    oldest first, re-measuring after each, and stop as soon as within the target: the newest
 *    outputs are cut last.
 * 2. Summarise turns: the turns between the first `keepFirstTurns` and the last
 *    `keepRecent` are replaced by one summary message — per-turn one-liners within
 *    `maxSummaryTokens` (summarizeTurns) under a header naming the ref where the removed
 *    messages are stored whole.
 * 3. Drop the middle: the summary shrinks to a one-line marker naming that ref, and while still
 *    over the target, `keepRecent` shrinks one turn at a time down to 1.
 *
 * The input array and its messages are never modified. The result introduces no provider
 * violation the input did not have, for any format (checked; see the module comment), and
 * keeps role alternation wherever the input had it.
 */
export function compactMessages(
  messages: readonly Message[], config: SessionCompactionInput, maxContextTokens: number, options: CompactMessagesOptions = {},
): CompactMessagesResult {
  if (typeof maxContextTokens !== "number" || !(maxContextTokens > 0)) {
    throw new CtxfoldError("E_BAD_INPUT", `must be a positive number, got ${String(maxContextTokens)}`, { path: "maxContextTokens" });
  }
  const cfg = resolveSessionConfig(config);
  const store = options.store ?? createMemoryStore();
  const counter = options.counter ?? defaultTokenCounter();
  const target = targetTokens(cfg, maxContextTokens);

  const measure = tokenMeasure(counter);
  // One estimator batch for the input; each message's tokens are then memoised by the measure.
  let total = measure.sum(messages);
  const tok = messages.map((m) => measure.of(m));
  const tokensBefore = total;
  const fits = (t: number): boolean => t <= target;
  const result = (out: Message[], level: CompactionLevel, t: number, refs: string[], extra: { historyRef?: string; removedTurns?: number } = {}): CompactMessagesResult => ({
    messages: out, level, tokensBefore, tokensAfter: t, target, fits: fits(t), refs, historyRef: extra.historyRef, removedTurns: extra.removedTurns ?? 0,
  });

  // Level 0.
  if (fits(total)) return result([...messages], 0, total, []);

  // Level 1: oldest outputs first, re-measuring after each message.
  const cur = [...messages];
  const cutRefs: string[][] = messages.map(() => []);
  const refsOf = (indices: Iterable<number>): string[] => {
    const out: string[] = [];
    for (const i of indices) out.push(...cutRefs[i]);
    return out;
  };
  for (let i = 0; i < cur.length && !fits(total); i++) {
    if (!cur[i].parts.some((p) => p.type === "tool-result")) continue;
    const r = truncateToolOutputs([cur[i]], cfg.toolOutputMaxLines, store);
    if (r.messages[0] === cur[i]) continue;
    cur[i] = r.messages[0];
    cutRefs[i] = r.refs;
    const t = measure.of(cur[i]);
    total += t - tok[i];
    tok[i] = t;
  }
  const level1 = (): CompactMessagesResult => result(cur, 1, total, refsOf(cur.keys()));
  if (fits(total)) return level1();

  // Levels 2 and 3: remove whole units of turns from the middle.
  const { units, turns } = unitsOf(messages);
  const unitTokens = units.map((u) => {
    let t = 0;
    for (let i = u.start; i < u.end; i++) t += tok[i];
    return t;
  });
  let headEnd = 0;
  const boundary = compactionBoundary(messages);
  while (headEnd < units.length && (units[headEnd].firstTurn < cfg.keepFirstTurns || units[headEnd].start <= boundary)) headEnd++;
  /** Index of the first unit of the last k turns (never inside the head). */
  const recentStart = (k: number): number => {
    let s = units.length;
    while (s > headEnd && units[s - 1].lastTurn >= turns - k) s--;
    return s;
  };
  /** The units removed when the recent turns start at unit `start` (and the head ends before unit `head`). */
  const removedUnits = (start: number, head = headEnd): number[] => {
    const out: number[] = [];
    for (let a = head; a < start; a++) if (!units[a].keep) out.push(a);
    return out;
  };

  type Mode = "summary" | "marker";
  const candidates: { mode: Mode; start: number }[] = [];
  const addCandidate = (mode: Mode, start: number): void => {
    if (removedUnits(start).length === 0) return;
    if (candidates.some((c) => c.mode === mode && c.start === start)) return;
    candidates.push({ mode, start });
  };
  const keepRecent = cfg.keepRecent;
  addCandidate("summary", recentStart(keepRecent));
  addCandidate("marker", recentStart(keepRecent));
  for (let k = keepRecent - 1; k >= 1; k--) addCandidate("marker", recentStart(k));
  if (candidates.length === 0) return level1();

  const placeholderRef = `${store.prefix}/history_${"0".repeat(16)}.json`;
  /** The summary (or marker) message for a set of removed units, naming `ref`. */
  const summaryFor = (mode: Mode, removed: readonly number[], ref: string, lines: string[]): Message => {
    const first = units[removed[0]].firstTurn;
    const last = units[removed[removed.length - 1]].lastTurn;
    const count = removed.reduce((n, a) => n + units[a].lastTurn - units[a].firstTurn + 1, 0);
    const span = first === last ? `turn ${first}` : `turns ${first}–${last}`;
    const what = mode === "summary" ? "summarised below" : "removed";
    const header = `[ctxfold: ${plural(count, "earlier turn")} (${span}) ${what} to save context; the original messages: ${ref}]`;
    const m = summaryMessage(mode === "summary" ? lines : [], header, `ctxfold-compact-${hashToHex(hashText(`${mode}\u0000${ref}`))}`);
    return { ...m, meta: { ctxfold: { kind: kTurnSummaryKind, level: mode === "summary" ? 2 : 3, ref, turns: count } } };
  };
  const linesCache = new Map<string, string[]>();
  const linesFor = (removed: readonly number[]): string[] => {
    const key = removed.join(",");
    let lines = linesCache.get(key);
    if (!lines) linesCache.set(key, (lines = summarise(removed)));
    return lines;
  };
  const summarise = (removed: readonly number[]): string[] =>
    summarizeTurns(
      removed.map((a) => ({
        label: units[a].firstTurn === units[a].lastTurn ? `Turn ${units[a].firstTurn}` : `Turns ${units[a].firstTurn}–${units[a].lastTurn}`,
        messages: messages.slice(units[a].start, units[a].end),
      })),
      cfg.maxSummaryTokens,
      (text) => counter.estimate(text),
    ).lines;
  /** Kept messages (cut as level 1 left them) with the summary where the first removed unit was. */
  const assemble = (removed: readonly number[], summary: Message): Message[] => {
    const gone = new Set(removed);
    const out: Message[] = [];
    const gapBefore: boolean[] = [];
    let gap = false;
    units.forEach((u, a) => {
      if (gone.has(a)) {
        if (a === removed[0]) {
          out.push(summary);
          gapBefore.push(true);
        }
        gap = true;
        return;
      }
      for (let i = u.start; i < u.end; i++) {
        out.push(cur[i]);
        gapBefore.push(gap);
        gap = false;
      }
    });
    return mergeAdjacent(out, gapBefore);
  };
  const keptTokens = (removed: readonly number[]): number => removed.reduce((t, a) => t - unitTokens[a], total);

  const thinking = usesThinking(messages);
  let before: ValidationResult[] | undefined;
  const newIssues = (after: readonly Message[]): Issue[] => {
    before ??= kFormats.map((f) => validate(messages, f, { thinking }));
    return kFormats.flatMap((f, j) => newViolations(before![j], validate(after, f, { thinking })));
  };
  /** Units whose first non-system message is an assistant message opening with signed reasoning. */
  const reasoningLed = units.map((u) => {
    const m = messages.slice(u.start, u.end).find((x) => x.role !== "system");
    const p = m?.role === "assistant" ? m.parts[0] : undefined;
    return p?.type === "reasoning" && (!!p.signature || !!p.redacted);
  });
  /**
   * Where the recent turns start next when the result would break Anthropic's extended
   * thinking rule (the tool-use turn in progress must open with signed reasoning): at the
   * nearest earlier unit that opens with it; failing that, everything but the first unit of
   * the middle is kept, a last try.
   */
  const thinkingRetreat = (s: number, head: number): number => {
    for (let u = s - 1; u > head; u--) if (reasoningLed[u]) return u;
    return head + 1 < s ? head + 1 : head;
  };
  /** The unit holding the message that opens the tool-use turn in progress (thinking rule), or -1. */
  const openerUnit = ((): number => {
    if (!thinking) return -1;
    const i = turnInProgressOpener(messages, { compactionOpens: true });
    return i < 0 ? -1 : units.findIndex((u) => u.start <= i && i < u.end);
  })();

  /**
   * The result for one candidate: checked with the validator (keeping more units before the
   * recent turns while it would introduce a violation, one at a time, or straight to a unit
   * opening with signed reasoning for the thinking rule), then stored and named. When no
   * start passes and the turn in progress opens in the middle, the head is extended to keep
   * that opening unit (the summary then follows its tool results and starts no user turn),
   * and the search runs once more.
   */
  const realize = (mode: Mode, start: number): CompactMessagesResult | undefined => {
    const heads = [headEnd];
    if (openerUnit >= headEnd && openerUnit + 1 < start) heads.push(openerUnit + 1);
    for (const head of heads) {
      for (let s = start; s > head; ) {
        const removed = removedUnits(s, head);
        if (removed.length === 0) break;
        const lines = mode === "summary" ? linesFor(removed) : [];
        const issues = newIssues(assemble(removed, summaryFor(mode, removed, placeholderRef, lines)));
        if (issues.length > 0) {
          s = issues.every((i) => i.code === "THINKING_DROPPED") ? thinkingRetreat(s, head) : s - 1;
          continue;
        }
        const originals = removed.flatMap((a) => messages.slice(units[a].start, units[a].end));
        const historyRef = store.put(JSON.stringify(originals), { kind: "history", ext: "json" });
        const summary = summaryFor(mode, removed, historyRef, lines);
        const out = assemble(removed, summary);
        const gone = new Set(removed);
        const kept = units.flatMap((u, a) => (gone.has(a) ? [] : Array.from({ length: u.end - u.start }, (_, k) => u.start + k)));
        const removedTurns = removed.reduce((n, a) => n + units[a].lastTurn - units[a].firstTurn + 1, 0);
        return result(out, mode === "summary" ? 2 : 3, measure.sum(out), [...refsOf(kept), historyRef], { historyRef, removedTurns });
      }
    }
    return undefined;
  };

  let best: CompactMessagesResult | undefined;
  for (let c = 0; c < candidates.length; c++) {
    const { mode, start } = candidates[c];
    const isLast = c === candidates.length - 1;
    if (!isLast) {
      const removed = removedUnits(start);
      const lines = mode === "summary" ? linesFor(removed) : [];
      // An upper bound: merging the summary into a neighbour saves that message's overheads.
      if (!fits(keptTokens(removed) + measure.of(summaryFor(mode, removed, placeholderRef, lines)))) continue;
    }
    const r = realize(mode, start);
    if (!r) continue;
    if (r.fits || isLast) return r;
    best = r;
  }
  return best ?? level1();
}

/**
 * Block compaction's DefaultCompaction: the built-in legacy strategy, compactMessages() with a store
 * and a counter of its own. Stateless apart from the store (which keeps every cut output and
 * removed history, so refs in the results stay readable through `store`).
 */
export class DefaultCompaction implements CompactionStrategy {
  readonly store: OffloadStore;
  readonly counter: TokenCounter;

  constructor(options: {
    /** Where cut outputs and removed messages are stored. @default a new in-memory store */
    store?: OffloadStore;
    /** Token estimates. @default a new TokenCounter (o200k_base) */
    counter?: TokenCounter;
  } = {}) {
    this.store = options.store ?? createMemoryStore();
    this.counter = options.counter ?? new TokenCounter();
  }

  compact(messages: readonly Message[], config: SessionCompactionConfig, maxContextTokens: number): Message[] {
    return this.compactMessages(messages, config, maxContextTokens).messages;
  }

  /** compact() with everything compactMessages() tells (level, tokens, refs). */
  compactMessages(messages: readonly Message[], config: SessionCompactionInput, maxContextTokens: number): CompactMessagesResult {
    return compactMessages(messages, config, maxContextTokens, { store: this.store, counter: this.counter });
  }
}
