/**
 * Block compaction's ContextTracker: a running token estimate per loop and per session, corrected by
 * the prompt tokens the provider reports, and the trigger that says when to compact.
 *
 * Decisions:
 * - A loop counts as the token measure's estimate of its messages (tokens/measure.ts, the one
 *   measure ctxfold counts with: each message's texts plus its role and the provider's fixed
 *   overheads from `kMessageOverhead`, rounded up per message, memoised per message object so
 *   re-setting a loop costs only the messages not measured before). The per-request reply
 *   primer is not added: `sessionTokens()` is the plain sum over loops, and the correction
 *   factor absorbs such constants.
 * - Correction: `recordUsage` compares the provider's reported prompt tokens with the estimate
 *   of what was sent (`estimatedTokens`, default the current session estimate), through the
 *   project's one usage correction (tokens/usage.ts) set up as a moving average: the ratio is
 *   clamped to [0.5, 2] (an outlier, such as a report for a different request, cannot wreck
 *   the estimate) and folded into the factor with weight 0.5 either way, starting at 1: the
 *   factor follows a steady bias within a few calls without jumping on one report. A report
 *   against an estimate of 0 carries no ratio and leaves the factor alone.
 * - `usedTokens()` = round(sessionTokens × factor); `headroom()` = compactAtPct × max − used,
 *   negative when over; `shouldCompact()` is `shouldCompactSession(usedTokens(), max, config)`.
 * - Numbers are validated (finite, non-negative; maxContextTokens positive) with E_BAD_INPUT
 *   naming the field.
 */
import { configError, CtxfoldError } from "../errors.js";
import type { Message } from "../model/schema.js";
import { tokenMeasure } from "../tokens/measure.js";
import { TokenCounter } from "../tokens/token-counter.js";
import { UsageCorrection } from "../tokens/usage.js";
import { CompactionSettings, shouldCompactSession } from "./config.js";
import type { LoopId } from "./store.js";

/** Weight of a new observation in the correction factor's moving average. */
export const kUsageSmoothing = 0.5;
/** Bounds of the correction ratio (and so of the factor). */
export const kCorrectionBounds: readonly [min: number, max: number] = Object.freeze([0.5, 2]) as readonly [number, number];

/** The settings that decide when a tracked context is due for compaction. */
export type TriggerSettings = Pick<CompactionSettings, "compactAtPct" | "compactBudgetThresholdPct">;
const TriggerSchema = CompactionSettings.pick({ compactAtPct: true, compactBudgetThresholdPct: true });

export interface ContextTrackerOptions {
  /** The model's context window, in tokens. */
  maxContextTokens: number;
  /** @default new TokenCounter() */
  counter?: TokenCounter;
  /** When compaction fires. @default block compaction's 0.90 and 0.05 */
  config?: Partial<TriggerSettings>;
}

export interface UsageReport {
  /** Prompt (input) tokens the provider reported for the last call. */
  promptTokens: number;
  /** The tracker's estimate of what that call sent. @default sessionTokens() */
  estimatedTokens?: number;
}

function checkNumber(value: unknown, field: string, positive = false): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || (positive && value === 0)) {
    throw new CtxfoldError(
      "E_BAD_INPUT",
      `expected a ${positive ? "positive" : "non-negative"} finite number, got ${typeof value === "number" ? String(value) : typeof value}`,
      { path: field },
    );
  }
  return value;
}

/**
 * Estimated tokens of messages: the token measure's (tokens/measure.ts) sum over them, without
 * a request's reply primer, so loop estimates add up as a tracker's do (see the module note).
 */
export function estimateMessages(messages: readonly Message[], counter: TokenCounter): number {
  return tokenMeasure(counter).sum(messages);
}

function checkLoopId(loopId: unknown): LoopId {
  if (typeof loopId === "string" || (typeof loopId === "number" && Number.isInteger(loopId))) return loopId;
  throw new CtxfoldError("E_BAD_INPUT", "expected a string or an integer", { path: "loopId" });
}

