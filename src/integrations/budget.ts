/**
 * The budget a call compacts to, in ctxfold's measure (the compactor counter's encoding, o200k_base
 * by default, with the provider's overheads), and the usage feedback that keeps it within the
 * model's window by the provider's own count.
 *
 * Decisions:
 * - `budget` given: that, as it is. It is in ctxfold's measure, whatever the model: no profile,
 *   factor or feedback touches it (a caller who sets it has decided).
 * - Else the model's room: its window (`contextWindow`, else its profile's, tokens/models.ts)
 *   minus `reserveTokens` (the answer's room, default 4096), at most the profile's
 *   `maxInputTokens`; then converted to ctxfold's measure. Before any usage report that is the
 *   profile's factor with its margin (none for an OpenAI model counted in its own encoding; an
 *   unknown model with a `contextWindow` counts as ctxfold's measure unless `modelProfile` says
 *   otherwise). After a report it is the observed ratio of the conversation and model
 *   (tokens/usage.ts, `kUsageFeedback`) with kFeedbackMargin on top: the provider's own count
 *   replaces the estimate, whatever the family.
 * - What a report can raise the budget by is bounded: never past the model's room counted one
 *   model token per token of ctxfold's measure (or the profile's own conversion, where that
 *   says the model's tokens are fewer). A report far below ctxfold's estimate (a provider
 *   reporting 1 token for a full prompt, a report for another request) is implausible: its
 *   ratio is clamped to that floor (usageFloor), and its `onUsage` event says `status:
 *   "clamped", limit: "floor"`. A report above the estimate lowers the budget freely: that
 *   side only leaves room unused.
 * - `modelProfile` overrides fields of the model's profile for the calls made with the options
 *   (or stands for a profile when the id has none); registered profiles (registerModelProfile)
 *   change it for the whole process.
 * - Unknown window and no budget: E_BAD_INPUT saying so — guessing a window would either waste
 *   context or overflow it.
 * - Feedback state: per conversation (its SessionPool entry) and per model id, so a fallback to
 *   another model starts from that model's profile. A report applies to what the conversation's
 *   last call sent (`noteSent`: its model and ctxfold's estimate of its tokens), read in any
 *   provider's usage shape (inputTokensOf). What cannot be read (no usage, NaN, negative,
 *   zero, a report before anything was sent) is ignored with a reason, never thrown: the next
 *   budget then comes from the ratio as it was, else the profile. Every report is an event
 *   (`onUsage`): the ratio before and after, clamped or not, or why it was ignored.
 *   `usageFeedback: false` turns the reading off (budgets from the profile only).
 */
import { badValueError, CtxfoldError } from "../errors.js";
import type { CompactorConfig } from "../policy/index.js";
import { checkModelProfile, kMeasuredFactors, modelProfileOf, type ModelProfile } from "../tokens/models.js";
import { inputTokensOf, kFeedbackMargin, kUsageFeedback, UsageCorrection, type CorrectionStep } from "../tokens/usage.js";
import type { Encoding } from "../tokens/weights-table.js";

export interface IntegrationOptions extends CompactorConfig {
  /**
   * Tokens the compacted prompt may take, in ctxfold's measure (o200k_base by default). Required
   * unless the context window is known.
   * @default the model's room (its context window less reserveTokens, at most its profile's
   * maxInputTokens) converted to ctxfold's measure (see the module comment)
   */
  budget?: number;
  /**
   * The model's context window, in the model's tokens (for a model no profile knows, or to override its profile's).
   * @default the model's profile's
   */
  contextWindow?: number;
  /** Room kept for the answer when the budget comes from the context window. @default 4096 */
  reserveTokens?: number;
  /** Conversations whose sessions are kept (least recently used dropped, with the originals the pool's own store holds for them). @default 1000 */
  maxSessions?: number;
  /**
   * Tokens (ctxfold's measure) of the conversations whose sessions are kept, each counted by its
   * last call's input, which its session holds on to: past it, the least recently used go first
   * (they only lose their epochs). Bounds the sessions' memory where `maxSessions` bounds their
   * number. @default 32000000 (~128 MB of message text)
   */
  maxSessionTokens?: number;
  /**
   * Bytes of removed originals the pool keeps when `store` is not given (its own in-memory
   * store, pool-store.ts): past it, whole conversations' originals go, least recently compacted
   * first. Ignored with a `store` of the caller's (which is the caller's to bound and read).
   * @default 67108864 (64 MiB)
   */
  maxStoreBytes?: number;
  /**
   * Fields that override the model's profile for these calls, or a profile for a model none matches (see ctxfold/tokens' ModelProfile).
   * @default none: the model's own profile
   */
  modelProfile?: Partial<ModelProfile>;
  /** Read the input tokens the provider reports and budget by them (see the module comment). @default true */
  usageFeedback?: boolean;
  /** Called with every usage report read: what it did to the conversation's ratio, or why it was ignored. @default none */
  onUsage?: (event: UsageEvent) => void;
  /**
   * What a call does when even the messages that must stay exceed the budget (the compactor's
   * status "budget_infeasible"): "throw" a CtxfoldError E_OVER_BUDGET saying by how much, or
   * "return" the over-budget prompt as the compactor left it (the provider then answers as it
   * would have; `onEvent` and, where there is one, `onCompact` report the status).
   * @default "throw"
   */
  onOverBudget?: "throw" | "return";
}

