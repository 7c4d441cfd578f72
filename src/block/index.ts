// The public names of block compaction (`ctxfold/block`, also reachable as `ctxfold/session`, its earlier name): one block per source file; add lines, never `export *`.
export { CompactionSettings, FixedCount, TokenBudget, kDefaultCompactionSettings, resolveSessionConfig, shouldCompactSession } from "./config.js";
export type { SessionCompactionConfig, SessionCompactionInput, CompactionScope, CompactionInfo, CompactionStrategy } from "./config.js";
export { DefaultBlockCompaction, blockMatches, blockSourceHash, loadLoop, joinPieces, turnMapOf, isKeptVerbatim } from "./block.js";
export type { BlockCompactionStrategy, DefaultBlockCompactionOptions } from "./block.js";
export { DefaultCompaction, compactMessages, targetTokens } from "./legacy.js";
export type { CompactionLevel, CompactMessagesOptions, CompactMessagesResult } from "./legacy.js";
export { truncateToolOutput, truncateToolOutputs, summarizeTurn, summarizeTurns, summaryMessage, mergeAdjacent, kTurnSummaryKind } from "./turns.js";
export { activeChain, buildContextFromSession, compactContext, compactSessionLoops, estimateMessages, resolveScope } from "./orchestration.js";
export type { OrchestrationOptions, CompactionTarget, CompactContextResult } from "./orchestration.js";
export { assignTurns, sessionFromMessages } from "./loops.js";
export {
  SessionEvent,
  CompactionStartedEvent,
  CompactionEndedEvent,
  CompactionBlockStaleEvent,
  SessionOverlayCorruptEvent,
  compactionStarted,
  compactionEnded,
  compactionBlockStale,
  sessionOverlayCorrupt,
} from "./events.js";
export type { SessionEventType, EventSink, EventTime } from "./events.js";
export { SessionRecorder, readSessionEvents } from "./recorder.js";
export { MemorySessionStore } from "./store.js";
export type { SessionStore, LoopId } from "./store.js";
export { FsSessionStore, sessionDirName } from "./fs-session-store.js";
export type { FsSessionStoreOptions, SessionFsOps } from "./fs-session-store.js";
export { ContextTracker, kUsageSmoothing, kCorrectionBounds } from "./tracker.js";
export type { ContextTrackerOptions, TriggerSettings, UsageReport } from "./tracker.js";
export { TurnMap } from "./turn-map.js";
