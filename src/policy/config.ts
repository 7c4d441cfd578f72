/**
 * The tiered compactor's configuration, validated by zod: a bad field is a
 * CtxfoldError E_BAD_INPUT naming it. Ratios are fractions of the call's budget.
 */
import { z } from "zod";
import { readDeprecatedNames, issueAsGiven, type DeprecatedNames } from "../deprecated-names.js";
import { configError, CtxfoldError } from "../errors.js";
import type { Summarizer } from "../steps/summarizer.js";
import type { OffloadStore } from "../store/index.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import type { PolicyEvent } from "./events.js";
import { kPresets, type PresetName } from "../steps/config.js";

const ratio = (d: number) => z.number().gt(0).lte(1).default(d);
/** The recall hint's setting: on (the default line), off, or the line itself (one line, at most 300 characters). */
export const RecallHintSetting = z.union([
  z.boolean(),
  z
    .string()
    .min(1)
    .max(300)
    .regex(/^[^\r\n]*$/, "must be one line (no line break)"),
]);
const count = (d: number) => z.number().int().nonnegative().default(d);

export const TieredSettings = z.strictObject({
  /** "tiered" (the tiered policy) or "legacy" (block compaction's three levels and the step compactor). @default "tiered" */
  mode: z.enum(["tiered", "legacy"]).default("tiered"),
  /** Usage at or below soft × budget is the normal tier: no compaction at all (stage 0). @default 0.85 */
  softRatio: ratio(0.85),
  /** Usage above hard × budget is the critical tier: stage 4 may merge the oldest context. @default 1 */
  hardRatio: ratio(1),
  /**
   * An epoch compacts down to target × budget. The gap up to the soft threshold is the
   * hysteresis: appends fit in it for a while with the rendered prefix byte-identical between
   * calls (provider prompt caches keep hitting). A higher target keeps more of the conversation
   * in text; a lower one makes epochs, which rewrite what follows their first change, rarer, and
   * each call reads fewer tokens. What stays whole (the critical messages, the latest exchanges,
   * standing instructions) and the ledger often leave an epoch above the target anyway, so a low
   * target costs little evidence: on both corpora pooled, with ledgerRatio 0.18, 0.1 keeps
   * 88.2% of next-step evidence at 8k and 93.2% at 32k for a cost per call of 1,493 and 3,367,
   * against 87.9%, 90.3%, 1,502 and 3,480 at 0.3 (docs/eval.md, "Choosing the defaults"; with
   * the ledger's windows of then, 6,000 and 2,000 characters: 89.1% and 96.5% since).
   * @default 0.1
   */
  targetRatio: ratio(0.1),
  /**
   * The latest tool exchanges kept whole in stages 1–3 (1 in the critical tier): an exchange is
   * an assistant message that calls tools with the results answering it, however many calls it
   * makes. "Keep the recent N" has this one name in the step compactor's and block compaction's
   * configs too, each in its own unit (steps there, turns in block compaction); formerly
   * `preserveRecentSteps`, still read (see Deprecated names in docs/concepts.md).
   * @default 2
   */
  keepRecent: count(2),
  /** Stage 1 shortens tool-call arguments above this many tokens. @default 200 */
  argTokens: count(200),
  /** Stage 2 replaces tool outputs above this many tokens by their observation and ref. @default 120 */
  outputTokens: count(120),
  /**
   * Stage 2 keeps, beside an output's observation and ref, the lines of the output that name the
   * focus (the specific terms of the task, the latest user and assistant messages and the calls
   * of the preserved tail; src/policy/relevance/focus.ts), within this many tokens per output. They go
   * again, oldest first, where the observations alone are needed to reach the target. The
   * lines depend only on the output and the focus terms it holds, so an older output renders
   * the same in the next epoch unless the focus moved onto or off its names. 0: observation and
   * ref only.
   * @default 30
   */
  focusTokens: count(30),
  /**
   * A user turn after the task of at most this many tokens (text only, not one of ctxfold's
   * notes) is a standing instruction: it stays verbatim where it stands, stage 3 does not
   * summarise it and stage 4 merges around it (policy/relevance/instructions.ts). Longer turns
   * (pasted files, slash-command expansions, a resumed session's summary) are history. 0: off.
   * @default 250
   */
  instructionTokens: count(250),
  /**
   * The standing instructions kept are the newest that fit this fraction of the budget together
   * (a turn repeated word for word later counts once, as its latest copy); older ones are
   * history. 0: off.
   * @default 0.1
   */
  instructionRatio: z.number().min(0).max(0.5).default(0.1),
  /** Stage 3 summarises historical text parts above this many tokens… @default 300 */
  textTokens: count(300),
  /** …to about this fraction of their size. @default 0.25 */
  textRatio: ratio(0.25),
  /** Stage 4's summary of the merged oldest context, at most this many tokens. @default 1500 */
  mergeTokens: count(1500),
  /** Below this many milliseconds to the deadline, stages 3–4 and background extraction are skipped. @default 2000 */
  deadlineReserveMs: count(2000),
  /** A custom summariser's answer is awaited this long; then the extractive one is used, with an event. @default 30000 */
  summarizerTimeoutMs: count(30_000),
  /** A warning event when one call compacts more than this many parts (churn). @default 200 */
  churnWarnAt: count(200),
  /**
   * In a session, the per-message work the next epoch will need (reducing each new step,
   * rendering new tool messages for the store) is done in idle time after a call returns
   * (setImmediate, slices of at most 2 ms, never keeping the process alive), while the runner
   * awaits its model; the epoch's own call then does only what is left. Output is the same
   * either way. Off: all of it happens in the epoch's call.
   * @default true
   */
  idlePrepare: z.boolean().default(true),
  /**
   * In a session, the next epoch is compacted ahead, off the request path: once the output is
   * within aheadRatio × budget of the soft threshold (the reach), the conversation as it stands
   * is compacted down to the target less the reach, in idle time after the call (with
   * idlePrepare; otherwise in the call that needs it). The call that crosses the threshold gets
   * that compaction with the messages appended since after it, unchanged, when they are within
   * twice the reach and the whole stays within the soft threshold; otherwise it compacts in
   * full, as it does when the budget or format changed or a call has a deadline. Only where
   * steps are small against the reach (two appends of the mean size since the epoch fit it),
   * and after an epoch whose output, its ledger aside, ended in the lower quarter of the band
   * from the target to the soft threshold: with steps large against the budget, or what must
   * stay whole near the threshold, the messages an epoch ahead leaves whole would bring the
   * next epoch sooner, so each epoch is compacted in its own call. Which calls compact, and
   * what, never depends on timing, only where the latency goes. On both corpora pooled, 0.05
   * leaves evidence unchanged against 0, with cost per call the same at 8k and 1.3% higher at
   * 32k. 0: off.
   * @default 0.05
   */
  aheadRatio: z.number().min(0).max(0.5).default(0.05),
  /**
   * The step compactor's tuning-table preset for stage 3's step compaction (its maxCompactSteps and
   * groupSimilar; how many recent steps stay whole still follows keepRecent). Tiered mode only.
   * @default none: the step compactor's defaults (maxCompactSteps 20, groupSimilar true)
   */
  stepPreset: z.enum(Object.keys(kPresets) as [PresetName, ...PresetName[]]).optional(),
  /**
   * Redact secrets (API keys, tokens, private keys, credentials in URLs and key-value forms) in
   * what goes to the offload store too, not only in the summaries and observations the prompt
   * shows (those are always redacted). The stored original is then the redacted text: a ref
   * gives back `[REDACTED:<kind>]` where the secret was, and nothing can give the secret back.
   * Binary content is stored as it is.
   * @default false
   */
  redactOffload: z.boolean().default(false),
  /**
   * Stage 2 lets superseded tool outputs go: an output a later step made stale (the same file
   * read again or edited, the same command run again, the same directory listed again, the
   * same call made again) becomes one line naming what superseded it and the ref of the
   * original (a failure keeps its error head and call id), and once stage 2 runs, every such
   * output before the preserved tail goes, whatever its age. The outputs still current go
   * oldest first until the target, as without it. Off: oldest first only, as observations.
   * @default true
   */
  supersede: z.boolean().default(true),
  /**
   * The fact ledger (policy/relevance/ledger.ts): stages 3 and 4 keep what the messages they remove
   * established — files (edited ones said so), names, error lines, decisions — as one marked
   * section before the step summary's lines, within this fraction of the budget, growing
   * append-only across a session's epochs so the cached prefix reaches through it. 0 turns it
   * off. Its tokens are content the model reads, so they are paid for; names cost a few tokens
   * each and sit in the cached prefix. On both corpora pooled (targetRatio 0.1), next-step
   * evidence at 8k / 32k and cost per call at 8k: 0.05 gives 81.1% / 88.0% for 1,387; 0.1
   * 85.5% / 90.6% for 1,429; 0.18 88.2% / 93.2% for 1,493; 0.25 89.2% / 93.8% for 1,512.
   * 0.18 was the most evidence within 5% of the cost per call before the ledger grew
   * (docs/eval.md, "Choosing the defaults"; figures with the ledger's windows of then). With
   * names ranked per token, wider windows and a fresh ledger's first block of seven tenths of
   * the room, 0.2 keeps 90.6% / 98.0% for 1,493 and 3,354 a call, against 0.18 with four
   * fifths' 90.4% / 97.9% for 1,497 and 3,376 (no source lower).
   * @default 0.2
   */
  ledgerRatio: z.number().min(0).max(0.5).default(0.2),
  /**
   * Stage 3's group lines name what their steps worked on (`10 commands executed: nl
   * django/forms/fields.py; python reproduce.py; …`), where the step compactor's templates say
   * only how many steps of which kind (its groupTargets).
   * @default false
   */
  stepTargets: z.boolean().default(false),
  /**
   * One short line after the first ref of a compacted prompt telling the model how to read what
   * refs stand for, for an agent that has a recall tool (ctxfold/ai-sdk's and ctxfold/langchain's
   * recall tools, or `ctxfold mcp`'s): true places the default line (kDefaultRecallHint, which
   * names the tool `recall`), a string places that line instead. It goes after the line of the
   * first ref in text compaction wrote, never into the caller's own parts, within the budget
   * (policy/recall-hint.ts). A call's `recallHint` overrides it (the AI SDK middleware turns it on
   * for calls whose tools include `recall`).
   * @default false
   */
  recallHint: RecallHintSetting.default(false),
});
export type TieredSettings = z.infer<typeof TieredSettings>;

