// The whole export surface of core.wasm. Every kernel takes a batch laid out by the host in
// one arena of linear memory above heapBase(); kernels never allocate.
export { hashBatch } from "./hash";
export { buildTurnMap } from "./turn-map";
export { groupCategories } from "./group-categories";
export { termLines, termLinesScratch } from "./term-lines";
export { scanJson } from "./json-scan";
export { specificTermSpans } from "./specific-terms";
import { xxh64 } from "./hash";

/** First byte the host may use as its arena (everything below is static data). */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}

/** Bumped whenever a kernel's signature or memory layout changes; the host checks it. */
export function abiVersion(): i32 {
  return 5;
}

/** XXH64 of one byte range (for Uint8Array content such as offloaded files). */
export function hashBytes(ptr: usize, len: usize, seed: u64): u64 {
  return xxh64(ptr, len, seed);
}
export { estimateBatch, measureBatch, featureBatch, featureCount } from "./estimate-tokens";
