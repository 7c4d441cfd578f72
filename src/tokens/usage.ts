/**
 * Usage correction: the ratio between the input tokens a provider reports for a request and
 * ctxfold's estimate of what that request sent, kept up to date report by report. One
 * mechanism, two users: the ContextTracker (session/tracker.ts: a moving average from 1, its
 * historical behaviour) and the integrations' usage feedback (integrations/common.ts: budgets
 * from the provider's own count).
 *
 * Decisions:
 * - A report gives an observed ratio, reported / estimated, clamped to `bounds` (a report for
 *   another request, or a provider's bug, cannot wreck the ratio; the step says it was clamped).
 *   A caller may raise the lower bound per report (`floor`): the integrations do, so that a
 *   report far below the estimate (1 token for a full prompt) cannot lift the budget past the
 *   model's window (budget.ts).
 * - `initial` undefined: there is no ratio until the first report, which is then taken as it is
 *   (the integrations' feedback: after one call the budget is the provider's own count, not a
 *   moving average that starts at 1 and takes several calls to get there).
 * - A report above the ratio moves it by `rise`, one below by `fall`, as a weighted step toward
 *   the observation. The feedback rises at once (rise 1) and falls slowly (fall 0.1): a ratio
 *   too low overflows the window, one too high only leaves room unused, so one low report (a
 *   prompt that happened to tokenise well) does not spend the room the next prompt needs.
 * - What cannot be a report is ignored with a reason, never thrown: no usage at all, a value
 *   that is not a number, not finite, negative or zero (providers report 0 when they do not
 *   count), and a report with no estimate to compare (nothing was sent, or an empty prompt).
 *   The ratio is then what it was (and without one, the caller falls back to its profile).
 * - `inputTokensOf` reads the input-token count of the usage shapes the providers and
 *   frameworks report (see there); the total always includes cached input, since cached
 *   tokens take context too.
 */

/** How a UsageCorrection moves (see the module comment). */
export interface CorrectionSettings {
  /** The ratio before any report. @default none: no ratio until the first report, which is taken as it is */
  initial?: number;
  /** Bounds of the ratio: an observation outside is clamped to them. */
  bounds: readonly [min: number, max: number];
  /** Weight of an observation above the ratio (1: at once). */
  rise: number;
  /** Weight of an observation below the ratio. */
  fall: number;
  /** A report of 0 tokens: ignored (reason "zero"), or counted as an observed ratio of 0 (then clamped). @default "ignored" */
  zeroReports?: "ignored" | "counted";
}

/** The integrations' usage feedback: none until the first report, then up at once, down slowly, within [0.25, 4]. */
export const kUsageFeedback: Readonly<CorrectionSettings> = Object.freeze({
  bounds: Object.freeze([0.25, 4]) as readonly [number, number],
  rise: 1,
  fall: 0.1,
});

/**
 * Room kept on top of the observed ratio when a budget is derived from it: the estimate the
 * ratio divides is ctxfold's estimator's (within ~1 % of the exact count on whole prompts),
 * and the next prompt's mix of text differs a little from the last one's.
 */
export const kFeedbackMargin = 0.03;

/** Why a report changed nothing. */
export type UsageIgnoredReason =
  /** No usage object, or none of the fields the providers report input tokens in. */
  | "no_usage"
  /** The count is not a number. */
  | "not_a_number"
  /** NaN or ±Infinity. */
  | "not_finite"
  | "negative"
  /** 0 input tokens: what providers report when they do not count. */
  | "zero"
  /** Nothing to compare with: no estimate of what the request sent (or an estimate of 0). */
  | "no_estimate";

/** What one report did to the ratio. */
export type CorrectionStep =
  | {
      /** "clamped": the observation was outside the bounds and counted as the nearest bound. */
      status: "applied" | "clamped";
      /**
       * "floor" when the caller's `floor` held rather than the settings' `bounds` (the
       * integrations' window floor: a report far below ctxfold's estimate cannot lift the budget
       * past the model's window, see budget.ts); absent otherwise.
       */
      limit?: "floor";
      /** reported / estimated, before clamping. */
      observed: number;
      /** The ratio before (undefined: there was none) and after. */
      before: number | undefined;
      after: number;
    }
  | { status: "ignored"; reason: UsageIgnoredReason; before: number | undefined; after: number | undefined };