export class ContextTracker {
  readonly maxContextTokens: number;
  readonly counter: TokenCounter;
  readonly config: Readonly<TriggerSettings>;
  readonly #loops = new Map<LoopId, number>();
  #total = 0;
  readonly #correction = new UsageCorrection({ initial: 1, bounds: kCorrectionBounds, rise: kUsageSmoothing, fall: kUsageSmoothing, zeroReports: "counted" });

  constructor(options: ContextTrackerOptions) {
    if (typeof options !== "object" || options === null) throw new CtxfoldError("E_BAD_INPUT", "expected an options object", { path: "options" });
    this.maxContextTokens = checkNumber(options.maxContextTokens, "maxContextTokens", true);
    if (options.counter !== undefined && typeof (options.counter as Partial<TokenCounter> | null)?.estimateMany !== "function")
      throw new CtxfoldError("E_BAD_INPUT", "expected a TokenCounter", { path: "counter" });
    this.counter = options.counter ?? new TokenCounter();
    const r = TriggerSchema.safeParse(options.config ?? {});
    if (!r.success) throw configError(r.error.issues[0], "config");
    this.config = Object.freeze(r.data);
  }

  /** Estimated tokens of messages as this tracker counts them (see the module note). */
  estimateMessages(messages: readonly Message[]): number {
    return estimateMessages(messages, this.counter);
  }

  /** Replaces a loop's running estimate with that of `messages` (e.g. as loaded after compaction). */
  setLoop(loopId: LoopId, messages: readonly Message[]): void {
    const id = checkLoopId(loopId);
    const n = this.estimateMessages(messages);
    this.#total += n - (this.#loops.get(id) ?? 0);
    this.#loops.set(id, n);
  }

  /** Adds messages appended to a loop (the loop is created when new). */
  addMessages(loopId: LoopId, messages: readonly Message[]): void {
    const id = checkLoopId(loopId);
    const n = this.estimateMessages(messages);
    this.#total += n;
    this.#loops.set(id, (this.#loops.get(id) ?? 0) + n);
  }

  /** Forgets a loop (no longer in the context). */
  deleteLoop(loopId: LoopId): boolean {
    const id = checkLoopId(loopId);
    const n = this.#loops.get(id);
    if (n === undefined) return false;
    this.#total -= n;
    this.#loops.delete(id);
    return true;
  }

  /** The loop's estimate; 0 for a loop the tracker does not know. */
  loopTokens(loopId: LoopId): number {
    return this.#loops.get(checkLoopId(loopId)) ?? 0;
  }

  /** Loops tracked, in the order they were first set. */
  loopIds(): LoopId[] {
    return [...this.#loops.keys()];
  }

  /** Sum of the loop estimates (uncorrected). */
  sessionTokens(): number {
    return this.#total;
  }

  /** The current correction factor (1 until a usage report). */
  get correction(): number {
    return this.#correction.ratio!;
  }

  /** Folds a provider usage report into the correction factor (see the module note). */
  recordUsage(usage: UsageReport): void {
    if (typeof usage !== "object" || usage === null) throw new CtxfoldError("E_BAD_INPUT", "expected { promptTokens, estimatedTokens? }", { path: "usage" });
    const reported = checkNumber(usage.promptTokens, "promptTokens");
    const estimated = usage.estimatedTokens === undefined ? this.#total : checkNumber(usage.estimatedTokens, "estimatedTokens");
    // Both numbers are checked: the correction ignores only an estimate of 0 (no ratio), as it always did.
    this.#correction.observe(reported, estimated);
  }

  /** The session estimate corrected toward the provider's count. */
  usedTokens(): number {
    return Math.round(this.#total * this.#correction.ratio!);
  }

  /** Tokens left before the compactAtPct limit; negative when over it. */
  headroom(): number {
    return this.config.compactAtPct * this.maxContextTokens - this.usedTokens();
  }

  /** Block compaction's trigger on usedTokens(): headroom below compactBudgetThresholdPct of the window. */
  shouldCompact(): boolean {
    return shouldCompactSession(this.usedTokens(), this.maxContextTokens, this.config);
  }
}
