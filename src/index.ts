// The package root: what an application needs to compact its agent's history, recover what was
// removed, and check the result. A curated list, never `export *`; every other part of ctxfold
// has its own entry point (ctxfold/steps, /session, /policy, /adapters, /validate, /store,
// /recall, /tokens, /model, /core, /eval, each its folder's index, and the integrations /ai-sdk,
// /mastra, /langchain and /requests).

// The tiered compactor, the default path.
export { createCompactor, Compactor, CompactorSession, kDefaultTieredSettings, extractiveSummarizer, llmSummarizer } from "./policy/index.js";
export type {
  CompactorConfig,
  TieredSettings,
  CompactCallOptions,
  CompactResult,
  CanonicalResult,
  StageReport,
  Tier,
  MessageClass,
  SkipReason,
  PolicyEvent,
  Summarizer,
} from "./policy/index.js";
// Telemetry of both compaction systems.
export { compactionStats } from "./policy/telemetry.js";
export type { ExtractionOptions, ExtractionPayload } from "./policy/extraction.js";
export type { CtxfoldEvent, CompactionStats } from "./policy/telemetry.js";
// Provider formats and the canonical model.
export { parseMessages, renderMessages, detectFormat, kFormats } from "./adapters/index.js";
export type { Format } from "./adapters/index.js";
// Named for the root so as not to shadow the frameworks' own Message types (ctxfold/model has them as Message, Part).
export type { Message as CanonicalMessage, Part as CanonicalPart } from "./model/schema.js";
// Provider rules.
export { validate, newViolations } from "./validate/index.js";
export type { Issue, ValidationResult } from "./validate/index.js";
// Token counts.
export { TokenCounter } from "./tokens/token-counter.js";
export type { TokenCounterOptions } from "./tokens/token-counter.js";
// Where removed content goes, and how to get it back.
export { createMemoryStore, createFsStore, createPackStore, getMessages } from "./store/index.js";
export type { OffloadStore } from "./store/index.js";
// Errors.
export { CtxfoldError } from "./errors.js";
export type { CtxfoldErrorCode } from "./errors.js";
