/**
 * OpenAI Chat Completions adapter: a `messages` array of the Chat Completions API to canonical
 * messages and back.
 *
 * Mapping (one wire message is one canonical message, id `m<i>`, except as noted):
 * - system, developer → role system (`developer` kept as `meta["openai-chat"].role`); user → user.
 * - assistant → assistant: content parts, then the legacy `function_call` (a ToolCallPart with the
 *   made-up id `fc_<messageId>`, marked so it renders back as `function_call`), then `tool_calls`
 *   in order (function calls and custom calls become ToolCallParts, a call of any other type an
 *   OpaquePart that renders back into `tool_calls` at its place). `refusal`, `name`, `audio` and
 *   every field ctxfold does not model stay in `meta["openai-chat"].fields`.
 * - tool → role tool with one ToolResultPart {callId: tool_call_id}; legacy `function` messages
 *   → role tool with one ToolResultPart whose callId is the id made up for the latest preceding
 *   `function_call` of that name (`fc_unknown_<messageId>` when there is none), rendered back as
 *   a function message. A tool message's own fields live on its ToolResultPart's meta, since a
 *   canonical tool message may render as several wire messages.
 * - content: a string is one text part; an array maps part by part (text → text, refusal → text
 *   marked as a refusal, image_url / input_audio / file → MediaPart whose `data` is the wire part
 *   itself, any other type → OpaquePart carrying the wire part, safe to send back unchanged). How
 *   content was written (`[]`/array, `null`, absent) is kept as a shape hint wherever the plain
 *   rendering would differ: one text part renders as a string; no part renders as `null` on an
 *   assistant message with tool calls and `""` elsewhere.
 *
 * Rendering canonical messages that came from elsewhere:
 * - Reasoning parts have no place in Chat Completions and are dropped.
 * - `isError` on a tool result is dropped: Chat Completions has no error flag (write the error
 *   into the result text if the model must see it).
 * - A tool message with several ToolResultParts renders as several tool messages; content parts
 *   of a tool message that are not results render as a user message after them; a user or
 *   system message's ToolResultParts render as tool messages in their place.
 * - OpaqueParts from another format are dropped (they are that provider's own data); MediaParts
 *   from another format render from what `mediaSource` can read out of their data, else
 *   rendering fails with E_UNKNOWN_PART, as does a tool call on a non-assistant message.
 */
import { z } from "zod";
import type { MediaPart, Message, OpaquePart, Part, ResultContentPart, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { type Adapter, extraFields, formatError, type ParseOptions, recordOrigin, type RenderOptions, reusable, schemaError, taggedUnion } from "./common.js";
import { audioFormat, audioMediaType, base64Of, dataUrlType, mediaSource, urlOf } from "./media.js";

const F = "openai-chat" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

export interface OpenAIChatTextPart { type: "text"; text: string; [key: string]: unknown }
export interface OpenAIChatRefusalPart { type: "refusal"; refusal: string; [key: string]: unknown }
export interface OpenAIChatImagePart {
  type: "image_url";
  image_url: { url: string; detail?: string; [key: string]: unknown };
  [key: string]: unknown;
}
export interface OpenAIChatAudioPart {
  type: "input_audio";
  input_audio: { data: string; format: string; [key: string]: unknown };
  [key: string]: unknown;
}
export interface OpenAIChatFilePart {
  type: "file";
  file: { file_data?: string; file_id?: string; filename?: string; [key: string]: unknown };
  [key: string]: unknown;
}
/** A content part of a type ctxfold does not know. */
export interface OpenAIChatOtherPart { type: string; [key: string]: unknown }
export type OpenAIChatContentPart =
  | OpenAIChatTextPart | OpenAIChatRefusalPart | OpenAIChatImagePart | OpenAIChatAudioPart | OpenAIChatFilePart | OpenAIChatOtherPart;
export type OpenAIChatContent = string | OpenAIChatContentPart[] | null;

export interface OpenAIChatFunctionToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string; [key: string]: unknown };
  [key: string]: unknown;
}
export interface OpenAIChatCustomToolCall {
  id: string;
  type: "custom";
  custom: { name: string; input: string; [key: string]: unknown };
  [key: string]: unknown;
}
/** A tool call of a type ctxfold does not know. */
export interface OpenAIChatOtherToolCall { type: string; [key: string]: unknown }
export type OpenAIChatToolCall = OpenAIChatFunctionToolCall | OpenAIChatCustomToolCall | OpenAIChatOtherToolCall;