/** What refuseOverBudget reads of a compaction. */
export interface BudgetOutcome {
  status: "ok" | "budget_infeasible";
  budget: number;
  tokensAfter: number;
  /** The tokens of what must stay, when known. */
  criticalTokens?: number;
}

/**
 * E_OVER_BUDGET at `path` when a compaction did not reach its budget, unless the options say
 * to send it anyway (`onOverBudget: "return"`): the one place every integration refuses.
 */
export function refuseOverBudget(options: IntegrationOptions, outcome: BudgetOutcome, path: string): void {
  if (outcome.status !== "budget_infeasible" || options.onOverBudget === "return") return;
  const { budget, tokensAfter, criticalTokens } = outcome;
  const must =
    criticalTokens === undefined
      ? ""
      : `, of which ${criticalTokens} must stay (system messages, the latest user message, unanswered tool calls)${criticalTokens <= budget ? ", which fit, but not with what ctxfold keeps of the rest (the summary whose ref names what was removed)" : ""}`;
  throw new CtxfoldError(
    "E_OVER_BUDGET",
    `the prompt cannot be brought within its budget of ${budget} tokens: it takes ${tokensAfter} after compaction${must}; raise the budget (or the context window), shorten what must stay, or pass onOverBudget: "return" to send it anyway`,
    { path },
  );
}

/** What one usage report did (`onUsage`): the correction's step plus where it applied. */
export type UsageEvent = CorrectionStep & {
  /** The conversation's key in its pool. */
  conversation: string;
  /** The model the reported call went to (undefined: unnamed). */
  model: string | undefined;
  /** The input tokens read from the report (inputTokensOf), undefined when it held none. */
  reported: unknown;
  /** ctxfold's estimate of what that call sent (undefined: nothing was noted). */
  estimated: number | undefined;
};

const kDefaultReserve = 4096;

/** The profile a call uses: the model's, with `options.modelProfile` over it (checked). */
function profileFor(options: IntegrationOptions, modelId: string | undefined): Partial<ModelProfile> | undefined {
  const base = modelProfileOf(modelId);
  const over = options.modelProfile;
  if (over === undefined) return base;
  checkModelProfile(over, "modelProfile", true);
  return { ...base, ...over };
}

/** The tokens of the model per token of ctxfold's measure, with the profile's margin (see the module comment). */
function conversion(profile: Partial<ModelProfile> | undefined, measure: Encoding): number {
  if (!profile || (profile.encoding !== undefined && profile.encoding === measure)) return 1;
  const factor = profile.factor ?? 1;
  const margin = profile.margin ?? 0;
  // Factors are per o200k_base token: a cl100k_base counter's tokens are that many o200k ones.
  const per = measure === "o200k_base" ? 1 : kMeasuredFactors.cl100k_base.factor;
  return (factor * (1 + margin)) / per;
}

/**
 * The budget a call compacts to (see the module comment), `usageRatio` being the observed
 * ratio of the conversation and model (SessionPool.usageRatio) when there is one.
 * `reserveFrom` names where `options.reserveTokens` came from when the caller took it from a
 * request (a body's `max_tokens`): an answer's room that leaves none for the messages is then
 * reported there, against the model's window.
 */
