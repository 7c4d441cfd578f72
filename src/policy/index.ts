// The public names of the tiered policy: one block per source file; add lines, never `export *`.
export { Compactor, createCompactor } from "./compactor.js";
export { CompactorSession } from "./session.js";
export { TieredSettings, kDefaultTieredSettings, resolveTieredSettings, RecallHintSetting } from "./config.js";
export { kDefaultRecallHint } from "./recall-hint.js";
export type { CompactorConfig } from "./config.js";
export { classify, isTodoReminder } from "./classify.js";
export type { PolicyEvent } from "./events.js";
export type { Summarizer, SummarizerFallbackEvent } from "../steps/summarizer.js";
export type {
  AnthropicForm,
  ArrayFormat,
  CanonicalResult,
  CompactCallOptions,
  CompactResult,
  MessageClass,
  SkipReason,
  StageNumbers,
  StageReport,
  Tier,
} from "./types.js";
export { extractiveSummarizer, summarizeExtractive, kExtractive } from "../summarize/extractive.js";
export type { ExtractiveSummarizerOptions, SyncSummarizer } from "../summarize/extractive.js";
export { llmSummarizer, kLlmSummarizerDefaults } from "../summarize/llm-summarizer.js";
export type { LlmSummarizerOptions, LlmSummarizerEvent, AsyncSummarizer } from "../summarize/llm-summarizer.js";
export { compactionStats, addEvent, newCompactionStats } from "./telemetry.js";
export type { CtxfoldEvent, CompactionStats } from "./telemetry.js";
// StageReport's stage names are declared by the stages' registry: its declarations come along with it.
import "./stages/index.js";