export interface OpenAIChatFunctionCall { name: string; arguments: string; [key: string]: unknown }

export interface OpenAIChatSystemMessage { role: "system" | "developer"; content?: OpenAIChatContent; name?: string; [key: string]: unknown }
export interface OpenAIChatUserMessage { role: "user"; content?: OpenAIChatContent; name?: string; [key: string]: unknown }
export interface OpenAIChatAssistantMessage {
  role: "assistant";
  content?: OpenAIChatContent;
  tool_calls?: OpenAIChatToolCall[] | null;
  function_call?: OpenAIChatFunctionCall | null;
  refusal?: string | null;
  name?: string;
  audio?: { id: string; [key: string]: unknown } | null;
  [key: string]: unknown;
}
export interface OpenAIChatToolMessage { role: "tool"; tool_call_id: string; content?: OpenAIChatContent; [key: string]: unknown }
export interface OpenAIChatFunctionMessage { role: "function"; name: string; content?: OpenAIChatContent; [key: string]: unknown }
export type OpenAIChatMessage =
  | OpenAIChatSystemMessage | OpenAIChatUserMessage | OpenAIChatAssistantMessage | OpenAIChatToolMessage | OpenAIChatFunctionMessage;
export type OpenAIChatWire = OpenAIChatMessage[];

// ---------------------------------------------------------------------------------------------
// Wire schemas. Loose objects: unknown fields pass and are carried.


