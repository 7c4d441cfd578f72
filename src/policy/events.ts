import type { SummarizerFallbackEvent } from "../steps/summarizer.js";
import type { SkipReason, StageReport, Tier } from "./types.js";

/** Telemetry of the tiered compactor (the tiered policy's compaction_stage and its counters). */
export type PolicyEvent =
  | ({ type: "compaction_stage"; tier: Tier } & StageReport)
  | {
      type: "compaction_result";
      tier: Tier;
      mode: "tiered" | "legacy";
      status: "ok" | "budget_infeasible";
      tokensBefore: number;
      tokensAfter: number;
      budget: number;
      epoch: number;
      newEpoch: boolean;
      durationMs: number;
    }
  | { type: "compaction_skipped"; reason: SkipReason; tier: Tier; tokens: number; budget: number }
  | SummarizerFallbackEvent
  | { type: "churn_warning"; compacted: number; limit: number };
