/**
 * Where a canonical message or part sits in the input it was parsed from, named in that input's
 * own shape, so that a report points at the field a user finds in their file:
 * - OpenAI Chat: `messages[29].content[0]`, `messages[29].tool_calls[1]`, `messages[29].function_call`;
 *   a tool result is its tool message, `messages[30]`.
 * - Anthropic: `messages[3].content[1]` (a block; a user message's tool_result blocks and its
 *   other blocks become two canonical messages, each part still names its block), `system`,
 *   `system[0]`.
 * - OpenAI Responses: the item, `messages[7]` (items are flat: a call, an output, a reasoning
 *   item), or a message item's `messages[7].content[0]`; an assistant message made of a run of
 *   items is named by its first item.
 * - AI SDK: `messages[4].content[2]`. LangChain: as OpenAI Chat (`tool_calls[k]` after the content).
 * A string content is `.content` itself. The array is `messages` in every format, as the JSONL
 * line and the adapters' parse errors call it.
 *
 * Read from the origins the adapters record at parse time (common.ts) and each format's layout
 * of parts, which mirrors its parse (`*-parse.ts`): a change to the order in which a parse makes
 * parts changes the layout here. Only reporting asks, so nothing is computed during a parse.
 */
import type { Message } from "../model/schema.js";
import { isObject, type Format, type Origin, originAt, originOf } from "./common.js";

/** Where message `index` (or its part `part`) of a transcript sits in its input. */
export type InputPaths = (index: number, part?: number) => string;

/** Where part k of the group's member j sits; undefined when the layout has no such part. */
type PartPath = (o: Origin, j: number, k: number) => string | undefined;

const at = (n: number): string => `messages[${n}]`;
const messagePath = (o: Origin): string => (o.at === "system" ? "system" : at(o.at));

/**
 * Where a part of a message with a content field and calls after it sits: its content (a string
 * is one part, an array one per element) then `calls` (OpenAI Chat's `function_call` first).
 */
function contentThenCalls(w: Record<string, unknown>, k: number, fnCall: boolean): string {
  const c = w.content;
  const n = typeof c === "string" ? 1 : Array.isArray(c) ? c.length : 0;
  if (k < n) return typeof c === "string" ? ".content" : `.content[${k}]`;
  let rest = k - n;
  if (fnCall) {
    if (rest === 0) return ".function_call";
    rest--;
  }
  return `.tool_calls[${rest}]`;
}

/** OpenAI Chat and LangChain: a tool message is its one result part; others, content then calls. */
const chatLike =
  (legacyCalls: boolean): PartPath =>
  (o, j, k) => {
    const w = o.raw as Record<string, unknown>;
    if (o.group[j]!.role === "tool") return messagePath(o);
    const fnCall = legacyCalls && o.group[j]!.role === "assistant" && typeof w.function_call === "object" && w.function_call !== null;
    return messagePath(o) + contentThenCalls(w, k, fnCall);
  };

/** Anthropic: block k, where a user message's tool_result blocks went to its tool message and the rest to its tail. */
const anthropicPart: PartPath = (o, j, k) => {
  if (o.at === "system") return typeof o.raw === "string" ? "system" : `system[${k}]`;
  const w = o.raw as { role: string; content: unknown };
  if (!Array.isArray(w.content)) return `${messagePath(o)}.content`;
  if (w.role !== "user") return `${messagePath(o)}.content[${k}]`;
  const results = o.group[j]!.role === "tool";
  let seen = -1;
  for (let b = 0; b < w.content.length; b++) {
    const block: unknown = w.content[b];
    if ((isObject(block) && block.type === "tool_result") === results && ++seen === k) return `${messagePath(o)}.content[${b}]`;
  }
  return undefined;
};

/** OpenAI Responses: walks the items of the origin (one, or a run), each making its content parts or one part of its own. */
const responsesPart: PartPath = (o, _j, k) => {
  const items = Array.isArray(o.raw) ? o.raw : [o.raw];
  let rest = k;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Record<string, unknown>;
    const where = at((o.at as number) + i);
    const c = (item.type ?? "message") === "message" ? item.content : undefined;
    if (typeof c === "string") {
      if (rest === 0) return `${where}.content`;
      rest--;
    } else if (Array.isArray(c) && c.length > 0) {
      if (rest < c.length) return `${where}.content[${rest}]`;
      rest -= c.length;
    } else if (!(Array.isArray(c) && item.role !== "assistant")) {
      // An empty assistant message item is carried whole, as one part; an empty user or system one makes none.
      if (rest === 0) return where;
      rest--;
    }
  }
  return undefined;
};

/** AI SDK: content element k; a tool message split into one canonical message per result is member j's element. */
const aiSdkPart: PartPath = (o, j, k) => {
  const w = o.raw as { role: string; content: unknown };
  if (typeof w.content === "string") return `${messagePath(o)}.content`;
  return `${messagePath(o)}.content[${w.role === "tool" && o.group.length > 1 ? j : k}]`;
};

const kPartPaths: Readonly<Record<Format, PartPath>> = {
  "openai-chat": chatLike(true),
  "openai-responses": responsesPart,
  anthropic: anthropicPart,
  "ai-sdk": aiSdkPart,
  langchain: chatLike(false),
};

/**
 * Whether `messages` are one parse's messages as it returned them, or a prefix of them: every
 * message in its untouched group, the groups of one format in input order with none left out.
 * Only then does an index into the input name the same message as an index into `messages`.
 */
function isParsedInput(messages: readonly Message[]): boolean {
  let next = 0;
  let format: Format | undefined;
  for (let i = 0; i < messages.length; ) {
    const o = originAt(messages, i);
    if (!o || (format ??= o.format) !== o.format) return false;
    if (o.at === "system") {
      if (i !== 0) return false;
    } else if (o.at !== next) return false;
    else next += o.format === "openai-responses" && Array.isArray(o.raw) ? o.raw.length : 1;
    i += o.group.length;
  }
  return true;
}

/**
 * The paths of `messages` in their input's own shape (see the module comment), or undefined
 * when they are not the messages of one parse as it returned them (a compaction's output, hand-
 * built messages): those have no input to point into. O(messages) to decide.
 */
export function inputPaths(messages: readonly Message[]): InputPaths | undefined {
  if (messages.length === 0 || !isParsedInput(messages)) return undefined;
  return (index, part) => {
    const m = messages[index]!;
    const o = originOf(m)!;
    if (part === undefined) return messagePath(o);
    return kPartPaths[o.format](o, o.group.indexOf(m), part) ?? `${messagePath(o)}.parts[${part}]`;
  };
}