export const OpenAIChatTextPartSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
export const OpenAIChatRefusalPartSchema = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });
export const OpenAIChatImagePartSchema = z.looseObject({
  type: z.literal("image_url"),
  image_url: z.looseObject({ url: z.string(), detail: z.string().optional() }),
});
export const OpenAIChatAudioPartSchema = z.looseObject({
  type: z.literal("input_audio"),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
export const OpenAIChatFilePartSchema = z.looseObject({
  type: z.literal("file"),
  file: z.looseObject({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
});
export const OpenAIChatContentPartSchema = taggedUnion(new Map<string, z.ZodType>([
  ["text", OpenAIChatTextPartSchema],
  ["refusal", OpenAIChatRefusalPartSchema],
  ["image_url", OpenAIChatImagePartSchema],
  ["input_audio", OpenAIChatAudioPartSchema],
  ["file", OpenAIChatFilePartSchema],
]));
/** Content on every role: string, part array, null or absent (kept as given; the API is stricter). */
const ContentSchema = z.union([z.string(), z.array(OpenAIChatContentPartSchema)]).nullable().optional();

export const OpenAIChatFunctionToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal("function"),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export const OpenAIChatCustomToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal("custom"),
  custom: z.looseObject({ name: z.string(), input: z.string() }),
});
export const OpenAIChatToolCallSchema = taggedUnion(new Map<string, z.ZodType>([
  ["function", OpenAIChatFunctionToolCallSchema],
  ["custom", OpenAIChatCustomToolCallSchema],
]));

export const OpenAIChatSystemMessageSchema = z.looseObject({ role: z.literal("system"), content: ContentSchema, name: z.string().optional() });
export const OpenAIChatDeveloperMessageSchema = z.looseObject({ role: z.literal("developer"), content: ContentSchema, name: z.string().optional() });
export const OpenAIChatUserMessageSchema = z.looseObject({ role: z.literal("user"), content: ContentSchema, name: z.string().optional() });
export const OpenAIChatAssistantMessageSchema = z.looseObject({
  role: z.literal("assistant"),
  content: ContentSchema,
  tool_calls: z.array(OpenAIChatToolCallSchema).nullable().optional(),
  function_call: z.looseObject({ name: z.string(), arguments: z.string() }).nullable().optional(),
  refusal: z.string().nullable().optional(),
  name: z.string().optional(),
  audio: z.looseObject({ id: z.string() }).nullable().optional(),
});
export const OpenAIChatToolMessageSchema = z.looseObject({ role: z.literal("tool"), tool_call_id: z.string(), content: ContentSchema });
export const OpenAIChatFunctionMessageSchema = z.looseObject({ role: z.literal("function"), name: z.string(), content: ContentSchema });
export const OpenAIChatMessageSchema = z.discriminatedUnion("role", [
  OpenAIChatSystemMessageSchema, OpenAIChatDeveloperMessageSchema, OpenAIChatUserMessageSchema,
  OpenAIChatAssistantMessageSchema, OpenAIChatToolMessageSchema, OpenAIChatFunctionMessageSchema,
]);

const kRoleSchemas = new Map<string, z.ZodType>([
  ["system", OpenAIChatSystemMessageSchema],
  ["developer", OpenAIChatDeveloperMessageSchema],
  ["user", OpenAIChatUserMessageSchema],
  ["assistant", OpenAIChatAssistantMessageSchema],
  ["tool", OpenAIChatToolMessageSchema],
  ["function", OpenAIChatFunctionMessageSchema],
]);
/** Only run to word the error when a message is not an object with a string role. */
const kEnvelope = z.looseObject({ role: z.string() });
const kWireArray = z.array(z.unknown());

// ---------------------------------------------------------------------------------------------
// What meta["openai-chat"] holds.

/** How content was written, kept where the plain rendering would write it otherwise. */
type ContentShape = "array" | "null" | "absent";

/** `meta["openai-chat"]` on a message. */
export interface OpenAIChatMessageMeta {
  /** The wire role where it differs from the canonical one: `developer` on a system message. */
  role?: "developer";
  content?: ContentShape;
  /** Wire fields ctxfold does not model (name, refusal, audio, unknown ones), carried unchanged. */
  fields?: Record<string, unknown>;
}

/** `meta["openai-chat"]` on a part. */
export interface OpenAIChatPartMeta {
  /** A MediaPart's `data` / OpaquePart's `value` is this format's wire content part itself. */
  wire?: true;
  /** A text part written as a `refusal` content part. */
  refusal?: true;
  /** An OpaquePart that is an entry of `tool_calls` of an unknown type. */
  toolCall?: true;
  /** A ToolCallPart written as a `custom` tool call. */
  custom?: true;
  /** A ToolCallPart written as the legacy `function_call`. */
  functionCall?: true;
  /** A ToolResultPart written as a legacy `function` message. */
  function?: true;
  /** A ToolResultPart's content shape. */
  content?: ContentShape;
  /** Unknown fields of the wire object (content part, tool call, tool or function message). */
  fields?: Record<string, unknown>;
  /** Unknown fields of a tool call's `function` / `custom` object. */
  fnFields?: Record<string, unknown>;
}

const kWireMeta = Object.freeze({ [F]: Object.freeze({ wire: true }) });
const kToolCallMeta = Object.freeze({ [F]: Object.freeze({ toolCall: true }) });
const kRefusalMeta = Object.freeze({ [F]: Object.freeze({ refusal: true }) });

function messageMeta(m: Message): OpenAIChatMessageMeta | undefined {
  return m.meta[F] as OpenAIChatMessageMeta | undefined;
}

function partMeta(p: { meta?: Record<string, unknown> }): OpenAIChatPartMeta | undefined {
  return p.meta?.[F] as OpenAIChatPartMeta | undefined;
}

// ---------------------------------------------------------------------------------------------
// Parsing.

type ContentPart = TextPart | MediaPart | OpaquePart;

const kTextKeys: ReadonlySet<string> = new Set(["type", "text"]);
const kRefusalKeys: ReadonlySet<string> = new Set(["type", "refusal"]);
const kPlainKeys: ReadonlySet<string> = new Set(["role", "content"]);
const kToolKeys: ReadonlySet<string> = new Set(["role", "content", "tool_call_id"]);
const kFunctionKeys: ReadonlySet<string> = new Set(["role", "content", "name"]);
const kFunctionCallKeys: ReadonlySet<string> = new Set(["id", "type", "function"]);
const kCustomCallKeys: ReadonlySet<string> = new Set(["id", "type", "custom"]);
const kFnKeys: ReadonlySet<string> = new Set(["name", "arguments"]);
const kCustomKeys: ReadonlySet<string> = new Set(["name", "input"]);

function withMediaType(part: MediaPart, mediaType: string | undefined): MediaPart {
  if (mediaType !== undefined) part.mediaType = mediaType;
  return part;
}

function readPart(p: OpenAIChatContentPart): ContentPart {
  switch (p.type) {
    case "text": {
      const fields = extraFields(p, kTextKeys);
      const part: TextPart = { type: "text", text: (p as OpenAIChatTextPart).text };
      if (fields) part.meta = { [F]: { fields } };
      return part;
    }
    case "refusal": {
      const fields = extraFields(p, kRefusalKeys);
      return { type: "text", text: (p as OpenAIChatRefusalPart).refusal, meta: fields ? { [F]: { refusal: true, fields } } : kRefusalMeta };
    }
    case "image_url": {
      const url = (p as OpenAIChatImagePart).image_url.url;
      return withMediaType({ type: "media", data: p, meta: kWireMeta }, dataUrlType(url) ?? "image/*");
    }
    case "input_audio":
      return withMediaType({ type: "media", data: p, meta: kWireMeta }, audioMediaType((p as OpenAIChatAudioPart).input_audio.format));
    case "file":
      return withMediaType({ type: "media", data: p, meta: kWireMeta }, dataUrlType((p as OpenAIChatFilePart).file.file_data));
    default:
      return { type: "opaque", value: p, meta: kWireMeta };
  }
}

/** Content as parts, plus its shape where rendering the parts plainly would write it otherwise. */
function readContent(content: OpenAIChatContent | undefined, emptyAsNull: boolean): { parts: ContentPart[]; shape?: ContentShape } {
  if (typeof content === "string") return { parts: [{ type: "text", text: content }] };
  if (Array.isArray(content)) return { parts: content.map(readPart), shape: "array" };
  if (content === null) return emptyAsNull ? { parts: [] } : { parts: [], shape: "null" };
  return { parts: [], shape: "absent" };
}

function metaOf(value: OpenAIChatMessageMeta | OpenAIChatPartMeta): Record<string, unknown> {
  return { [F]: value };
}

/** Message meta holding what is given, `{}` when nothing is. */
function messageMetaOf(role: "developer" | undefined, shape: ContentShape | undefined, fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!role && !shape && !fields) return {};
  const cm: OpenAIChatMessageMeta = {};
  if (role) cm.role = role;
  if (shape) cm.content = shape;
  if (fields) cm.fields = fields;
  return metaOf(cm);
}

function readPlain(w: OpenAIChatSystemMessage | OpenAIChatUserMessage, id: string): Message {
  const { parts, shape } = readContent(w.content, false);
  const meta = messageMetaOf(w.role === "developer" ? "developer" : undefined, shape, extraFields(w, kPlainKeys));
  return { id, role: w.role === "user" ? "user" : "system", parts, meta };
}

function readToolCall(c: OpenAIChatToolCall): ToolCallPart | OpaquePart {
  if (c.type === "function") {
    const fc = c as OpenAIChatFunctionToolCall;
    return callPart(fc.id, fc.function.name, fc.function.arguments, false, extraFields(fc, kFunctionCallKeys), extraFields(fc.function, kFnKeys));
  }
  if (c.type === "custom") {
    const cc = c as OpenAIChatCustomToolCall;
    return callPart(cc.id, cc.custom.name, cc.custom.input, true, extraFields(cc, kCustomCallKeys), extraFields(cc.custom, kCustomKeys));
  }
  return { type: "opaque", value: c, meta: kToolCallMeta };
}

function callPart(id: string, name: string, args: string, custom: boolean, fields?: Record<string, unknown>, fnFields?: Record<string, unknown>): ToolCallPart {
  const part: ToolCallPart = { type: "tool-call", id, name, args };
  if (custom || fields || fnFields) {
    const pm: OpenAIChatPartMeta = {};
    if (custom) pm.custom = true;
    if (fields) pm.fields = fields;
    if (fnFields) pm.fnFields = fnFields;
    part.meta = metaOf(pm);
  }
  return part;
}

function readAssistant(w: OpenAIChatAssistantMessage, id: string, functionCallIds: Map<string, string>): Message {
  const calls = Array.isArray(w.tool_calls) && w.tool_calls.length > 0 ? w.tool_calls : undefined;
  const fnCall = typeof w.function_call === "object" && w.function_call !== null ? w.function_call : undefined;
  const { parts: content, shape } = readContent(w.content, calls !== undefined || fnCall !== undefined);
  const parts: Part[] = content;
  if (fnCall) {
    const callId = `fc_${id}`;
    functionCallIds.set(fnCall.name, callId);
    const fnFields = extraFields(fnCall, kFnKeys);
    parts.push({ type: "tool-call", id: callId, name: fnCall.name, args: fnCall.arguments, meta: metaOf(fnFields ? { functionCall: true, fnFields } : { functionCall: true }) });
  }
  if (calls) for (const c of calls) parts.push(readToolCall(c));
  let fields: Record<string, unknown> | undefined;
  for (const k in w) {
    if (k === "role" || k === "content" || (k === "tool_calls" && calls) || (k === "function_call" && fnCall)) continue;
    (fields ??= {})[k] = w[k];
  }
  return { id, role: "assistant", parts, meta: messageMetaOf(undefined, shape, fields) };
}

function resultPart(callId: string, content: ContentPart[], pm: OpenAIChatPartMeta | undefined, name?: string): ToolResultPart {
  const part: ToolResultPart = { type: "tool-result", callId, content: content as ResultContentPart[] };
  if (name !== undefined) part.name = name;
  if (pm) part.meta = metaOf(pm);
  return part;
}

/** A tool result's part meta, undefined when it has nothing to keep. */
function resultMetaOf(fn: boolean, shape: ContentShape | undefined, fields: Record<string, unknown> | undefined): OpenAIChatPartMeta | undefined {
  if (!fn && !shape && !fields) return undefined;
  const pm: OpenAIChatPartMeta = {};
  if (fn) pm.function = true;
  if (shape) pm.content = shape;
  if (fields) pm.fields = fields;
  return pm;
}

function readTool(w: OpenAIChatToolMessage, id: string): Message {
  const { parts, shape } = readContent(w.content, false);
  const pm = resultMetaOf(false, shape, extraFields(w, kToolKeys));
  return { id, role: "tool", parts: [resultPart(w.tool_call_id, parts, pm)], meta: {} };
}

function readFunction(w: OpenAIChatFunctionMessage, id: string, functionCallIds: Map<string, string>): Message {
  const { parts, shape } = readContent(w.content, true);
  const pm = resultMetaOf(true, shape, extraFields(w, kFunctionKeys));
  const callId = functionCallIds.get(w.name) ?? `fc_unknown_${id}`;
  return { id, role: "tool", parts: [resultPart(callId, parts, pm, w.name)], meta: {} };
}

function validate(raw: unknown, path: string, options: ParseOptions | undefined): OpenAIChatMessage {
  const role = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as { role?: unknown }).role : undefined;
  const schema = typeof role === "string" ? kRoleSchemas.get(role) : undefined;
  if (!schema) {
    if (typeof role === "string") throw formatError("E_UNKNOWN_ROLE", `unknown ${F} role ${JSON.stringify(role)}`, `${path}.role`, options);
    throw schemaError(F, kEnvelope.safeParse(raw).error!, path, options);
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw schemaError(F, r.error, path, options, raw);
  return raw as OpenAIChatMessage;
}

function parse(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw schemaError(F, kWireArray.safeParse(input).error!, "messages", options);
  const out: Message[] = [];
  const functionCallIds = new Map<string, string>();
  for (let i = 0; i < input.length; i++) {
    const raw: unknown = input[i];
    const w = validate(raw, `messages[${i}]`, options);
    const id = `m${i}`;
    let m: Message;
    switch (w.role) {
      case "assistant": m = readAssistant(w, id, functionCallIds); break;
      case "tool": m = readTool(w, id); break;
      case "function": m = readFunction(w, id, functionCallIds); break;
      default: m = readPlain(w, id);
    }
    recordOrigin(F, raw, [m]);
    out.push(m);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Media from other formats.

function unrenderable(what: string, where: string): never {
  throw formatError("E_UNKNOWN_PART", `${what} has no ${F} form`, where);
}

function foreignMedia(p: MediaPart, where: () => string): OpenAIChatContentPart {
  const s = mediaSource(p);
  if (!s) return unrenderable("a media part whose data holds no URL, base64 data or file id", where());
  const type = s.mediaType;
  if (s.fileId !== undefined) return { type: "file", file: { file_id: s.fileId, ...(s.filename ? { filename: s.filename } : {}) } };
  const format = audioFormat(type);
  const b64 = base64Of(s);
  if (format && b64 !== undefined) return { type: "input_audio", input_audio: { data: b64, format } };
  const url = urlOf(s)!;
  if (type === undefined || type.startsWith("image/")) return { type: "image_url", image_url: { url } };
  if (!url.startsWith("data:")) return unrenderable(`a ${type} media part given by URL`, where());
  return { type: "file", file: { file_data: url, ...(s.filename ? { filename: s.filename } : {}) } };
}

// ---------------------------------------------------------------------------------------------
// Rendering.

function isPlainText(p: ContentPart): p is TextPart {
  if (p.type !== "text") return false;
  const pm = partMeta(p);
  return !pm || (!pm.refusal && !pm.fields);
}

function renderPart(p: ContentPart, where: () => string): OpenAIChatContentPart | undefined {
  const pm = partMeta(p);
  switch (p.type) {
    case "text":
      if (pm?.refusal) return { type: "refusal", refusal: p.text, ...pm.fields };
      return pm?.fields ? { type: "text", text: p.text, ...pm.fields } : { type: "text", text: p.text };
    case "media":
      return pm?.wire ? (p.data as OpenAIChatContentPart) : foreignMedia(p, where);
    case "opaque":
      return pm?.wire ? (p.value as OpenAIChatContentPart) : undefined;
  }
}

function renderContent(parts: readonly ContentPart[], shape: ContentShape | undefined, empty: null | "", where: (k: number) => string): OpenAIChatContent | undefined {
  if (parts.length === 0) return shape === "absent" ? undefined : shape === "null" ? null : shape === "array" ? [] : empty;
  if (shape !== "array" && parts.length === 1 && isPlainText(parts[0])) return parts[0].text;
  const out: OpenAIChatContentPart[] = [];
  for (let k = 0; k < parts.length; k++) {
    const r = renderPart(parts[k], () => where(k));
    if (r !== undefined) out.push(r);
  }
  return out;
}

function renderToolCall(p: ToolCallPart): OpenAIChatToolCall {
  const pm = partMeta(p);
  if (pm?.custom) return { id: p.id, type: "custom", custom: { name: p.name, input: p.args, ...pm.fnFields }, ...pm.fields };
  return { id: p.id, type: "function", function: { name: p.name, arguments: p.args, ...pm?.fnFields }, ...pm?.fields };
}

function renderResult(r: ToolResultPart, where: string): OpenAIChatToolMessage | OpenAIChatFunctionMessage {
  const pm = partMeta(r);
  const at = (k: number) => `${where}.content[${k}]`;
  if (pm?.function) {
    const msg: OpenAIChatFunctionMessage = { role: "function", name: r.name ?? "" };
    const content = renderContent(r.content, pm.content, null, at);
    if (content !== undefined) msg.content = content;
    return pm.fields ? Object.assign(msg, pm.fields) : msg;
  }
  const msg = { role: "tool" } as OpenAIChatToolMessage;
  const content = renderContent(r.content, pm?.content, "", at);
  if (content !== undefined) msg.content = content;
  msg.tool_call_id = r.callId;
  return pm?.fields ? Object.assign(msg, pm.fields) : msg;
}

function renderAssistant(m: Message, i: number, out: OpenAIChatMessage[]): void {
  const cm = messageMeta(m);
  const content: ContentPart[] = [];
  const contentAt: number[] = [];
  const calls: OpenAIChatToolCall[] = [];
  const results: [ToolResultPart, number][] = [];
  let functionCall: OpenAIChatFunctionCall | undefined;
  m.parts.forEach((p, k) => {
    const pm = partMeta(p);
    switch (p.type) {
      case "text":
      case "media":
        content.push(p);
        contentAt.push(k);
        break;
      case "opaque":
        if (pm?.toolCall) calls.push(p.value as OpenAIChatToolCall);
        else if (pm?.wire) {
          content.push(p);
          contentAt.push(k);
        }
        break;
      case "tool-call":
        if (pm?.functionCall && !functionCall) functionCall = { name: p.name, arguments: p.args, ...pm.fnFields };
        else calls.push(renderToolCall(p));
        break;
      case "tool-result":
        results.push([p, k]);
        break;
      case "reasoning":
        break;
    }
  });
  const msg = { role: "assistant" } as OpenAIChatAssistantMessage;
  const hasCalls = calls.length > 0 || functionCall !== undefined;
  const c = renderContent(content, cm?.content, hasCalls ? null : "", (k) => `messages[${i}].parts[${contentAt[k]}]`);
  if (c !== undefined) msg.content = c;
  if (cm?.fields) Object.assign(msg, cm.fields);
  if (calls.length > 0) msg.tool_calls = calls;
  if (functionCall) msg.function_call = functionCall;
  out.push(msg);
  for (const [r, k] of results) out.push(renderResult(r, `messages[${i}].parts[${k}]`));
}

/**
 * A system, user or tool message: runs of content parts become messages of the role (a tool
 * message's stray content becomes a user message), tool results become tool messages in place.
 */
function renderOther(m: Message, i: number, out: OpenAIChatMessage[]): void {
  const cm = m.role === "tool" ? undefined : messageMeta(m);
  const role = m.role === "tool" ? "user" : m.role === "system" ? (cm?.role ?? "system") : "user";
  let run: ContentPart[] | undefined;
  let runAt: number[] = [];
  let first = true;
  let emitted = 0;
  const flush = () => {
    if (!run) return;
    out.push(plainMessage(role, run, first ? cm : undefined, i, runAt));
    first = false;
    emitted++;
    run = undefined;
    runAt = [];
  };
  const add = (p: ContentPart, k: number) => {
    (run ??= []).push(p);
    runAt.push(k);
  };
  m.parts.forEach((p, k) => {
    const pm = partMeta(p);
    switch (p.type) {
      case "text":
      case "media":
        add(p, k);
        break;
      case "opaque":
        if (pm?.toolCall) unrenderable(`a tool call on a ${m.role} message`, `messages[${i}].parts[${k}]`);
        if (pm?.wire) add(p, k);
        break;
      case "tool-result":
        flush();
        out.push(renderResult(p, `messages[${i}].parts[${k}]`));
        emitted++;
        break;
      case "tool-call":
        unrenderable(`a tool call on a ${m.role} message`, `messages[${i}].parts[${k}]`);
        break;
      case "reasoning":
        break;
    }
  });
  flush();
  if (emitted === 0 && m.role !== "tool") out.push(plainMessage(role, [], cm, i, []));
}

function plainMessage(role: "system" | "developer" | "user", parts: ContentPart[], cm: OpenAIChatMessageMeta | undefined, i: number, at: number[]): OpenAIChatMessage {
  const msg = { role } as OpenAIChatSystemMessage | OpenAIChatUserMessage;
  const content = renderContent(parts, cm?.content, "", (k) => `messages[${i}].parts[${at[k]}]`);
  if (content !== undefined) msg.content = content;
  return cm?.fields ? Object.assign(msg, cm.fields) : msg;
}

function render(messages: readonly Message[], options?: RenderOptions): OpenAIChatWire {
  const out: OpenAIChatMessage[] = [];
  const reuse = options?.reuse !== false;
  for (let i = 0; i < messages.length; i++) {
    if (reuse) {
      const r = reusable(messages, i, F);
      if (r) {
        out.push(r.raw as OpenAIChatMessage);
        i += r.length - 1;
        continue;
      }
    }
    const m = messages[i];
    if (m.role === "assistant") renderAssistant(m, i, out);
    else renderOther(m, i, out);
  }
  return out;
}

/** The OpenAI Chat Completions adapter (see the module comment for every mapping decision). */
export const openaiChatAdapter: Adapter<OpenAIChatWire> = { format: F, parse, render };
