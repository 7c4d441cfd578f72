/**
 * What the wire cache (wire-cache.ts) must know of each format to parse and render a part of a
 * conversation on its own and still get what the whole would give. The adapters parse message
 * by message and render message by message, with these exceptions, each handled here:
 *
 * Parsing wire[s..] alone (the suffix from the first changed message):
 * - Ids: a canonical id is `m<i>` / `m<i>.<k>` by wire index (LangChain: the wire's own id when
 *   it has one), so a suffix's ids are shifted by s.
 * - Anthropic: a tool_result block takes its tool name from the latest tool_use with its id
 *   before it. The suffix starts early enough to hold that tool_use (or there is none before
 *   it at all). Its `system` (and whether it comes before `messages`) must be unchanged.
 * - OpenAI Responses: consecutive model-side items (reasoning, assistant message, calls) form one
 *   assistant message, so the suffix starts right after an item that closes such a run (a user,
 *   system or developer message, a tool output, any other item not on the model side).
 * - OpenAI chat: legacy function calling (`function_call` on an assistant message, `function`
 *   messages) names results by the call's message index: a suffix holding either is parsed whole.
 *
 * Rendering a unit of canonical messages alone (render units):
 * - A group parsed from one wire message and still whole renders back as that wire message.
 * - AI SDK: a rebuilt tool message absorbs the rebuilt tool messages after it that were split
 *   from one wire message (`joinPrev`); a tool result without a name takes the name of its call,
 *   searched in the messages before it (such a unit cannot be rendered alone).
 * - Anthropic: a rebuilt tool message absorbs the tool messages after it (or, parsed from
 *   Anthropic, the user text that shared its wire message); system messages go to `system`.
 */
import { kAdapters, type Format } from "./index.js";
import { reusable } from "./common.js";
import type { Message } from "../model/schema.js";

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => typeof v === "object" && v !== null && !Array.isArray(v);
const hint = (m: Message | undefined, format: Format, key: string): unknown => (m?.meta?.[format] as Loose | undefined)?.[key];

/** The wire messages of an input (Anthropic: of its body), or undefined when it has none (a whole parse then says why). */
export function wireMessages(format: Format, input: unknown): readonly unknown[] | undefined {
  if (Array.isArray(input)) return input;
  if (format === "anthropic" && isObject(input) && Array.isArray(input.messages)) return input.messages;
  return undefined;
}

/**
 * What an input holds besides its messages, as a list compared value by value: a suffix parse
 * stands only while it is unchanged (Anthropic's `system`, and whether it precedes `messages`).
 */
export function wireHead(format: Format, input: unknown): unknown[] {
  if (format !== "anthropic" || Array.isArray(input) || !isObject(input)) return [];
  let first = false;
  for (const k in input) {
    if (k === "messages") break;
    if (k === "system") first = true;
  }
  return [input.system, first];
}

/** The input of a parse of wire[from..to): Anthropic's prefix keeps its body's `system`. */
function sliceInput(format: Format, input: unknown, wire: readonly unknown[], from: number, to: number): unknown {
  const messages = wire.slice(from, to);
  if (format !== "anthropic" || from > 0 || Array.isArray(input)) return messages;
  const system = (input as Loose).system;
  return system === undefined ? { messages } : { system, messages };
}

/**
 * The canonical messages of wire[0..to) of `input` (Anthropic: with its system). A whole parse's
 * first messages are these, but for the last one when `to` cuts into a Responses run.
 */
export function parsePrefix(format: Format, input: unknown, wire: readonly unknown[], to: number): Message[] {
  return kAdapters[format].parse(to >= wire.length ? input : sliceInput(format, input, wire, 0, to));
}

/**
 * The earliest index s ≤ c from which a parse of wire[s..] alone gives the whole parse's
 * messages for wire[s..] (ids shifted); 0 when only a whole parse does.
 */
export function parseFrom(format: Format, wire: readonly unknown[], c: number): number {
  switch (format) {
    case "openai-chat":
      for (let j = c; j < wire.length; j++) {
        const m = wire[j];
        if (isObject(m) && (m.role === "function" || (m.role === "assistant" && isObject(m.function_call)))) return 0;
      }
      return c;
    case "anthropic":
      return anthropicFrom(wire, c);
    case "openai-responses": {
      let s = c;
      while (s > 0 && !closesRun(wire[s - 1])) s--;
      return s;
    }
    default:
      return c;
  }
}

