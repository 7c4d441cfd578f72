import { refPattern } from "./names.js";
import type { OffloadStore } from "./offload.js";

/**
 * Every ref of `store` that `texts` (e.g. an output's messages as JSON) name, directly or
 * through what the refs they name hold: an index of stored messages names the messages, a
 * stored message or text names the refs in it. This is how a reader of the output gets back to
 * what compaction removed, so "every original is reachable" means every ref a compaction made is
 * in this set. Refs named but not held by `store` are in the set too (resolving is the reader's
 * check, not this one's).
 */
export function reachableRefs(store: OffloadStore, texts: Iterable<string>): Set<string> {
  const pattern = refPattern(store.prefix);
  const seen = new Set<string>();
  const queue: string[] = [];
  const scan = (text: string) => {
    for (const m of text.matchAll(pattern)) {
      if (seen.has(m[0])) continue;
      seen.add(m[0]);
      queue.push(m[0]);
    }
  };
  for (const t of texts) scan(t);
  while (queue.length > 0) {
    const ref = queue.pop()!;
    if (store.has(ref)) scan(store.getText(ref));
  }
  return seen;
}
