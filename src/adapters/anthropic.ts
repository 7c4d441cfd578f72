/**
 * Anthropic Messages adapter: the `system` parameter and `messages` of a Messages API request
 * to canonical messages and back.
 *
 * Input is `{ system?, messages }` or a bare `messages` array; other request fields (model,
 * max_tokens, tools...) are not read, and render always returns `{ system?, messages }` (the
 * caller spreads it into its request). `system` is written only when there is a system message.
 *
 * Mapping:
 * - `system` (a string or text blocks) → one canonical system message with id `system`, first.
 * - Each wire message → one canonical message `m<i>` of its role, except a user message holding
 *   tool_result blocks: its results become ONE canonical tool message (one ToolResultPart each)
 *   and its other blocks, if any, a canonical user message after it (`m<i>.0`, `m<i>.1`, one
 *   origin group). The tool message's meta keeps the wire block order, so a rebuild writes the
 *   one wire message back exactly.
 * - Blocks: text → TextPart (citations, cache_control and unknown fields in the part's
 *   `meta.anthropic.fields`, as for every block); image / document → MediaPart {data: the
 *   `source`, mediaType: its media_type}; tool_use → ToolCallPart (args: the raw text kept on
 *   `input` under kRawArgs, else its JSON); tool_result → ToolResultPart (content: a string is
 *   one text part, absent is none; is_error → isError; name taken from the matching tool_use
 *   earlier in the conversation); thinking → ReasoningPart {text, signature};
 *   redacted_thinking → ReasoningPart {redacted}; any other type (server_tool_use,
 *   web_search_tool_result, search_result, ...) → OpaquePart carrying the block, sent back as it
 *   is. tool_use `input` may be any JSON value (the API wants an object; anything else is kept so
 *   arguments that are JSON but not an object survive a round trip).
 * - Fields of a wire message besides role and content stay in its canonical message's
 *   `meta.anthropic.fields` (the tool message's, for a split one). Roles other than user and
 *   assistant are E_UNKNOWN_ROLE (`system` belongs in the `system` parameter).
 * - Shape hints: content written as an array where the plain rendering would write a string
 *   (one text part without Anthropic fields) or, for a tool result, leave it out (no part) is
 *   kept as `content: "array"`.
 *
 * Rendering canonical messages that came from elsewhere:
 * - System messages at the start become the `system` parameter (a string for one message of one
 *   text part, else text blocks of all of them); a system message after any other message has no
 *   place in a request and fails with E_BAD_INPUT; a system part that is not text fails with
 *   E_UNKNOWN_PART (an OpaquePart of another format is dropped).
 * - Consecutive tool messages without an Anthropic hint merge into ONE user message of
 *   tool_result blocks (the API wants every result of a turn in the next user message); parse
 *   gives back one tool message holding all those results.
 * - One text part renders as a string content; otherwise blocks in part order (an assistant
 *   message of text and calls is [text, tool_use...]). A result with one text part renders
 *   `content` as a string (`""` included: the API has been seen to reject an empty tool result,
 *   and always rejects one with is_error, but it is written as given), none leaves `content` out.
 * - Reasoning parts from another format render only when signed (a thinking block needs its
 *   signature; redacted data from another provider would be rejected), else they are dropped;
 *   OpaqueParts from another format are dropped; MediaParts from another format render from
 *   what `mediaSource` reads out of them (images and PDF / text documents), else E_UNKNOWN_PART.
 */