/** The tiered settings' deprecated names, each to the name it has now (read by resolveTieredSettings). */
export const kDeprecatedTieredNames: DeprecatedNames = Object.freeze({ preserveRecentSteps: "keepRecent" });

export interface CompactorConfig extends Partial<TieredSettings> {
  /**
   * keepRecent's former name, read as keepRecent (the same count of tool exchanges); giving
   * both with different values is E_BAD_INPUT.
   * @deprecated Use keepRecent.
   * @default none: keepRecent's applies
   */
  preserveRecentSteps?: number;
  /** Where removed and shortened originals go. @default an in-memory store */
  store?: OffloadStore;
  /** The summariser of stages 3–4 and of memory extraction. @default the extractive one */
  summarizer?: Summarizer;
  /** Token counting (estimates for planning; exact verification near the budget). @default a new TokenCounter (o200k_base) */
  counter?: TokenCounter;
  /** Receives one event per stage and the call's summary. @default none */
  onEvent?: (event: PolicyEvent) => void;
  /** The clock (events, deadlines). @default Date.now */
  now?: () => number;
}

export const kDefaultTieredSettings: Readonly<TieredSettings> = Object.freeze(TieredSettings.parse({}));

/** Validates the settings part of a config and fills the defaults. */
export function resolveTieredSettings(config: CompactorConfig, path = "config"): TieredSettings {
  const { store, summarizer, counter, onEvent, now, ...settings } = config;
  void store;
  void counter;
  for (const [name, fn] of Object.entries({ summarizer, onEvent, now })) {
    if (fn !== undefined && typeof fn !== "function") throw new CtxfoldError("E_BAD_INPUT", "expected a function", { path: `${path}.${name}` });
  }
  const read = readDeprecatedNames(settings, kDeprecatedTieredNames, path);
  const r = TieredSettings.safeParse(read);
  if (!r.success) {
    throw configError(issueAsGiven(r.error.issues[0], settings, kDeprecatedTieredNames), path, {
      options: [...Object.keys(TieredSettings.shape), "store", "summarizer", "counter", "onEvent", "now"],
    });
  }
  const s = r.data;
  if (!(s.targetRatio <= s.softRatio && s.softRatio <= s.hardRatio)) {
    throw new CtxfoldError("E_BAD_INPUT", `need targetRatio ≤ softRatio ≤ hardRatio, got ${s.targetRatio}, ${s.softRatio}, ${s.hardRatio}`, {
      path: `${path}.softRatio`,
    });
  }
  return s;
}
