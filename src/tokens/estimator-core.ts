import { kDefaultHashSeed } from "../constants.js";
import { coreFor as hostFor, type Backend } from "../core/backend.js";
import type { CoreInstance } from "../core/core-instance.js";
import { WEIGHT_TABLE } from "./weights-table.js";

/**
 * The WASM core as the token estimator calls it: the host's string kernels with the estimator's
 * weight table (WEIGHT_TABLE) passed in, so the host, the bottom layer, never imports the
 * estimator's data. Estimates come out as ENCODING_COUNT values per string, in kEncodings order.
 */
export class EstimatorCore {
  constructor(readonly host: CoreInstance) {}

  /** Unrounded estimates of each string: `out[i * ENCODING_COUNT + k]` for encoding k. */
  estimateStrings(texts: readonly string[]): Float64Array {
    return this.host.estimateStrings(texts, WEIGHT_TABLE);
  }

  /** Content hash and estimates of each string in one pass over one copy. */
  measureStrings(texts: readonly string[], seed: bigint = kDefaultHashSeed): { hashes: BigUint64Array; estimates: Float64Array } {
    return this.host.measureStrings(texts, WEIGHT_TABLE, seed);
  }

  /** Content hash of each string (the estimator's memo keys). */
  hashStrings(texts: readonly string[], seed: bigint = kDefaultHashSeed): BigUint64Array {
    return this.host.hashStrings(texts, seed);
  }
}

let cached: EstimatorCore | undefined;

/**
 * coreFor (core/backend.ts) for the estimator: this thread's core with the weight table bound,
 * or undefined where the TypeScript twins run.
 */
export function coreFor(backend: Backend | "auto" = "auto"): EstimatorCore | undefined {
  const host = hostFor(backend);
  if (!host) return undefined;
  if (cached?.host !== host) cached = new EstimatorCore(host);
  return cached;
}