import { z } from "zod";
import type { MediaPart, Message, Part, ReasoningPart, ResultContentPart, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { type Adapter, argsObject, extraFields, formatError, type ParseOptions, rawArgsOf, recordOrigin, type RenderOptions, reusable, schemaError, taggedUnion } from "./common.js";
import { base64Of, mediaSource } from "./media.js";

const F = "anthropic" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

export interface AnthropicTextBlock { type: "text"; text: string; cache_control?: unknown; citations?: unknown[] | null; [key: string]: unknown }
/** An image or document `source`: base64, url, file, text or content. */
export interface AnthropicSource { type: string; media_type?: string; data?: unknown; url?: string; file_id?: string; [key: string]: unknown }
export interface AnthropicImageBlock { type: "image"; source: AnthropicSource; [key: string]: unknown }
export interface AnthropicDocumentBlock { type: "document"; source: AnthropicSource; title?: string | null; context?: string | null; [key: string]: unknown }
export interface AnthropicToolUseBlock { type: "tool_use"; id: string; name: string; input: unknown; [key: string]: unknown }
/** A block of a type ctxfold does not know (server_tool_use, web_search_tool_result, ...). */
export interface AnthropicOtherBlock { type: string; [key: string]: unknown }
export type AnthropicToolResultContent = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicOtherBlock;
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | AnthropicToolResultContent[];
  is_error?: boolean;
  [key: string]: unknown;
}
export interface AnthropicThinkingBlock { type: "thinking"; thinking: string; signature?: string; [key: string]: unknown }
export interface AnthropicRedactedThinkingBlock { type: "redacted_thinking"; data: string; [key: string]: unknown }
export type AnthropicBlock =
  | AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicToolUseBlock | AnthropicToolResultBlock
  | AnthropicThinkingBlock | AnthropicRedactedThinkingBlock | AnthropicOtherBlock;

export interface AnthropicMessage { role: "user" | "assistant"; content: string | AnthropicBlock[]; [key: string]: unknown }
export type AnthropicSystem = string | (AnthropicTextBlock | AnthropicOtherBlock)[];
/** What this adapter reads and writes of a Messages API request. */
export interface AnthropicWire { system?: AnthropicSystem; messages: AnthropicMessage[] }

// ---------------------------------------------------------------------------------------------
// Wire schemas. Loose objects: unknown fields pass and are carried.

export const AnthropicTextBlockSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
export const AnthropicSourceSchema = z.looseObject({ type: z.string() });
export const AnthropicImageBlockSchema = z.looseObject({ type: z.literal("image"), source: AnthropicSourceSchema });
export const AnthropicDocumentBlockSchema = z.looseObject({ type: z.literal("document"), source: AnthropicSourceSchema });
export const AnthropicToolUseBlockSchema = z.looseObject({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.unknown() });
export const AnthropicToolResultContentSchema = taggedUnion(new Map<string, z.ZodType>([
  ["text", AnthropicTextBlockSchema],
  ["image", AnthropicImageBlockSchema],
  ["document", AnthropicDocumentBlockSchema],
]));
export const AnthropicToolResultBlockSchema = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(AnthropicToolResultContentSchema)]).optional(),
  is_error: z.boolean().optional(),
});
export const AnthropicThinkingBlockSchema = z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().optional() });
export const AnthropicRedactedThinkingBlockSchema = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });
export const AnthropicBlockSchema = taggedUnion(new Map<string, z.ZodType>([
  ["text", AnthropicTextBlockSchema],
  ["image", AnthropicImageBlockSchema],
  ["document", AnthropicDocumentBlockSchema],
  ["tool_use", AnthropicToolUseBlockSchema],
  ["tool_result", AnthropicToolResultBlockSchema],
  ["thinking", AnthropicThinkingBlockSchema],
  ["redacted_thinking", AnthropicRedactedThinkingBlockSchema],
]));
export const AnthropicMessageSchema = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(AnthropicBlockSchema)]),
});
/** The API takes text blocks only; blocks of other types are carried as they are. */
export const AnthropicSystemSchema = z.union([z.string(), z.array(taggedUnion(new Map<string, z.ZodType>([["text", AnthropicTextBlockSchema]])))]);
/** A whole `{ system?, messages }` request (parse checks one message at a time instead). */
export const AnthropicWireSchema = z.looseObject({ system: AnthropicSystemSchema.optional(), messages: z.array(AnthropicMessageSchema) });

const kWireArray = z.array(z.unknown());

// ---------------------------------------------------------------------------------------------
// What meta.anthropic holds.

/** `meta.anthropic` on a message. */
export interface AnthropicMessageMeta {
  /** Content was a block array where the plain rendering would write a string. */
  content?: "array";
  /** Fields of the wire message besides role and content, carried unchanged. */
  fields?: Record<string, unknown>;
  /**
   * On a tool message: the block order of the wire user message it came from, one letter a
   * block: `r` the next of its results, `o` the next part of the `tail` user message after it.
   * A tool message with this hint is one wire message and is never merged with its neighbours.
   */
  blocks?: string;
  /** On a user message: the non-result blocks of the wire message the tool message before it came from. */
  tail?: true;
  /** On the system message: `system` came after `messages` in the request object. */
  afterMessages?: true;
}

