/**
 * Token counts (`ctxfold/tokens`): the TokenCounter (calibrated WASM estimate, exact BPE count),
 * the one measure of canonical messages every part of ctxfold counts with (provider overheads,
 * memoised per message), the encodings and the estimator's weight table (what the WASM host's
 * estimate calls take), the model profiles that turn a model's context window into a budget in
 * that measure, and the usage correction that keeps it true to the provider's own count.
 */
export { TokenCounter } from "./token-counter.js";
export type { CountableMessage, TokenCounterOptions } from "./token-counter.js";
export { TokenMeasure, tokenMeasure, providerOf } from "./measure.js";
export type { MeasureMode, TextCounter } from "./measure.js";
export { kMessageOverhead } from "./overheads.js";
export type { Provider } from "./overheads.js";
export { kEncodings, WEIGHT_TABLE } from "./weights-table.js";
export type { Encoding } from "./weights-table.js";
export { kModelProfiles, kMeasuredFactors, modelProfileOf, registerModelProfile, checkModelProfile } from "./models.js";
export type { ModelProfile, FactorBasis } from "./models.js";
export { UsageCorrection, inputTokensOf, kUsageFeedback, kFeedbackMargin } from "./usage.js";
export type { CorrectionSettings, CorrectionStep, UsageIgnoredReason } from "./usage.js";
