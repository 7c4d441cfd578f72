/**
 * The recall hint: one short line that tells the model how to get back what a ref stands for,
 * placed after the first ref of a compacted prompt when the agent has a recall tool (the
 * compactor's `recallHint`, or a call's: the AI SDK middleware turns it on for a call whose tools
 * include the recall tool).
 *
 * Decisions:
 * - Where: after the line holding the first ref of the store's prefix, in the first text that
 *   compaction wrote (a part the input did not have: an observation, a step summary, a merge). A
 *   part the caller sent is never changed, so critical messages stay verbatim and a ref the
 *   caller's own text mentions gets no hint. Text is only appended inside an existing text, so
 *   roles, tool-call pairing and every provider rule are as they were.
 * - Stable prefix: the line is part of an epoch's compaction, which a session then reuses as it
 *   is for every call of the epoch, so the cached prefix is unchanged until the next epoch.
 *   Compacting an output that already holds the line adds none (compaction stays idempotent).
 * - Budget: the compaction runs against the budget less the line's tokens, then the line goes
 *   in, so the prompt stays within the budget with it (placing it after the stages, not before,
 *   keeps them from summarising it away or taking it for the header of a summary).
 */
import { refPattern } from "../store/index.js";
import type { Message, Part } from "../model/schema.js";

/** The line `recallHint: true` places. */
export const kDefaultRecallHint = "[ctxfold] Refs like the one above name content left out of this prompt: call the recall tool with a ref to read it.";

/** The hint line a setting stands for (true: the default line), or undefined when off. */
export function recallHintText(setting: string | boolean | undefined): string | undefined {
  if (setting === true) return kDefaultRecallHint;
  return typeof setting === "string" && setting !== "" ? setting : undefined;
}

/**
 * The budget compaction works to when the hint goes in last: `budget` less the hint's room (its
 * exact count and a few tokens for how it joins the text around it: the newline, a merge at the
 * join), at least 1; `budget` itself without a hint.
 */
export function hintedBudget(budget: number, hint: string | undefined, counter: { exact(text: string): number }): number {
  return hint === undefined ? budget : Math.max(1, budget - counter.exact(hint) - 3);
}

/** `text` with `hint` on a line of its own after the line holding index `at`. */
function after(text: string, at: number, hint: string): string {
  const end = text.indexOf("\n", at);
  return end < 0 ? `${text}\n${hint}` : `${text.slice(0, end)}\n${hint}${text.slice(end)}`;
}

/** Whether any text of `messages` holds `hint` already. */
function holds(messages: readonly Message[], hint: string): boolean {
  return messages.some((m) =>
    m.parts.some(
      (p) => (p.type === "text" && p.text.includes(hint)) || (p.type === "tool-result" && p.content.some((c) => c.type === "text" && c.text.includes(hint))),
    ),
  );
}

/**
 * Where the hint goes in `messages` (see the module comment): the index of the message and its
 * new parts, or undefined when no text compaction wrote holds a ref, or the hint is there
 * already. `input` is the call's input, whose parts are never changed.
 */
export function placeRecallHint(
  messages: readonly Message[],
  input: readonly Message[],
  prefix: string,
  hint: string,
): { index: number; parts: Part[] } | undefined {
  if (holds(messages, hint)) return undefined;
  const sent = new Set<Part>();
  for (const m of input) for (const p of m.parts) sent.add(p);
  const pattern = refPattern(prefix);
  const firstRef = (text: string): number => {
    pattern.lastIndex = 0;
    return pattern.exec(text)?.index ?? -1;
  };
  for (let i = 0; i < messages.length; i++) {
    const parts = messages[i].parts;
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k];
      if (sent.has(p)) continue;
      let changed: Part | undefined;
      if (p.type === "text") {
        const at = firstRef(p.text);
        if (at >= 0) changed = { ...p, text: after(p.text, at, hint) };
      } else if (p.type === "tool-result") {
        const c = p.content.findIndex((x) => x.type === "text" && firstRef(x.text) >= 0);
        if (c >= 0) {
          const content = [...p.content];
          const t = content[c] as { type: "text"; text: string };
          content[c] = { ...t, text: after(t.text, firstRef(t.text), hint) };
          changed = { ...p, content };
        }
      }
      if (changed) return { index: i, parts: parts.map((x, j) => (j === k ? changed : x)) };
    }
  }
  return undefined;
}
