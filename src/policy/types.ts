import type { Format } from "../adapters/index.js";
import type { AnthropicSystem } from "../adapters/anthropic.js";
import type { Message } from "../model/schema.js";

/** The tiered policy's message classes. */
export type MessageClass = "critical" | "tool_trace" | "historical_context" | "background_extraction";

/** The tiered policy's pressure tiers: normal (≤ soft), pressure (soft < usage ≤ hard), critical (> hard). */
export type Tier = "normal" | "pressure" | "critical";

/** The tiered policy's skip reasons. */
export type SkipReason = "cache_hit" | "policy_preserve" | "no_pressure" | "no_gain" | "deadline";

export interface CompactCallOptions {
  /** Token budget of the request (the model's context minus what the caller reserves for the answer). */
  budget: number;
  /**
   * The input's format. The result is rendered in the same format.
   * @default detected from the input (detectFormat); in a session, the format of its earlier calls
   */
  format?: Format;
  /** When the caller must have the answer: an epoch-ms deadline, or the milliseconds left. @default none */
  deadline?: number | { remainingMs: number };
  /**
   * The recall hint for this call, over the compactor's `recallHint` setting (true: the default
   * line; a string: that line; false: none). Within a session it takes effect at the next
   * compaction: calls that only append keep the epoch's prompt as it is.
   * @default the compactor's recallHint setting
   */
  recallHint?: boolean | string;
}

/**
 * The names of a compaction's stages with their numbers: "fits" here (the normal tier, where no
 * stage runs), and each stage of the tiered pipeline's registry, merged in from its definition
 * by stages/index.ts (so a new stage needs no line here).
 */
export interface StageNumbers {
  fits: 0;
}

/** One stage of a compaction, as the telemetry reports it (the tiered policy's compaction_stage). */
export interface StageReport {
  stage: StageNumbers[keyof StageNumbers];
  name: keyof StageNumbers;
  candidateCount: number;
  compacted: number;
  skipped: Partial<Record<SkipReason, number>>;
  tokensBefore: number;
  tokensAfter: number;
  durationMs: number;
}

/**
 * What compact() gives back. `W` is the input's wire form, in which `messages` is rendered: an
 * array of the format's messages (typed as the caller's own message type when the format is
 * named: compact() has a signature per kind of format), or for Anthropic `{ system?, messages }`; `unknown` when the format
 * was detected at run time.
 */
export interface CompactResult<W = unknown> {
  /** The compacted messages rendered in the input's format. */
  messages: W;
  /** The same, canonical. */
  canonical: Message[];
  format: Format;
  /**
   * "ok", or "budget_infeasible" when the critical messages do not fit, or fit with no room left
   * for the summary line whose ref keeps what was removed recoverable (then `infeasible` says
   * which: its `criticalTokens` against the budget; `tokensAfter` is the smallest result's size).
   */
  status: "ok" | "budget_infeasible";
  /** With "budget_infeasible": the critical messages' own exact tokens (with the results their calls need, as kept; without what ctxfold wrote into them), and the budget. */
  infeasible?: { criticalTokens: number; budget: number };
  tier: Tier;
  mode: "tiered" | "legacy";
  budget: number;
  tokensBefore: number;
  tokensAfter: number;
  /** Whether this call started a new epoch (compacted), or only appended to the current one. */
  epoch: number;
  stages: StageReport[];
  /** Refs of everything removed or shortened (each resolves in the offload store). */
  refs: string[];
}

/** The formats whose wire form is an array of messages (all but Anthropic's, which has a system field beside them). */
export type ArrayFormat = Exclude<Format, "anthropic">;

/** Anthropic's wire form with the caller's message type: a messages array, or `{ system?, messages }`. */
export interface AnthropicForm<M> {
  system?: AnthropicSystem;
  messages: M[];
}

/** A compaction's result on canonical messages (compactCanonical): `messages` is the canonical list. */
export type CanonicalResult = Omit<CompactResult, "format" | "messages"> & { messages: Message[]; format?: Format };