function checkSettings(s: CorrectionSettings): CorrectionSettings {
  const [lo, hi] = s.bounds;
  const ok = (x: number) => typeof x === "number" && Number.isFinite(x);
  if (!ok(lo) || !ok(hi) || lo <= 0 || hi < lo) throw new RangeError(`correction bounds must be 0 < min ≤ max, got [${lo}, ${hi}]`);
  if (!ok(s.rise) || !ok(s.fall) || s.rise <= 0 || s.rise > 1 || s.fall <= 0 || s.fall > 1) throw new RangeError("correction weights must be in (0, 1]");
  if (s.initial !== undefined && (!ok(s.initial) || s.initial < lo || s.initial > hi)) throw new RangeError("the initial ratio must lie within the bounds");
  return s;
}

/** A running ratio of reported to estimated tokens (see the module comment). */
export class UsageCorrection {
  readonly settings: Readonly<CorrectionSettings>;
  #ratio: number | undefined;

  constructor(settings: CorrectionSettings = kUsageFeedback) {
    this.settings = checkSettings(settings);
    this.#ratio = settings.initial;
  }

  /** The current ratio; undefined before the first report when there is no initial one. */
  get ratio(): number | undefined {
    return this.#ratio;
  }

  /**
   * Folds one report in: `reported` input tokens against `estimated`, ctxfold's estimate of what
   * the request sent. `floor`, when above the lower bound, raises it for this report (the step
   * then says `limit: "floor"`). Never throws.
   */
  observe(reported: unknown, estimated: unknown, floor?: number): CorrectionStep {
    const before = this.#ratio;
    const ignored = (reason: UsageIgnoredReason): CorrectionStep => ({ status: "ignored", reason, before, after: before });
    if (reported === undefined || reported === null) return ignored("no_usage");
    if (typeof reported !== "number") return ignored("not_a_number");
    if (!Number.isFinite(reported)) return ignored("not_finite");
    if (reported < 0) return ignored("negative");
    if (reported === 0 && this.settings.zeroReports !== "counted") return ignored("zero");
    if (typeof estimated !== "number" || !Number.isFinite(estimated) || estimated <= 0) return ignored("no_estimate");
    const observed = reported / estimated;
    const [bound, hi] = this.settings.bounds;
    const floored = floor !== undefined && Number.isFinite(floor) && floor > bound;
    const lo = floored ? Math.min(floor, hi) : bound;
    const ratio = Math.min(hi, Math.max(lo, observed));
    let after: number;
    if (before === undefined) after = ratio;
    else after = before + (ratio > before ? this.settings.rise : this.settings.fall) * (ratio - before);
    this.#ratio = after;
    if (ratio === observed) return { status: "applied", observed, before, after };
    if (floored && observed < lo) return { status: "clamped", limit: "floor", observed, before, after };
    return { status: "clamped", observed, before, after };
  }
}

/** A value at `key` of an object, when it is one. */
function field(o: unknown, key: string): unknown {
  return typeof o === "object" && o !== null ? (o as Record<string, unknown>)[key] : undefined;
}

/**
 * The input tokens of a usage report, in whatever shape it came: a number; the AI SDK's usage
 * (`inputTokens`, a number in LanguageModelUsage and the V2 spec, `{ total }` in the V3 spec:
 * cache reads and writes included); OpenAI Chat Completions' `prompt_tokens`; OpenAI Responses'
 * `input_tokens` (cached tokens included); Anthropic's `input_tokens` plus
 * `cache_creation_input_tokens` and `cache_read_input_tokens` (which its `input_tokens` does
 * not include); LangChain's `usage_metadata.input_tokens` (total); Gemini's
 * `promptTokenCount`. A whole response or message is read through its `usage`, `usageMetadata`
 * or `usage_metadata`. Undefined when none of these is there; a field that is there but not a
 * number comes back as it is (UsageCorrection says why it ignores it).
 */
export function inputTokensOf(usage: unknown, depth = 0): unknown {
  if (typeof usage === "number") return usage;
  if (typeof usage !== "object" || usage === null || depth > 2) return undefined;
  const prompt = field(usage, "prompt_tokens");
  if (prompt !== undefined && prompt !== null) return prompt;
  const ai = field(usage, "inputTokens");
  if (ai !== undefined && ai !== null) return typeof ai === "object" ? field(ai, "total") : ai;
  const input = field(usage, "input_tokens");
  if (input !== undefined && input !== null) {
    if (typeof input !== "number") return input;
    let total = input;
    for (const k of ["cache_creation_input_tokens", "cache_read_input_tokens"]) {
      const c = field(usage, k);
      if (c === undefined || c === null) continue;
      if (typeof c !== "number") return c;
      total += c;
    }
    return total;
  }
  const gemini = field(usage, "promptTokenCount");
  if (gemini !== undefined && gemini !== null) return gemini;
  for (const k of ["usage", "usageMetadata", "usage_metadata"]) {
    const inner = field(usage, k);
    if (inner !== undefined && inner !== null) return inputTokensOf(inner, depth + 1);
  }
  return undefined;
}
