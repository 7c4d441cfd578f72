import { E_BAD_LENGTH } from "./errors";

/** Bit 0 of `flags`: group consecutive same-category steps (the step compactor's group_similar). */
export const GROUP_SIMILAR: i32 = 1;
/** Bit 1 of `flags`: the step compactor's "alternating tool types" rule (no grouping when no two neighbours share a category). */
export const NO_GROUP_WHEN_ALTERNATING: i32 = 2;
/** Bit 0 of the status word: the sequence has no two consecutive steps of the same category. */
export const STATUS_ALTERNATING: i32 = 1;

/**
 * The step compactor's _group_and_compact over a batch of steps. Each step is one byte: bits 0-6 the
 * tool category, bit 7 set when the step failed. Writes runs of consecutive same-category
 * steps: first step index, step count and failure count per run, and the status word to
 * `outStatus`. Returns the run count, or a negative E_* code.
 */
export function groupCategories(
  steps: usize, n: i32, flags: i32,
  outStart: usize, outCount: usize, outFailures: usize, outStatus: usize,
): i32 {
  if (n < 0) return E_BAD_LENGTH;
  let alternating = n > 1;
  for (let i = 1; i < n; i++) {
    if (((load<u8>(steps + i) ^ load<u8>(steps + i - 1)) & 0x7f) == 0) { alternating = false; break; }
  }
  store<i32>(outStatus, alternating ? STATUS_ALTERNATING : 0);
  const group = (flags & GROUP_SIMILAR) != 0 && !(alternating && (flags & NO_GROUP_WHEN_ALTERNATING) != 0);
  let runs = 0;
  let i = 0;
  while (i < n) {
    const cat = load<u8>(steps + i) & 0x7f;
    let failures = <i32>(load<u8>(steps + i) >> 7);
    let j = i + 1;
    if (group) {
      while (j < n) {
        const b = load<u8>(steps + j);
        if ((b & 0x7f) != cat) break;
        failures += <i32>(b >> 7);
        j++;
      }
    }
    const at = <usize>runs << 2;
    store<i32>(outStart + at, i);
    store<i32>(outCount + at, j - i);
    store<i32>(outFailures + at, failures);
    runs++;
    i = j;
  }
  return runs;
}
