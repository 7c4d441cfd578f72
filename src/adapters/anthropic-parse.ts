/**
 * Parsing an Anthropic Messages request (`{ system?, messages }` or a bare messages array) into
 * canonical messages (the mapping is in anthropic.ts).
 */
import type { MediaPart, Message, Part, ReasoningPart, ResultContentPart, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { extraFields, formatError, isObject, type ParseOptions, rawArgsOf, recordOrigin, schemaError, shownRole } from "./common.js";
import { fieldsMeta, textPart } from "./meta.js";
import {
  type AnthropicBlock,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicMessageMeta,
  AnthropicMessageSchema,
  type AnthropicPartMeta,
  type AnthropicRedactedThinkingBlock,
  type AnthropicSystem,
  AnthropicSystemSchema,
  type AnthropicTextBlock,
  type AnthropicThinkingBlock,
  type AnthropicToolResultBlock,
  type AnthropicToolResultContent,
  type AnthropicToolUseBlock,
  anthropicMeta,
  F,
  isPlain,
  kWireArray,
} from "./anthropic-wire.js";

const kOpaqueMeta = anthropicMeta.frozen({ wire: true });
const kNativeMeta = anthropicMeta.frozen({ native: true });

const kMessageKeys: ReadonlySet<string> = new Set(["role", "content"]);
const kTextKeys: ReadonlySet<string> = new Set(["type", "text"]);
const kMediaKeys: ReadonlySet<string> = new Set(["type", "source"]);
const kToolUseKeys: ReadonlySet<string> = new Set(["type", "id", "name", "input"]);
const kToolResultKeys: ReadonlySet<string> = new Set(["type", "tool_use_id", "content", "is_error"]);
const kThinkingKeys: ReadonlySet<string> = new Set(["type", "thinking", "signature"]);
const kRedactedKeys: ReadonlySet<string> = new Set(["type", "data"]);

function readText(b: AnthropicTextBlock): TextPart {
  return textPart(F, b.text, extraFields(b, kTextKeys));
}

function readMedia(b: AnthropicImageBlock | AnthropicDocumentBlock): MediaPart {
  const part: MediaPart = { type: "media", data: b.source };
  if (typeof b.source.media_type === "string") part.mediaType = b.source.media_type;
  const fields = extraFields(b, kMediaKeys);
  const pm: AnthropicPartMeta = { type: b.type };
  if (fields) pm.fields = fields;
  part.meta = anthropicMeta.of(pm);
  return part;
}

function readResultContent(b: AnthropicToolResultContent): ResultContentPart {
  switch (b.type) {
    case "text":
      return readText(b as AnthropicTextBlock);
    case "image":
    case "document":
      return readMedia(b as AnthropicImageBlock);
    default:
      return { type: "opaque", value: b, meta: kOpaqueMeta };
  }
}

function readResult(b: AnthropicToolResultBlock, names: ReadonlyMap<string, string>): ToolResultPart {
  const c = b.content;
  let content: ResultContentPart[];
  let array = false;
  if (typeof c === "string") content = [{ type: "text", text: c }];
  else if (c === undefined) content = [];
  else {
    content = c.map(readResultContent);
    array = content.length === 0 || (content.length === 1 && isPlain(content[0]));
  }
  const part: ToolResultPart = { type: "tool-result", callId: b.tool_use_id, content };
  const name = names.get(b.tool_use_id);
  if (name !== undefined) part.name = name;
  if (b.is_error !== undefined) part.isError = b.is_error;
  const fields = extraFields(b, kToolResultKeys);
  if (array || fields) {
    const pm: AnthropicPartMeta = {};
    if (array) pm.content = "array";
    if (fields) pm.fields = fields;
    part.meta = anthropicMeta.of(pm);
  }
  return part;
}

function readToolUse(b: AnthropicToolUseBlock, names: Map<string, string>): ToolCallPart {
  names.set(b.id, b.name);
  const part: ToolCallPart = { type: "tool-call", id: b.id, name: b.name, args: rawArgsOf(b.input) };
  const meta = fieldsMeta(F, extraFields(b, kToolUseKeys));
  if (meta) part.meta = meta;
  return part;
}

function reasoningMeta(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  return fields ? anthropicMeta.of({ native: true, fields }) : kNativeMeta;
}

function readBlock(b: AnthropicBlock, names: Map<string, string>): Part {
  switch (b.type) {
    case "text":
      return readText(b as AnthropicTextBlock);
    case "image":
    case "document":
      return readMedia(b as AnthropicImageBlock);
    case "tool_use":
      return readToolUse(b as AnthropicToolUseBlock, names);
    case "tool_result":
      return readResult(b as AnthropicToolResultBlock, names);
    case "thinking": {
      const t = b as AnthropicThinkingBlock;
      const part: ReasoningPart = { type: "reasoning", text: t.thinking };
      if (t.signature !== undefined) part.signature = t.signature;
      part.meta = reasoningMeta(extraFields(t, kThinkingKeys));
      return part;
    }
    case "redacted_thinking":
      return { type: "reasoning", redacted: (b as AnthropicRedactedThinkingBlock).data, meta: reasoningMeta(extraFields(b, kRedactedKeys)) };
    default:
      return { type: "opaque", value: b, meta: kOpaqueMeta };
  }
}

function contentMeta(array: boolean, fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!array && !fields) return {};
  const cm: AnthropicMessageMeta = {};
  if (array) cm.content = "array";
  if (fields) cm.fields = fields;
  return anthropicMeta.of(cm);
}

