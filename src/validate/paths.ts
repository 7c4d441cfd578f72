/** How findings name where they are: `messages[7]`, `messages[7].parts[0]`, and ids quoted as JSON. */
export const canonicalPath = (i: number, k?: number): string => (k === undefined ? `messages[${i}]` : `messages[${i}].parts[${k}]`);
export const quote = (s: string): string => JSON.stringify(s);

/** Where a finding sits: message `i`, or its part `k`, with the canonical path of that place. */
export function placeOf(i: number, k?: number): { index: number; part?: number; path: string } {
  return k === undefined ? { index: i, path: canonicalPath(i) } : { index: i, part: k, path: canonicalPath(i, k) };
}
