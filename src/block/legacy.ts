/**
 * Block compaction's legacy in-memory compaction: DefaultCompaction, the built-in CompactionStrategy
 * (used when there is no session), which delegates to compactMessages() — the design's
 * compact_messages() — and its three levels: 1. truncate tool outputs, 2. summarise turns,
 * 3. drop the middle (levels 2 and 3 remove whole turns: legacy-middle.ts).
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
import { CtxfoldError } from "../errors.js";
import type { Message } from "../model/schema.js";
import { createMemoryStore, type OffloadStore } from "../store/index.js";
import { tokenMeasure, type TokenMeasure } from "../tokens/measure.js";
import { defaultTokenCounter, TokenCounter } from "../tokens/token-counter.js";
import {
  resolveSessionConfig,
  shouldCompactSession,
  type SessionCompactionConfig,
  type SessionCompactionInput,
  type CompactionSettings,
  type CompactionStrategy,
} from "./config.js";
import { cutRefsOf, removeMiddle, type CutMessages } from "./legacy-middle.js";
import { truncateToolOutputs } from "./turns.js";

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
  messages: readonly Message[],
  config: SessionCompactionInput,
  maxContextTokens: number,
  options: CompactMessagesOptions = {},
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
  const tokensBefore = measure.sum(messages);
  const result = (
    out: Message[],
    level: CompactionLevel,
    t: number,
    refs: string[],
    extra: { historyRef?: string; removedTurns?: number } = {},
  ): CompactMessagesResult => ({
    messages: out,
    level,
    tokensBefore,
    tokensAfter: t,
    target,
    fits: t <= target,
    refs,
    historyRef: extra.historyRef,
    removedTurns: extra.removedTurns ?? 0,
  });

  if (tokensBefore <= target) return result([...messages], 0, tokensBefore, []);
  const cut = cutOldestOutputs(messages, tokensBefore, cfg.toolOutputMaxLines, store, measure, target);
  const level1 = (): CompactMessagesResult => result(cut.messages, 1, cut.total, cutRefsOf(cut, cut.messages.keys()));
  if (cut.total <= target) return level1();
  const r = removeMiddle(messages, cut, { settings: cfg, store, counter, measure, target });
  return r ? result(r.messages, r.level, r.tokens, r.refs, { historyRef: r.historyRef, removedTurns: r.removedTurns }) : level1();
}

/**
 * Level 1: tool outputs truncated to `maxLines` (truncateToolOutputs) message by message, oldest
 * first, re-measuring after each, until within the target: the newest outputs are cut last.
 * `total` is the input's estimate.
 */
function cutOldestOutputs(
  messages: readonly Message[],
  total: number,
  maxLines: number,
  store: OffloadStore,
  measure: TokenMeasure,
  target: number,
): CutMessages {
  const cut: CutMessages = { messages: [...messages], tokens: messages.map((m) => measure.of(m)), total, refs: messages.map(() => []) };
  for (let i = 0; i < cut.messages.length && cut.total > target; i++) {
    const m = cut.messages[i];
    if (!m.parts.some((p) => p.type === "tool-result")) continue;
    const r = truncateToolOutputs([m], maxLines, store);
    if (r.messages[0] === m) continue;
    cut.messages[i] = r.messages[0];
    cut.refs[i] = r.refs;
    const t = measure.of(cut.messages[i]);
    cut.total += t - cut.tokens[i];
    cut.tokens[i] = t;
  }
  return cut;
}

/**
 * Block compaction's DefaultCompaction: the built-in legacy strategy, compactMessages() with a store
 * and a counter of its own. Stateless apart from the store (which keeps every cut output and
 * removed history, so refs in the results stay readable through `store`).
 */
export class DefaultCompaction implements CompactionStrategy {
  readonly store: OffloadStore;
  readonly counter: TokenCounter;

  constructor(
    options: {
      /** Where cut outputs and removed messages are stored. @default a new in-memory store */
      store?: OffloadStore;
      /** Token estimates. @default a new TokenCounter (o200k_base) */
      counter?: TokenCounter;
    } = {},
  ) {
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
