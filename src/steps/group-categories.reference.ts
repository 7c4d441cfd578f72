/** Bit 0 of the flags: group consecutive same-category steps. */
export const kGroupSimilar = 1;
/** Bit 1 of the flags: the step compactor's "alternating tool types: no grouping" rule. */
export const kNoGroupWhenAlternating = 2;
/** Bit 0 of the status: no two consecutive steps share a category. */
export const kStatusAlternating = 1;

/** Twin of assembly/group-categories.ts. */
export function groupCategoriesReference(steps: Uint8Array, flags: number): { start: Int32Array; count: Int32Array; failures: Int32Array; status: number } {
  const n = steps.length;
  let alternating = n > 1;
  for (let i = 1; i < n; i++) {
    if (((steps[i] ^ steps[i - 1]) & 0x7f) === 0) {
      alternating = false;
      break;
    }
  }
  const group = (flags & kGroupSimilar) !== 0 && !(alternating && (flags & kNoGroupWhenAlternating) !== 0);
  const start: number[] = [];
  const count: number[] = [];
  const failures: number[] = [];
  let i = 0;
  while (i < n) {
    const cat = steps[i] & 0x7f;
    let failed = steps[i] >> 7;
    let j = i + 1;
    if (group) {
      while (j < n && (steps[j] & 0x7f) === cat) {
        failed += steps[j] >> 7;
        j++;
      }
    }
    start.push(i);
    count.push(j - i);
    failures.push(failed);
    i = j;
  }
  return {
    start: Int32Array.from(start),
    count: Int32Array.from(count),
    failures: Int32Array.from(failures),
    status: alternating ? kStatusAlternating : 0,
  };
}
