/**
 * The token estimator's scalar side: feature counting (generated from src/tokens/feature-spec.ts)
 * and the dot product with the fitted weights, in the same order as the WASM kernel so both
 * give bit-identical f64 results.
 */
import { FEATURE_COUNT } from "./features.generated.js";

export { countFeatures, FEATURE_COUNT, FEATURE_NAMES } from "./features.generated.js";

/** The sum over features f of counts[countsAt + f] * weights[weightsAt + f], in feature order. */
export function estimateFromFeatures(counts: ArrayLike<number>, countsAt: number, weights: ArrayLike<number>, weightsAt: number): number {
  let sum = 0;
  for (let f = 0; f < FEATURE_COUNT; f++) sum += counts[countsAt + f] * weights[weightsAt + f];
  return sum;
}