/**
 * The canonical messages of one wire message: one, or a tool message and a `tail` user message
 * when a user message mixes tool results with other blocks.
 */
function readMessage(w: AnthropicMessage, i: number, names: Map<string, string>): Message[] {
  const fields = extraFields(w, kMessageKeys);
  if (typeof w.content === "string") {
    return [{ id: `m${i}`, role: w.role, parts: [{ type: "text", text: w.content }], meta: contentMeta(false, fields) }];
  }
  const blocks = w.content;
  const parts: Part[] = [];
  let results: ToolResultPart[] | undefined;
  let order = "";
  for (let k = 0; k < blocks.length; k++) {
    const part = readBlock(blocks[k], names);
    if (part.type === "tool-result" && w.role === "user") {
      (results ??= []).push(part);
      order += "r";
    } else {
      parts.push(part);
      order += "o";
    }
  }
  if (!results) {
    const array = parts.length === 1 && isPlain(parts[0]);
    return [{ id: `m${i}`, role: w.role, parts, meta: contentMeta(array, fields) }];
  }
  const cm: AnthropicMessageMeta = { blocks: order };
  if (fields) cm.fields = fields;
  if (parts.length === 0) return [{ id: `m${i}`, role: "tool", parts: results, meta: anthropicMeta.of(cm) }];
  return [
    { id: `m${i}.0`, role: "tool", parts: results, meta: anthropicMeta.of(cm) },
    { id: `m${i}.1`, role: "user", parts, meta: anthropicMeta.of({ tail: true }) },
  ];
}

function readSystem(system: AnthropicSystem, afterMessages: boolean): Message {
  let parts: Part[];
  let array = false;
  if (typeof system === "string") parts = [{ type: "text", text: system }];
  else {
    parts = system.map((b): Part => (b.type === "text" ? readText(b as AnthropicTextBlock) : { type: "opaque", value: b, meta: kOpaqueMeta }));
    array = parts.length === 1 && isPlain(parts[0]);
  }
  const meta: Record<string, unknown> = {};
  if (array || afterMessages) {
    const cm: AnthropicMessageMeta = {};
    if (array) cm.content = "array";
    if (afterMessages) cm.afterMessages = true;
    meta[F] = cm;
  }
  return { id: "system", role: "system", parts, meta };
}

function validate(raw: unknown, path: string, options: ParseOptions | undefined): AnthropicMessage {
  const r = AnthropicMessageSchema.safeParse(raw);
  if (r.success) return raw as AnthropicMessage;
  const role = typeof raw === "object" && raw !== null ? (raw as { role?: unknown }).role : undefined;
  if (typeof role === "string" && role !== "user" && role !== "assistant") {
    const why = role === "system" ? " (system text goes in the `system` parameter)" : "";
    throw formatError("E_UNKNOWN_ROLE", `unknown ${F} role ${shownRole(role)}${why}`, `${path}.role`, options);
  }
  throw schemaError(F, r.error, path, options, raw);
}

/** The messages array and system value of a request object or a bare array. */
function unwrap(input: unknown, options: ParseOptions | undefined): { messages: unknown[]; system: unknown; afterMessages: boolean } {
  if (Array.isArray(input)) return { messages: input, system: undefined, afterMessages: false };
  if (!isObject(input)) throw formatError("E_SCHEMA", `not a valid ${F} request: expected { system?, messages } or an array of messages`, "messages", options);
  const messages = input.messages;
  if (!Array.isArray(messages)) throw schemaError(F, kWireArray.safeParse(messages).error!, "messages", options);
  let afterMessages = false;
  if (input.system !== undefined) {
    for (const k in input) {
      if (k === "messages") break;
      if (k === "system") return { messages, system: input.system, afterMessages: false };
    }
    afterMessages = true;
  }
  return { messages, system: input.system, afterMessages };
}

/**
 * Parses `{ system?, messages }` (or a bare messages array) into canonical messages: the system
 * message first (id `system`), then `m<i>` / `m<i>.<k>` per wire message.
 */
export function parseAnthropic(input: unknown, options?: ParseOptions): Message[] {
  const { messages, system, afterMessages } = unwrap(input, options);
  const out: Message[] = [];
  if (system !== undefined) {
    const r = AnthropicSystemSchema.safeParse(system);
    if (!r.success) throw schemaError(F, r.error, "system", options, system);
    const m = readSystem(system as AnthropicSystem, afterMessages);
    recordOrigin(F, system, [m], "system");
    out.push(m);
  }
  const names = new Map<string, string>();
  for (let i = 0; i < messages.length; i++) {
    const raw = messages[i];
    const group = readMessage(validate(raw, `messages[${i}]`, options), i, names);
    recordOrigin(F, raw, group, i);
    for (const m of group) out.push(m);
  }
  return out;
}
