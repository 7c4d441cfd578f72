/**
 * Block compaction's configuration (SessionCompactionConfig): WHEN to compact (compactAtPct, compactBudgetThresholdPct,
 * compactionScope) and HOW (keepFirstTurns, keepRecent, maxSummaryTokens,
 * toolOutputMaxLines), with the two strategies as config fields (the design's "config
 * consolidation") and the lifecycle callbacks. Numeric fields are validated by the zod schema,
 * which also holds their defaults.
 *
 * Each compaction system has its own configuration name: SessionCompactionConfig here
 * (`ctxfold/block`), StepCompactionConfig for the step compactor (`ctxfold/steps`),
 * CompactorConfig for the tiered compactor (the package root). The design documents call both
 * of the first two "CompactionConfig".
 */
import { z } from "zod";
import { readDeprecatedNames, issueAsGiven, type DeprecatedNames } from "../deprecated-names.js";
import { configError, CtxfoldError } from "../errors.js";
import type { CompactedSection, CompactionBlock, Loop, Message, TurnRange } from "../model/schema.js";
import type { TurnMap } from "./turn-map.js";

/** Block compaction's CompactionScope: how many earlier loops compaction and context loading take in. */
export type CompactionScope = { kind: "fixed-count"; count: number } | { kind: "token-budget" };

/** FixedCount(n): a fixed number of earlier loops on the active chain (default 3). */
export function FixedCount(count = 3): CompactionScope {
  if (!Number.isInteger(count) || count < 0)
    throw new CtxfoldError("E_BAD_INPUT", `must be a non-negative integer, got ${String(count)}`, { path: "FixedCount" });
  return { kind: "fixed-count", count };
}

/**
 * TokenBudget: walk back from the current loop accumulating per-loop token estimates and stop
 * when max_context_tokens would be exceeded. A loop whose raw messages alone exceed the budget
 * is still taken in when it is the first one looked at (block compaction's note: its summaries fit
 * even when its originals do not).
 */
export function TokenBudget(): CompactionScope {
  return { kind: "token-budget" };
}

const Scope = z.union([
  z.strictObject({ kind: z.literal("fixed-count"), count: z.number().int().nonnegative() }),
  z.strictObject({ kind: z.literal("token-budget") }),
]);

const fraction = (d: number) => z.number().gt(0).lte(1).default(d);
const count = (d: number) => z.number().int().nonnegative().default(d);

export const CompactionSettings = z.strictObject({
  /** Fraction of max_context_tokens at which headroom is measured. @default 0.9 */
  compactAtPct: fraction(0.9),
  /** Minimum headroom, as a fraction of max_context_tokens, before compaction fires. @default 0.05 */
  compactBudgetThresholdPct: z.number().gte(0).lt(1).default(0.05),
  /** How many earlier loops to include. @default FixedCount(3) */
  compactionScope: Scope.default({ kind: "fixed-count", count: 3 }),
  /** Turns kept verbatim from the start (most recent loop). @default 2 */
  keepFirstTurns: count(2),
  /**
   * The latest turns kept (extended back to a turn boundary), the keep_recent section; a turn is
   * a run of messages sharing one turn id (TurnMap; the in-memory strategy makes turns of its own
   * where messages carry none). "Keep the recent N" has this one name in the tiered compactor's
   * and the step compactor's configs too, each in its own unit (tool exchanges, steps); formerly
   * `keepRecentTurns`, still read (see Deprecated names in docs/concepts.md).
   * @default 10
   */
  keepRecent: count(10),
  /** Token budget of the summarised middle section. @default 2000 */
  maxSummaryTokens: count(2000),
  /** Max lines per tool output in the keep_recent section. @default 50 */
  toolOutputMaxLines: count(50),
});
export type CompactionSettings = z.infer<typeof CompactionSettings>;

/** What the callbacks and events learn about one compaction. */
export interface CompactionInfo {
  sessionId?: string;
  /** The loop compaction runs for (the current loop), or undefined in the legacy path. */
  loopId?: string | number;
  /** Loops that get a block (current first), in the block path. */
  loopIds: (string | number)[];
  maxContextTokens: number;
  /** Estimated tokens of the context before compaction. */
  tokensBefore: number;
  /** Estimated tokens after (only in after_compaction_end). */
  tokensAfter?: number;
}

