/**
 * The "tail baseline" contender: what a careful hand-written trimmer does, the bar any
 * compactor has to clear. A prompt that fits the budget goes through unchanged; one above it
 * keeps
 *
 * - the **anchors**: every system / developer message and the task (the first user message),
 * - then the **newest units** that fit the budget with them (exact o200k with OpenAI's overheads,
 *   `promptTokens`), taken from the end backwards and stopping at the first that does not fit, so
 *   the kept tail is contiguous. A **unit** is one message, except that an assistant message with
 *   tool calls and the tool results answering them that follow it are one unit, kept whole or
 *   dropped whole: no call loses its result, no result its call.
 * - The tail never opens on a tool result: a unit that is a tool result alone (an orphan already
 *   in the input) is dropped when it would be the first of the tail.
 *
 * Messages come back as the very objects given, in input order. When the anchors alone are above
 * the budget there is nothing it may drop: it refuses (`infeasible`), as ctxfold's
 * budget_infeasible does.
 */
import type { OpenAIChatMessage } from "../adapters/openai-chat.js";
import { anchorIndices } from "./metrics.js";
import type { CompactOutput, Contender } from "./protocol.js";
import { messageTokens, promptTokens } from "./tokens.js";

/** The messages other than `skip` as units (see the module comment), each a list of indices in input order. */
export function messageUnits(messages: readonly OpenAIChatMessage[], skip: ReadonlySet<number>): number[][] {
  const rest = messages.map((_, i) => i).filter((i) => !skip.has(i));
  const units: number[][] = [];
  for (let k = 0; k < rest.length; k++) {
    const m = messages[rest[k]];
    const unit = [rest[k]];
    const ids = new Set(m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []);
    while (ids.size > 0 && k + 1 < rest.length) {
      const r = messages[rest[k + 1]];
      if (r.role !== "tool" || !ids.has(r.tool_call_id)) break;
      unit.push(rest[++k]);
    }
    units.push(unit);
  }
  return units;
}

/** The tail baseline's output for one prompt (see the module comment). */
export function trimTail(messages: readonly OpenAIChatMessage[], budget: number): CompactOutput {
  if (promptTokens(messages) <= budget) return { messages: [...messages] };
  const anchors = anchorIndices(messages);
  let total = promptTokens(messages.filter((_, i) => anchors.has(i)));
  if (total > budget) return { messages: [], infeasible: true };
  const units = messageUnits(messages, anchors);
  let first = units.length;
  while (first > 0) {
    const cost = units[first - 1].reduce((n, i) => n + messageTokens(messages[i]), 0);
    if (total + cost > budget) break;
    total += cost;
    first--;
  }
  while (first < units.length && messages[units[first][0]].role === "tool") first++;
  const kept = new Set(anchors);
  for (const unit of units.slice(first)) for (const i of unit) kept.add(i);
  return { messages: messages.filter((_, i) => kept.has(i)) };
}

export function tailBaseline(): Contender {
  return {
    name: "tail baseline",
    version: "baseline",
    note: "above the budget: the system / developer messages and the task (first user message), then the newest messages that fit (exact o200k with OpenAI overheads), an assistant message with tool calls and its results kept or dropped together, the tail never opening on a tool result; what a careful hand-written trimmer does",
    compact: async (messages, budget) => trimTail(messages, budget),
  };
}
