/**
 * ctxfold's telemetry, one union for its two compaction systems: the tiered policy's events
 * (`onEvent` of createCompactor: stages, results, skips, summariser fallbacks, churn) and block
 * compaction's session events (an EventSink, what SessionRecorder writes: compactions started
 * and ended, stale blocks, unreadable overlays), and one aggregation of either.
 */
import type { PolicyEvent } from "./events.js";
import type { SkipReason, StageReport, Tier } from "./types.js";
import type { SessionEvent } from "../block/events.js";

export type { PolicyEvent, SessionEvent };

/** Any event ctxfold emits; `type` tells which (snake_case names, stable across versions). */
export type CtxfoldEvent = PolicyEvent | SessionEvent;

/** Events summed (Compactor.stats(), or compactionStats over recorded events). */
export interface CompactionStats {
  /** Compaction calls: compact() calls (session appends included), and block compactions ended. */
  calls: number;
  /** Calls that compacted (ran the stages, a new epoch in a session; a block compaction). */
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
  /** Block compaction: blocks skipped because they no longer match their loop, and block files that could not be read. */
  staleBlocks: number;
  corruptOverlays: number;
}

export const newCompactionStats = (): CompactionStats => ({
  calls: 0,
  compactions: 0,
  tiers: { normal: 0, pressure: 0, critical: 0 },
  infeasible: 0,
  stages: {},
  skipped: {},
  churnWarnings: 0,
  summarizerFallbacks: 0,
  tokensIn: 0,
  tokensOut: 0,
  staleBlocks: 0,
  corruptOverlays: 0,
});

/** `events` summed: e.g. the events a SessionRecorder wrote (readSessionEvents), or those an onEvent collected. */
export function compactionStats(events: Iterable<CtxfoldEvent>): CompactionStats {
  const st = newCompactionStats();
  for (const e of events) addEvent(st, e);
  return st;
}

/** Adds one event to `st`. */
export function addEvent(st: CompactionStats, e: CtxfoldEvent): void {
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
    case "compaction_started":
      break;
    case "compaction_ended":
      st.calls++;
      st.compactions++;
      st.tokensIn += e.tokensBefore;
      st.tokensOut += e.tokensAfter;
      break;
    case "compaction_block_stale":
      st.staleBlocks++;
      break;
    case "session_overlay_corrupt":
      st.corruptOverlays++;
      break;
  }
}
