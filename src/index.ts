// The public surface of ctxfold: a curated list, never `export *`.
export { CtxfoldError } from "./errors.js";
export type { CtxfoldErrorCode } from "./errors.js";
export { hashText, hashTexts, hashBytes, hashToHex } from "./core/hash.js";
export type { HashOptions } from "./core/hash.js";
export { TurnMap } from "./session/turn-map.js";
export { groupSteps, kToolCategories } from "./steps/group-steps.js";
export type { GroupStepsOptions, StepRun, ToolCategory } from "./steps/group-steps.js";
export { getCore, CoreInstance } from "./core/core-instance.js";
export type { CoreExports, StringBatch } from "./core/core-instance.js";
export { getCoreModule, setCoreModule } from "./core/load-core.js";
export { createDebugCore } from "./core/debug-core.js";
export type { Backend } from "./core/backend.js";
export { TokenCounter, kMessageOverhead } from "./tokens/token-counter.js";
export type { CountableMessage, Encoding, Provider, TokenCounterOptions } from "./tokens/token-counter.js";
export { kEncodings } from "./tokens/weights-table.js";
export { generateText, createRng } from "./gen/text.js";
export type { Rng, TextKind } from "./gen/text.js";
export {
  Message, Part, TextPart, ToolCallPart, ToolResultPart, ReasoningPart, MediaPart, OpaquePart, ResultContentPart, Role, TurnId, Meta,
  Step, Turn, TurnRange, CompactedSection, CompactionBlock, Loop, Session,
} from "./model/schema.js";
export type { MessageInput } from "./model/schema.js";
export { messageTexts } from "./model/texts.js";
export {
  detectFormat, parseMessages, renderMessages, kAdapters, kFormats, kRawArgs,
  openaiChatAdapter, openaiResponsesAdapter, anthropicAdapter, aiSdkAdapter, langchainAdapter,
} from "./adapters/index.js";
export type { Adapter, Format, ParseOptions, RenderOptions } from "./adapters/index.js";
export { validate, newViolations, kRules, kIssueCodes, severityOf } from "./validate/index.js";
export type { Issue, IssueCode, Rule, Severity, ValidateOptions, ValidationResult } from "./validate/index.js";
export { generateRun, generateRuns } from "./gen/run.js";
export type { GenerateRunOptions, GeneratedRun } from "./gen/run.js";
export { MemoryOffloadStore, FsOffloadStore, createMemoryStore, createFsStore, kDefaultOffloadPrefix } from "./store/index.js";
export type { OffloadStore, OffloadHint, OffloadStoreOptions, FsOps, FsStoreOptions } from "./store/index.js";
export {
  StepReducer, StepCompactor, CompactStep, compactStepMessages, buildReactPrompt, thoughtStepsFromMessages, formatFullStep,
  formatForPrompt, shouldCompact, compactForSpawn, extractSteps, kPresets, presetConfig, autoTuneCompaction,
  kDefaultCompactionConfig as kDefaultStepCompactionConfig, kBuiltinRules, kDefaultThresholds, redactSecrets, containsSecret, kSecretPatterns,
  detectContentType, formatSize,
} from "./steps/index.js";
export type {
  ReducedStep, StepAction, CompactedHistory, Summarizer, ReductionRule, ReductionThresholds, RuleInput, RuleOutput,
  StepReducerOptions, StepMessagesOptions, StepMessagesResult, ThoughtStep, ReactPromptInput, SpawnOptions, PresetName,
  CompactionConfig as StepCompactionConfig,
} from "./steps/index.js";
export {
  FixedCount, TokenBudget, kDefaultCompactionSettings, resolveSessionConfig, shouldCompactSession,
  DefaultBlockCompaction, DefaultCompaction, compactMessages, loadLoop, blockMatches,
  buildContextFromSession, compactSessionLoops, compactContext, resolveScope, activeChain, assignTurns, sessionFromMessages,
  SessionRecorder, readSessionEvents, MemorySessionStore, FsSessionStore, ContextTracker,
} from "./session/index.js";
export type {
  CompactionConfig, CompactionScope, CompactionInfo, CompactionStrategy, BlockCompactionStrategy, SessionEvent, EventSink,
  SessionStore, OrchestrationOptions, CompactMessagesResult,
} from "./session/index.js";
export { createCompactor, Compactor, CompactorSession, classify, kDefaultTieredSettings, extractiveSummarizer, llmSummarizer } from "./policy/index.js";
export type { CompactorConfig, CompactCallOptions, CompactResult, MessageClass, StageReport, Tier, PolicyEvent } from "./policy/index.js";