/** `meta.anthropic` on a part. */
export interface AnthropicPartMeta {
  /** Wire fields not modelled by the canonical part: cache_control, citations, caller, unknown ones. */
  fields?: Record<string, unknown>;
  /** On a tool result: content was an array where the plain rendering would write a string or nothing. */
  content?: "array";
  /** On a MediaPart: the wire block type (its `data` is the block's `source`). */
  type?: "image" | "document";
  /** On a ReasoningPart: parsed from an Anthropic thinking block (so it renders even unsigned). */
  native?: true;
  /** On an OpaquePart: its value is an Anthropic block, safe to send back. */
  wire?: true;
}

const kOpaqueMeta = Object.freeze({ [F]: Object.freeze({ wire: true }) });
const kNativeMeta = Object.freeze({ [F]: Object.freeze({ native: true }) });

function messageMeta(m: Message): AnthropicMessageMeta | undefined {
  return m.meta[F] as AnthropicMessageMeta | undefined;
}

function partMeta(p: { meta?: Record<string, unknown> }): AnthropicPartMeta | undefined {
  return p.meta?.[F] as AnthropicPartMeta | undefined;
}

// ---------------------------------------------------------------------------------------------
// Parsing.

const kMessageKeys: ReadonlySet<string> = new Set(["role", "content"]);
const kTextKeys: ReadonlySet<string> = new Set(["type", "text"]);
const kMediaKeys: ReadonlySet<string> = new Set(["type", "source"]);
const kToolUseKeys: ReadonlySet<string> = new Set(["type", "id", "name", "input"]);
const kToolResultKeys: ReadonlySet<string> = new Set(["type", "tool_use_id", "content", "is_error"]);
const kThinkingKeys: ReadonlySet<string> = new Set(["type", "thinking", "signature"]);
const kRedactedKeys: ReadonlySet<string> = new Set(["type", "data"]);

function fieldsMeta(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return fields ? { [F]: { fields } } : undefined;
}

function readText(b: AnthropicTextBlock): TextPart {
  const part: TextPart = { type: "text", text: b.text };
  const meta = fieldsMeta(extraFields(b, kTextKeys));
  if (meta) part.meta = meta;
  return part;
}

function readMedia(b: AnthropicImageBlock | AnthropicDocumentBlock): MediaPart {
  const part: MediaPart = { type: "media", data: b.source };
  if (typeof b.source.media_type === "string") part.mediaType = b.source.media_type;
  const fields = extraFields(b, kMediaKeys);
  const pm: AnthropicPartMeta = { type: b.type };
  if (fields) pm.fields = fields;
  part.meta = { [F]: pm };
  return part;
}

function readResultContent(b: AnthropicToolResultContent): ResultContentPart {
  switch (b.type) {
    case "text": return readText(b as AnthropicTextBlock);
    case "image":
    case "document": return readMedia(b as AnthropicImageBlock);
    default: return { type: "opaque", value: b, meta: kOpaqueMeta };
  }
}

/** Whether a part renders as a plain string where the format allows one. */
function isPlainText(p: Part): p is TextPart {
  return p.type === "text" && partMeta(p) === undefined;
}

function readResult(b: AnthropicToolResultBlock, names: ReadonlyMap<string, string>): ToolResultPart {
  const c = b.content;
  let content: ResultContentPart[];
  let array = false;
  if (typeof c === "string") content = [{ type: "text", text: c }];
  else if (c === undefined) content = [];
  else {
    content = c.map(readResultContent);
    array = content.length === 0 || (content.length === 1 && isPlainText(content[0]));
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
    part.meta = { [F]: pm };
  }
  return part;
}

function readToolUse(b: AnthropicToolUseBlock, names: Map<string, string>): ToolCallPart {
  names.set(b.id, b.name);
  const part: ToolCallPart = { type: "tool-call", id: b.id, name: b.name, args: rawArgsOf(b.input) };
  const meta = fieldsMeta(extraFields(b, kToolUseKeys));
  if (meta) part.meta = meta;
  return part;
}