export function budgetOf(options: IntegrationOptions, modelId?: string, usageRatio?: number, reserveFrom?: string): number {
  const refusal = options.onOverBudget;
  if (refusal !== undefined && refusal !== "throw" && refusal !== "return") throw badValueError("onOverBudget", '"throw" or "return"', refusal);
  if (options.budget !== undefined) return checkTokens(options.budget, "budget", 1);
  const profile = profileFor(options, modelId);
  const window = options.contextWindow === undefined ? profile?.contextWindow : checkTokens(options.contextWindow, "contextWindow", 1);
  if (window === undefined) {
    throw new CtxfoldError(
      "E_BAD_INPUT",
      `the context size of model ${JSON.stringify(modelId ?? "(unnamed)")} is unknown: pass budget (tokens the prompt may take) or contextWindow`,
      { path: "budget" },
    );
  }
  const reserve = options.reserveTokens === undefined ? kDefaultReserve : checkTokens(options.reserveTokens, "reserveTokens", 0);
  let room = window - reserve;
  if (room <= 0 && reserveFrom !== undefined) {
    throw new CtxfoldError(
      "E_BAD_INPUT",
      `${reserve} exceeds the context window of model ${JSON.stringify(modelId ?? "(unnamed)")} (${window} tokens): no room is left for the messages`,
      { path: reserveFrom },
    );
  }
  if (room <= 0) throw new CtxfoldError("E_BAD_INPUT", `contextWindow ${window} leaves no room after reserveTokens ${reserve}`, { path: "reserveTokens" });
  if (profile?.maxInputTokens !== undefined) room = Math.min(room, profile.maxInputTokens);
  const profiled = conversion(profile, options.counter?.encoding ?? "o200k_base");
  // A ratio below the window floor (usageFloor) never reaches here through recordUsage; the cap holds whatever the ratio.
  const per = usageRatio !== undefined && options.usageFeedback !== false ? Math.max(usageRatio * (1 + kFeedbackMargin), Math.min(1, profiled)) : profiled;
  return Math.max(1, Math.floor(room / per));
}

/**
 * The lowest usage ratio a report may set for `modelId` (see the module comment): the one whose
 * budget is the model's room counted one model token per token of ctxfold's measure, or the
 * profile's own conversion where that says the model's tokens are fewer.
 */
export function usageFloor(options: IntegrationOptions, modelId: string | undefined): number {
  return Math.min(1, conversion(profileFor(options, modelId), options.counter?.encoding ?? "o200k_base")) / (1 + kFeedbackMargin);
}

/** A token count option (an integer ≥ `min`), or E_BAD_INPUT naming it and showing what it got. */
function checkTokens(value: unknown, name: string, min: 0 | 1): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw badValueError(name, min === 1 ? "a positive integer" : "a non-negative integer", value);
  return value;
}

/** What a conversation's last call sent: its model, ctxfold's estimate of its tokens, and a tag the caller matches reports with. */
interface Sent {
  model: string | undefined;
  estimate: number;
  tag?: unknown;
}

/** A conversation's usage feedback: a correction per model, and what its last call sent (see the module comment). */
export class UsageFeedback {
  readonly #byModel = new Map<string, UsageCorrection>();
  #sent: Sent | undefined;

  /** The observed ratio for `modelId`, undefined before its first report. */
  ratio(modelId: string | undefined): number | undefined {
    return this.#byModel.get(modelId ?? "")?.ratio;
  }

  /** Notes what a call sent, the call a later report applies to. */
  noteSent(modelId: string | undefined, estimate: number, tag?: unknown): void {
    this.#sent = { model: modelId, estimate, tag };
  }

  /** The tag of the last call noted. */
  get sentTag(): unknown {
    return this.#sent?.tag;
  }

  /**
   * Folds a usage report for the last call sent into its model's ratio (`modelId` when the
   * caller knows the model better), at least the model's window floor (usageFloor of
   * `options`). Never throws: see UsageCorrection.observe.
   */
  record(conversation: string, usage: unknown, modelId?: string, options: IntegrationOptions = {}): UsageEvent {
    const sent = this.#sent;
    const model = modelId ?? sent?.model;
    let c = this.#byModel.get(model ?? "");
    if (!c) this.#byModel.set(model ?? "", (c = new UsageCorrection(kUsageFeedback)));
    const reported = inputTokensOf(usage);
    let floor: number | undefined;
    try {
      floor = usageFloor(options, model);
    } catch {
      // A bad modelProfile is reported by the budget it breaks, not by a usage report (which never throws).
    }
    const step = c.observe(reported, sent?.estimate, floor);
    // A report is for one call: a second one for it (a retry's, a stream read twice) is not counted again.
    if (step.status !== "ignored") this.#sent = undefined;
    return { ...step, conversation, model, reported, estimated: sent?.estimate };
  }
}
