import type { PolicyEvent } from "./events.js";
import type { SkipReason, StageReport, Tier } from "./types.js";

/** The tiered policy's run aggregates (Compactor.stats()): its events, summed. */
export interface CompactorStats {
  /** compact() calls, session appends included. */
  calls: number;
  /** Calls that ran the stages (a new epoch in a session). */
  compactions: number;
  tiers: Record<Tier, number>;
  infeasible: number;
  /** Per stage: how often it ran, parts compacted, tokens saved, milliseconds. */
  stages: Partial<Record<StageReport["name"], { runs: number; compacted: number; saved: number; ms: number }>>;
  /** Skip reasons, summed over calls and stages. */
  skipped: Partial<Record<SkipReason, number>>;
  churnWarnings: number;
  summarizerFallbacks: number;
  tokensIn: number;
  tokensOut: number;
}

export const newStats = (): CompactorStats => ({
  calls: 0, compactions: 0, tiers: { normal: 0, pressure: 0, critical: 0 }, infeasible: 0,
  stages: {}, skipped: {}, churnWarnings: 0, summarizerFallbacks: 0, tokensIn: 0, tokensOut: 0,
});

/** Adds one event to the aggregates. */
export function aggregate(st: CompactorStats, e: PolicyEvent): void {
  switch (e.type) {
    case "compaction_skipped":
      st.calls++;
      st.tiers[e.tier]++;
      st.skipped[e.reason] = (st.skipped[e.reason] ?? 0) + 1;
      st.tokensIn += e.tokens;
      st.tokensOut += e.tokens;
      break;
    case "compaction_result":
      st.calls++;
      st.compactions++;
      st.tiers[e.tier]++;
      if (e.status !== "ok") st.infeasible++;
      st.tokensIn += e.tokensBefore;
      st.tokensOut += e.tokensAfter;
      break;
    case "compaction_stage": {
      const s = (st.stages[e.name] ??= { runs: 0, compacted: 0, saved: 0, ms: 0 });
      s.runs++;
      s.compacted += e.compacted;
      s.saved += e.tokensBefore - e.tokensAfter;
      s.ms += e.durationMs;
      for (const [reason, n] of Object.entries(e.skipped)) st.skipped[reason as SkipReason] = (st.skipped[reason as SkipReason] ?? 0) + (n ?? 0);
      break;
    }
    case "churn_warning":
      st.churnWarnings++;
      break;
    case "summarizer_fallback":
      st.summarizerFallbacks++;
      break;
  }
}
