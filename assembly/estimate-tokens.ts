import { countFeaturesSimd, FEATURE_COUNT } from "./estimate-features.generated";
import { hashString } from "./hash";
import { E_BAD_LENGTH, E_BAD_OFFSETS } from "./errors";

/** Encodings per weight-table row set (o200k_base, cl100k_base); the host's kEncodings. */
const ENCODINGS: i32 = 2;

const scratch = memory.data(128, 16);
const counts = memory.data(FEATURE_COUNT * 4, 16);

// @ts-ignore: decorator
@inline function itemCounts(data: usize, start: u32, end: u32): void {
  memory.fill(counts, 0, FEATURE_COUNT * 4);
  countFeaturesSimd(data + start, <i32>((end - start) >> 1), counts, scratch);
}

/** Dot product of the counts with one row of weights, in feature order (the TS twin's order). */
// @ts-ignore: decorator
@inline function dot(weights: usize): f64 {
  let sum: f64 = 0;
  for (let f = 0; f < FEATURE_COUNT; f++) {
    sum += <f64>load<u32>(counts + (<usize>f << 2)) * load<f64>(weights + (<usize>f << 3));
  }
  return sum;
}

// @ts-ignore: decorator
@inline function storeEstimates(weights: usize, out: usize): void {
  for (let k = 0; k < ENCODINGS; k++) {
    store<f64>(out + (<usize>k << 3), dot(weights + <usize>(k * FEATURE_COUNT) * 8));
  }
}

/** Estimates of the `n` UTF-16 units at `ptr` (any alignment): ENCODINGS f64 at `out`, from the weight table at `weights`. */
export function estimateUnits(ptr: usize, n: i32, weights: usize, out: usize): void {
  memory.fill(counts, 0, FEATURE_COUNT * 4);
  countFeaturesSimd(ptr, n, counts, scratch);
  storeEstimates(weights, out);
}

/**
 * Token estimates of n strings (UTF-16LE units, u32 byte offsets as in hashBatch): ENCODINGS
 * f64 per item at `out`, from the weight table at `weights` (ENCODINGS rows of FEATURE_COUNT).
 */
export function estimateBatch(data: usize, offsets: usize, n: i32, weights: usize, out: usize): i32 {
  if (n < 0) return E_BAD_LENGTH;
  assert(((data | weights | out) & 7) == 0, "estimateBatch: data, weights and out must be 8-byte aligned");
  let start = load<u32>(offsets);
  for (let i = 0; i < n; i++) {
    const end = load<u32>(offsets + ((<usize>i + 1) << 2));
    if (end < start || ((end - start) & 1) != 0) return E_BAD_OFFSETS;
    itemCounts(data, start, end);
    storeEstimates(weights, out + <usize>(i * ENCODINGS) * 8);
    start = end;
  }
  return n;
}

/** hashBatch and estimateBatch in one pass over one copy of the strings. */
export function measureBatch(data: usize, offsets: usize, n: i32, seed: u64, weights: usize, outHash: usize, outEst: usize): i32 {
  if (n < 0) return E_BAD_LENGTH;
  let start = load<u32>(offsets);
  for (let i = 0; i < n; i++) {
    const end = load<u32>(offsets + ((<usize>i + 1) << 2));
    if (end < start || ((end - start) & 1) != 0) return E_BAD_OFFSETS;
    store<u64>(outHash + (<usize>i << 3), hashString(data + start, (end - start) >> 1, seed));
    itemCounts(data, start, end);
    storeEstimates(weights, outEst + <usize>(i * ENCODINGS) * 8);
    start = end;
  }
  return n;
}

/** Raw feature counts (u32, FEATURE_COUNT per item): calibration and the differential tests. */
export function featureBatch(data: usize, offsets: usize, n: i32, out: usize): i32 {
  if (n < 0) return E_BAD_LENGTH;
  let start = load<u32>(offsets);
  for (let i = 0; i < n; i++) {
    const end = load<u32>(offsets + ((<usize>i + 1) << 2));
    if (end < start || ((end - start) & 1) != 0) return E_BAD_OFFSETS;
    itemCounts(data, start, end);
    memory.copy(out + <usize>(i * FEATURE_COUNT) * 4, counts, FEATURE_COUNT * 4);
    start = end;
  }
  return n;
}

export function featureCount(): i32 {
  return FEATURE_COUNT;
}