function reasoningMeta(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  return fields ? { [F]: { native: true, fields } } : kNativeMeta;
}

function readBlock(b: AnthropicBlock, names: Map<string, string>): Part {
  switch (b.type) {
    case "text": return readText(b as AnthropicTextBlock);
    case "image":
    case "document": return readMedia(b as AnthropicImageBlock);
    case "tool_use": return readToolUse(b as AnthropicToolUseBlock, names);
    case "tool_result": return readResult(b as AnthropicToolResultBlock, names);
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
  return { [F]: cm };
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
    const array = parts.length === 1 && isPlainText(parts[0]);
    return [{ id: `m${i}`, role: w.role, parts, meta: contentMeta(array, fields) }];
  }
  const cm: AnthropicMessageMeta = { blocks: order };
  if (fields) cm.fields = fields;
  if (parts.length === 0) return [{ id: `m${i}`, role: "tool", parts: results, meta: { [F]: cm } }];
  return [
    { id: `m${i}.0`, role: "tool", parts: results, meta: { [F]: cm } },
    { id: `m${i}.1`, role: "user", parts, meta: { [F]: { tail: true } } },
  ];
}

function readSystem(system: AnthropicSystem, afterMessages: boolean): Message {
  let parts: Part[];
  let array = false;
  if (typeof system === "string") parts = [{ type: "text", text: system }];
  else {
    parts = system.map((b): Part => (b.type === "text" ? readText(b as AnthropicTextBlock) : { type: "opaque", value: b, meta: kOpaqueMeta }));
    array = parts.length === 1 && isPlainText(parts[0]);
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
    throw formatError("E_UNKNOWN_ROLE", `unknown ${F} role ${JSON.stringify(role)}${why}`, `${path}.role`, options);
  }
  throw schemaError(F, r.error, path, options, raw);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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
function parse(input: unknown, options?: ParseOptions): Message[] {
  const { messages, system, afterMessages } = unwrap(input, options);
  const out: Message[] = [];
  if (system !== undefined) {
    const r = AnthropicSystemSchema.safeParse(system);
    if (!r.success) throw schemaError(F, r.error, "system", options, system);
    const m = readSystem(system as AnthropicSystem, afterMessages);
    recordOrigin(F, system, [m]);
    out.push(m);
  }
  const names = new Map<string, string>();
  for (let i = 0; i < messages.length; i++) {
    const raw = messages[i];
    const group = readMessage(validate(raw, `messages[${i}]`, options), i, names);
    recordOrigin(F, raw, group);
    for (const m of group) out.push(m);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rendering.

/** Copies `fields` onto `block` without overwriting what the canonical part set. */
function withFields<T extends Record<string, unknown>>(block: T, fields: Record<string, unknown> | undefined): T {
  if (fields) for (const k in fields) if (!(k in block)) (block as Record<string, unknown>)[k] = fields[k];
  return block;
}

function unrenderable(what: string, where: string): never {
  throw formatError("E_UNKNOWN_PART", `${what} has no ${F} form`, where);
}

function documentType(mediaType: string): boolean {
  return mediaType === "application/pdf" || mediaType.startsWith("text/");
}

/** An image or document block for a MediaPart of another format, from what `mediaSource` reads. */
function foreignMedia(p: MediaPart, where: () => string): AnthropicImageBlock | AnthropicDocumentBlock {
  const s = mediaSource(p);
  if (!s) return unrenderable("a media part whose data holds no URL, base64 data or file id", where());
  const mediaType = s.mediaType;
  const document = mediaType !== undefined && documentType(mediaType);
  if (mediaType !== undefined && !document && !mediaType.startsWith("image/")) return unrenderable(`a ${mediaType} media part`, where());
  let source: AnthropicSource;
  const b64 = base64Of(s);
  if (s.fileId !== undefined) source = { type: "file", file_id: s.fileId };
  else if (b64 !== undefined) source = mediaType !== undefined ? { type: "base64", media_type: mediaType, data: b64 } : { type: "base64", data: b64 };
  else if (s.url !== undefined && !s.url.startsWith("data:")) source = { type: "url", url: s.url };
  else return unrenderable("a media part whose data URL is not base64", where());
  return document ? { type: "document", source } : { type: "image", source };
}

function renderReasoning(p: ReasoningPart): AnthropicBlock | undefined {
  const pm = partMeta(p);
  if (p.text === undefined && p.redacted !== undefined) {
    return pm?.native ? withFields({ type: "redacted_thinking", data: p.redacted }, pm.fields) : undefined;
  }
  if (!pm?.native && p.signature === undefined) return undefined;
  const block: AnthropicThinkingBlock = { type: "thinking", thinking: p.text ?? "" };
  if (p.signature !== undefined) block.signature = p.signature;
  return withFields(block, pm?.fields);
}

function renderResultContent(parts: readonly ResultContentPart[], pm: AnthropicPartMeta | undefined, where: (k: number) => string): string | AnthropicToolResultContent[] | undefined {
  if (pm?.content !== "array") {
    if (parts.length === 0) return undefined;
    if (parts.length === 1 && isPlainText(parts[0])) return parts[0].text;
  }
  const out: AnthropicToolResultContent[] = [];
  for (let k = 0; k < parts.length; k++) {
    const b = renderBlock(parts[k], () => where(k));
    if (b !== undefined) out.push(b);
  }
  return out;
}

function renderResult(p: ToolResultPart, where: () => string): AnthropicToolResultBlock {
  const pm = partMeta(p);
  const block: AnthropicToolResultBlock = { type: "tool_result", tool_use_id: p.callId };
  const content = renderResultContent(p.content, pm, (k) => `${where()}.content[${k}]`);
  if (content !== undefined) block.content = content;
  if (p.isError !== undefined) block.is_error = p.isError;
  return withFields(block, pm?.fields);
}

/** The wire block of one part; undefined for a part of another format that Anthropic cannot take. */
function renderBlock(p: Part, where: () => string): AnthropicBlock | undefined {
  const pm = partMeta(p);
  switch (p.type) {
    case "text": return withFields({ type: "text", text: p.text }, pm?.fields);
    case "tool-call": return withFields({ type: "tool_use", id: p.id, name: p.name, input: argsObject(p.args) }, pm?.fields);
    case "tool-result": return renderResult(p, where);
    case "reasoning": return renderReasoning(p);
    case "media": return pm?.type ? withFields({ type: pm.type, source: p.data as AnthropicSource }, pm.fields) : foreignMedia(p, where);
    case "opaque": return pm?.wire ? (p.value as AnthropicBlock) : undefined;
    default: return unrenderable(`a part of type ${JSON.stringify((p as { type: unknown }).type)}`, where());
  }
}

function renderBlocks(parts: readonly Part[], i: number, out: AnthropicBlock[]): AnthropicBlock[] {
  for (let k = 0; k < parts.length; k++) {
    const b = renderBlock(parts[k], () => `messages[${i}].parts[${k}]`);
    if (b !== undefined) out.push(b);
  }
  return out;
}

function wireMessage(role: "user" | "assistant", content: string | AnthropicBlock[], fields: Record<string, unknown> | undefined): AnthropicMessage {
  return withFields({ role, content }, fields);
}

function renderPlain(m: Message, role: "user" | "assistant", i: number): AnthropicMessage {
  const cm = messageMeta(m);
  const parts = m.parts;
  const content = cm?.content !== "array" && !cm?.tail && parts.length === 1 && isPlainText(parts[0]) ? parts[0].text : renderBlocks(parts, i, []);
  return wireMessage(role, content, cm?.fields);
}

/**
 * A tool message parsed from Anthropic, with the tail user message after it if there is one:
 * their blocks interleaved as the `blocks` hint says, leftovers after.
 */
function renderSplit(tool: Message, order: string, tail: Message | undefined, i: number): AnthropicMessage {
  const out: AnthropicBlock[] = [];
  const rs = tool.parts;
  const os = tail ? tail.parts : [];
  let r = 0;
  let o = 0;
  const push = (p: Part, at: number, k: number) => {
    const b = renderBlock(p, () => `messages[${at}].parts[${k}]`);
    if (b !== undefined) out.push(b);
  };
  for (let c = 0; c < order.length; c++) {
    if (order.charCodeAt(c) === 114 /* r */) {
      if (r < rs.length) push(rs[r], i, r++);
    } else if (o < os.length) push(os[o], i + 1, o++);
  }
  while (r < rs.length) push(rs[r], i, r++);
  while (o < os.length) push(os[o], i + 1, o++);
  return wireMessage("user", out, messageMeta(tool)?.fields);
}

/** Renders the tool message(s) at `i` into `out`; returns the index after them. */
function renderTool(messages: readonly Message[], i: number, out: AnthropicMessage[]): number {
  const order = messageMeta(messages[i])?.blocks;
  if (typeof order === "string") {
    const next = messages[i + 1];
    const tail = next !== undefined && next.role === "user" && messageMeta(next)?.tail ? next : undefined;
    out.push(renderSplit(messages[i], order, tail, i));
    return tail ? i + 2 : i + 1;
  }
  const blocks: AnthropicBlock[] = [];
  let j = i;
  while (j < messages.length && messages[j].role === "tool" && typeof messageMeta(messages[j])?.blocks !== "string") {
    renderBlocks(messages[j].parts, j, blocks);
    j++;
  }
  out.push({ role: "user", content: blocks });
  return j;
}

function renderSystem(m: Message, i: number): AnthropicSystem {
  const cm = messageMeta(m);
  const parts = m.parts;
  if (cm?.content !== "array" && parts.length === 1 && isPlainText(parts[0])) return parts[0].text;
  const out: (AnthropicTextBlock | AnthropicOtherBlock)[] = [];
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    if (p.type === "text") out.push(withFields({ type: "text", text: p.text }, partMeta(p)?.fields));
    else if (p.type === "opaque" && partMeta(p)?.wire) out.push(p.value as AnthropicOtherBlock);
    else if (p.type !== "opaque") {
      throw formatError("E_UNKNOWN_PART", `a ${p.type} part in a system message: the ${F} system parameter takes text blocks only`, `messages[${i}].parts[${k}]`);
    }
  }
  return out;
}

/** Several system values as one: text blocks of them all, in order. */
function joinSystem(values: AnthropicSystem[]): AnthropicSystem | undefined {
  if (values.length <= 1) return values[0];
  const out: (AnthropicTextBlock | AnthropicOtherBlock)[] = [];
  for (const v of values) {
    if (typeof v === "string") out.push({ type: "text", text: v });
    else for (const b of v) out.push(b);
  }
  return out;
}

/**
 * Renders canonical messages as `{ system?, messages }`, handing back the parsed wire object
 * for every untouched message (see the module comment for the mapping).
 */
function render(messages: readonly Message[], options?: RenderOptions): AnthropicWire {
  const reuse = options?.reuse !== false;
  const out: AnthropicMessage[] = [];
  const systems: AnthropicSystem[] = [];
  let afterMessages = false;
  for (let i = 0; i < messages.length;) {
    const m = messages[i];
    const r = reuse ? reusable(messages, i, F) : undefined;
    if (m.role === "system") {
      if (out.length > 0) {
        throw formatError("E_BAD_INPUT", `a system message after the conversation started: ${F} takes system text only as the \`system\` parameter`, `messages[${i}]`);
      }
      systems.push(r ? (r.raw as AnthropicSystem) : renderSystem(m, i));
      if (messageMeta(m)?.afterMessages) afterMessages = true;
      i++;
    } else if (r) {
      out.push(r.raw as AnthropicMessage);
      i += r.length;
    } else if (m.role === "tool") {
      i = renderTool(messages, i, out);
    } else if (m.role === "user" || m.role === "assistant") {
      out.push(renderPlain(m, m.role, i));
      i++;
    } else {
      throw formatError("E_UNKNOWN_ROLE", `unknown canonical role ${JSON.stringify((m as { role: unknown }).role)}`, `messages[${i}].role`);
    }
  }
  const system = joinSystem(systems);
  if (system === undefined) return { messages: out };
  return afterMessages ? { messages: out, system } : { system, messages: out };
}

/** The Anthropic Messages adapter (see the module comment for every mapping decision). */
export const anthropicAdapter: Adapter<AnthropicWire> = { format: F, parse, render };