/**
 * The block strategy (BlockCompactionStrategy): builds the non-destructive CompactionBlock overlay of a
 * loop from three sections. `keepFirst` and `keepRecent` are asked only for the most recent
 * loop; `keepCompacted` covers the middle of the most recent loop and the whole of older ones.
 */
export interface BlockCompactionStrategy {
  keepFirst(record: Loop, turnMap: TurnMap, config: SessionCompactionConfig): TurnRange | undefined;
  keepRecent(record: Loop, turnMap: TurnMap, config: SessionCompactionConfig): CompactedSection | undefined;
  keepCompacted(record: Loop, turnMap: TurnMap, config: SessionCompactionConfig, isMostRecent: boolean): CompactedSection | undefined;
  compact(record: Loop, config: SessionCompactionConfig, isMostRecent: boolean): CompactionBlock;
}

/** The legacy in-memory strategy (block compaction's CompactionStrategy): messages in, messages out. */
export interface CompactionStrategy {
  compact(messages: readonly Message[], config: SessionCompactionConfig, maxContextTokens: number): Message[];
}

export interface SessionCompactionConfig extends CompactionSettings {
  /** Used when no session is given. @default DefaultCompaction */
  inMemoryStrategy?: CompactionStrategy;
  /** Used with a session. @default DefaultBlockCompaction */
  blockStrategy?: BlockCompactionStrategy;
  /** Fires before compaction begins (pre-compaction indexing, memory extraction). @default none */
  beforeCompactionStart?: (info: CompactionInfo) => void;
  /** Fires after compaction completes (post-compaction verification). @default none */
  afterCompactionEnd?: (info: CompactionInfo) => void;
}

/** Block compaction's deprecated setting names, each to the name it has now (read by resolveSessionConfig). */
export const kDeprecatedSessionNames: DeprecatedNames = Object.freeze({ keepRecentTurns: "keepRecent" });

/** Block compaction's configuration as a caller gives it: any of its fields, under their names or a deprecated one. */
export interface SessionCompactionInput extends Partial<SessionCompactionConfig> {
  /**
   * keepRecent's former name, read as keepRecent (the same count of turns); giving both with
   * different values is E_BAD_INPUT.
   * @deprecated Use keepRecent.
   * @default none: keepRecent's applies
   */
  keepRecentTurns?: number;
}

export const kDefaultCompactionSettings: Readonly<CompactionSettings> = Object.freeze(CompactionSettings.parse({}));

/** Validates a partial config and fills the defaults, reading a deprecated name as its new one; E_BAD_INPUT names the field as given. */
export function resolveSessionConfig(input: SessionCompactionInput = {}, path = "config"): SessionCompactionConfig {
  const { inMemoryStrategy, blockStrategy, beforeCompactionStart, afterCompactionEnd, ...settings } = input;
  const r = CompactionSettings.safeParse(readDeprecatedNames(settings, kDeprecatedSessionNames, path));
  if (!r.success) {
    throw configError(issueAsGiven(r.error.issues[0], settings, kDeprecatedSessionNames), path, {
      options: [...Object.keys(kDefaultCompactionSettings), "inMemoryStrategy", "blockStrategy", "beforeCompactionStart", "afterCompactionEnd"],
    });
  }
  for (const [name, fn] of Object.entries({ beforeCompactionStart, afterCompactionEnd })) {
    if (fn !== undefined && typeof fn !== "function") throw new CtxfoldError("E_BAD_INPUT", "expected a function", { path: `${path}.${name}` });
  }
  return { ...r.data, inMemoryStrategy, blockStrategy, beforeCompactionStart, afterCompactionEnd };
}

/**
 * Block compaction's trigger: headroom is measured at `compactAtPct` of the context window, and
 * compaction fires when it falls below `compactBudgetThresholdPct` of the window. With the
 * defaults and a 100k window: the limit is 90k, and compaction fires above 85k used.
 */
export function shouldCompactSession(
  usedTokens: number,
  maxContextTokens: number,
  config: Pick<CompactionSettings, "compactAtPct" | "compactBudgetThresholdPct"> = kDefaultCompactionSettings,
): boolean {
  const headroom = config.compactAtPct * maxContextTokens - usedTokens;
  return headroom < config.compactBudgetThresholdPct * maxContextTokens;
}
