import { FEATURE_COUNT } from "./features.generated.js";
import { CL100K_WEIGHTS, O200K_WEIGHTS } from "./weights.generated.js";

export { FEATURE_COUNT };

/** Encodings the estimator is calibrated for, in the order of the weight table's rows. */
export const kEncodings = ["o200k_base", "cl100k_base"] as const;
export type Encoding = (typeof kEncodings)[number];
export const ENCODING_COUNT = kEncodings.length;

/**
 * True when weights.generated.ts does not match the feature spec (a spec change before `npm
 * run calibrate`). Feature counting still works, which is what calibration needs; estimating
 * throws (TokenCounter), and test/tokens/generated.test.ts fails.
 */
export const WEIGHTS_STALE = O200K_WEIGHTS.length !== FEATURE_COUNT || CL100K_WEIGHTS.length !== FEATURE_COUNT;

/**
 * The weight table the estimator kernel reads: ENCODING_COUNT rows of FEATURE_COUNT f64, in
 * kEncodings order (NaN where stale). The WASM host does not import it: the estimator hands it
 * to each estimate (estimator-core.ts), and the host copies it into linear memory once per
 * instance, keyed by this object's identity, so it is never changed in place. The host checks
 * its shape against the kernel's (its feature count, and kEstimateRows in core-instance.ts),
 * so ENCODING_COUNT and FEATURE_COUNT stay this side's alone.
 */
export const WEIGHT_TABLE: Float64Array = (() => {
  const t = new Float64Array(ENCODING_COUNT * FEATURE_COUNT).fill(NaN);
  if (!WEIGHTS_STALE) {
    t.set(O200K_WEIGHTS, 0);
    t.set(CL100K_WEIGHTS, FEATURE_COUNT);
  }
  return t;
})();

export function encodingIndex(encoding: Encoding): number {
  return kEncodings.indexOf(encoding);
}
