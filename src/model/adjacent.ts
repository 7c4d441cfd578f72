import type { Message } from "./schema.js";

/**
 * Restores role alternation after removals: where a removal put two user or two assistant
 * messages next to each other, the later one's parts are appended to the earlier one (which
 * keeps its id, turn and meta). `gapBefore[j]` says whether something was removed (or a new
 * message inserted) right before `messages[j]`; neighbours that were neighbours before are
 * never merged, so whatever alternation the input had, or lacked, stays as it was.
 *
 * System messages are skipped when looking for the previous message (providers and the
 * validator ignore them for alternation): a gap anywhere between the two same-role messages
 * merges them, and the system message stays where it was, after the merged one.
 *
 * Returns a new array; merged messages are new objects, the others are the given ones.
 */
export function mergeAdjacent(messages: readonly Message[], gapBefore: readonly boolean[]): Message[] {
  const out: Message[] = [];
  let prev = -1;
  let gap = false;
  messages.forEach((m, j) => {
    gap ||= gapBefore[j] === true;
    if (m.role === "system") {
      out.push(m);
      return;
    }
    const p = prev >= 0 ? out[prev] : undefined;
    if (p && gap && p.role === m.role && (m.role === "user" || m.role === "assistant")) {
      out[prev] = { ...p, parts: [...p.parts, ...m.parts] };
    } else {
      out.push(m);
      prev = out.length - 1;
    }
    gap = false;
  });
  return out;
}
