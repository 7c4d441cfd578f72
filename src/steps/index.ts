// The public names of the steps module: one block per source file; add lines, never `export *`.
export { StepCompactor, CompactStep, formatForPrompt, shouldCompact } from "./compactor.js";
export type { CompactedHistory, CompactOptions, CompactAsyncOptions, Summarizer } from "./compactor.js";
export { StepCompactionConfig, kDefaultStepCompactionConfig, kPresets, presetConfig, autoTuneCompaction, resolveStepCompactionConfig } from "./config.js";
export type { PresetName, StepCompactionInput } from "./config.js";
export { compactForSpawn } from "./spawn.js";
export type { SpawnOptions } from "./spawn.js";
export { formatSize, formatKB } from "./format-size.js";
export { StepReducer, extractSteps, resultText, resultPayload } from "./reducer.js";
export type { StepReducerOptions, OrphanResult, CallResult } from "./reducer.js";
export {
  kBuiltinRules,
  kDefaultThresholds,
  defaultRule,
  fileReadRule,
  fileWriteRule,
  fileListRule,
  shellRule,
  searchRule,
  webRule,
  weatherRule,
} from "./rules.js";
export type { ReductionRule, ReductionThresholds, RuleInput, RuleOutput } from "./rules.js";
export { detectContentType, languageOf, extractExitCode, errorHead, countLines } from "./detect.js";
export type { ContentType } from "./detect.js";
export { redactSecrets, redactValue, containsSecret, kSecretPatterns } from "./redact.js";
export type { SecretPattern } from "./redact.js";
export { compactStepMessages, kStepSummaryKind } from "./messages.js";
export type { StepMessagesOptions, StepMessagesResult } from "./messages.js";
export { buildReactPrompt, formatFullStep, thoughtStepsFromMessages } from "./react.js";
export type { ThoughtStep, ReactPromptInput } from "./react.js";
export type { ReducedStep, StepAction, ToolCategory } from "./types.js";
export { groupSteps, kToolCategories } from "./group-steps.js";
export type { GroupStepsOptions, StepRun } from "./group-steps.js";
