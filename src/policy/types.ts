import type { Format } from "../adapters/index.js";
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
  /** The input's format; detected when absent. The result is rendered in the same format. */
  format?: Format;
  /** When the caller must have the answer: an epoch-ms deadline, or the milliseconds left. */
  deadline?: number | { remainingMs: number };
}

/** One stage of a compaction, as the telemetry reports it (the tiered policy's compaction_stage). */
export interface StageReport {
  stage: 0 | 1 | 2 | 3 | 4;
  name: "fits" | "tool_args" | "tool_outputs" | "historical_text" | "merge_oldest";
  candidateCount: number;
  compacted: number;
  skipped: Partial<Record<SkipReason, number>>;
  tokensBefore: number;
  tokensAfter: number;
  durationMs: number;
}

export interface CompactResult {
  /** The compacted messages rendered in the input's format. */
  messages: unknown;
  /** The same, canonical. */
  canonical: Message[];
  format: Format;
  /** "ok", or "budget_infeasible" when even the critical messages do not fit (then `infeasible` says by how much). */
  status: "ok" | "budget_infeasible";
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

/** A compaction's result on canonical messages (compactCanonical): `messages` is the canonical list. */
export type CanonicalResult = Omit<CompactResult, "format" | "messages"> & { messages: Message[]; format?: Format };
