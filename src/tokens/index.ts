/**
 * Token counts (`ctxfold/tokens`): the TokenCounter (calibrated WASM estimate, exact BPE count),
 * the one measure of canonical messages every part of ctxfold counts with (provider overheads,
 * memoised per message), the encodings and the estimator's weight table (what the WASM host's
 * estimate calls take).
 */
export { TokenCounter } from "./token-counter.js";
export type { CountableMessage, TokenCounterOptions } from "./token-counter.js";
export { TokenMeasure, tokenMeasure, providerOf } from "./measure.js";
export type { MeasureMode, TextCounter } from "./measure.js";
export { kMessageOverhead } from "./overheads.js";
export type { Provider } from "./overheads.js";
export { kEncodings, WEIGHT_TABLE } from "./weights-table.js";
export type { Encoding } from "./weights-table.js";