/** Whether the Responses item leaves no run of model-side items open (the parser's `alone` items). */
function closesRun(item: unknown): boolean {
  if (!isObject(item)) return false;
  const type = item.type ?? "message";
  if (typeof type !== "string") return false;
  if (type === "message") return item.role !== "assistant";
  if (type === "function_call_output" || type === "custom_tool_call_output") return true;
  if (type === "function_call" || type === "custom_tool_call" || type === "reasoning") return false;
  // Other items: client side (`*_output`, `*_response`) or alone stand on their own; model side (`*_call`, `mcp_*`) joins the run.
  if (type.endsWith("_output") || type.endsWith("_response")) return true;
  return !(type.endsWith("_call") || type.startsWith("mcp_"));
}

/** Anthropic: back from c until every tool_result of wire[s..] finds its tool_use in wire[s..] (or none exists before it). */
function anthropicFrom(wire: readonly unknown[], c: number): number {
  let s = c;
  const orphans = new Set<unknown>();
  for (let moved = true; moved; ) {
    moved = false;
    const seen = new Set<unknown>();
    scan: for (let j = s; j < wire.length; j++) {
      const content = isObject(wire[j]) ? (wire[j] as Loose).content : undefined;
      if (!Array.isArray(content)) continue;
      for (const b of content) {
        if (!isObject(b)) continue;
        if (b.type === "tool_use") seen.add(b.id);
        else if (b.type === "tool_result" && !seen.has(b.tool_use_id) && !orphans.has(b.tool_use_id)) {
          const at = lastToolUse(wire, s, b.tool_use_id);
          if (at < 0) orphans.add(b.tool_use_id);
          else {
            s = at;
            moved = true;
            break scan;
          }
        }
      }
    }
  }
  return s;
}

function lastToolUse(wire: readonly unknown[], before: number, id: unknown): number {
  for (let j = before - 1; j >= 0; j--) {
    const content = isObject(wire[j]) ? (wire[j] as Loose).content : undefined;
    if (Array.isArray(content) && content.some((b) => isObject(b) && b.type === "tool_use" && b.id === id)) return j;
  }
  return -1;
}

/** The wire index (within the parsed list) of canonical message k of a parse: by its id, LangChain's by position; -1 for Anthropic's system. */
export function wireIndexOf(format: Format, m: Message, k: number): number {
  if (format === "langchain") return k;
  if (m.id === "system") return -1;
  return parseInt(m.id.slice(1), 10);
}

/** The id message `m`, parsed from wire[s + local] in a suffix parse, has in the whole parse. */
export function shiftedId(format: Format, m: Message, local: number, s: number, wire: readonly unknown[]): string {
  if (format === "langchain") return typeof (wire[s + local] as Loose).id === "string" ? m.id : `m${s + local}`;
  const dot = m.id.indexOf(".");
  return `m${local + s}${dot < 0 ? "" : m.id.slice(dot)}`;
}

/** Where the render unit starting at canonical message i ends (see the module comment). */
export function unitEnd(format: Format, messages: readonly Message[], i: number): number {
  const r = reusable(messages, i, format);
  if (r) return i + r.length;
  const m = messages[i]!;
  let j = i + 1;
  if (m.role !== "tool") return j;
  if (format === "ai-sdk") {
    while (j < messages.length && messages[j]!.role === "tool" && hint(messages[j], format, "joinPrev") === true && !reusable(messages, j, format)) j++;
  } else if (format === "anthropic") {
    if (typeof hint(m, format, "blocks") === "string") return messages[j]?.role === "user" && hint(messages[j], format, "tail") ? j + 1 : j;
    while (j < messages.length && messages[j]!.role === "tool" && typeof hint(messages[j], format, "blocks") !== "string") j++;
  }
  return j;
}

/** Whether a unit renders alone as it renders in its list (an AI SDK tool result without a name needs the messages before it). */
export function rendersAlone(format: Format, unit: readonly Message[]): boolean {
  if (format !== "ai-sdk") return true;
  for (const m of unit) for (const p of m.parts) if (p.type === "tool-result" && p.name === undefined) return false;
  return true;
}
