/**
 * OpenAI Responses adapter: an `input` item array of the Responses API to canonical messages
 * and back.
 *
 * Mapping:
 * - A user, system or developer message item (with or without `type: "message"`) is one
 *   canonical message (developer → system, kept as `meta["openai-responses"].role`).
 * - A run of consecutive model-side items (reasoning, assistant message, function_call,
 *   custom_tool_call, and unknown model-side items) is ONE canonical assistant message, so an
 *   assistant turn of text plus parallel calls comes back as the one message it was. A run holds
 *   at most one assistant message item: an assistant message item or a reasoning item that
 *   follows a message item or a call starts the next message (reasoning opens a turn, calls
 *   close it), which gives consecutive canonical assistant messages of OpenAI Chat shape back
 *   one by one. What the items cannot tell apart: an assistant message with neither text nor
 *   reasoning (calls only) right after another assistant message reads back as part of it, as
 *   does any assistant message after one holding neither text nor calls.
 * - Each function_call_output / custom_tool_call_output is one canonical tool message with one
 *   ToolResultPart.
 * - reasoning → ReasoningPart: the summary texts (joined by a blank line) as `text`,
 *   `encrypted_content` as `redacted`, id / content / status / unknown fields in meta.
 * - function_call → ToolCallPart {id: call_id, args: arguments}; item id, status and unknown
 *   fields in the part's meta.
 * - Content: a string is one text part; input_text / output_text / refusal parts are text parts
 *   (their wire type and annotations / logprobs / unknown fields in meta), input_image /
 *   input_file / input_audio MediaParts whose `data` is the wire part, other types OpaqueParts
 *   carrying the wire part.
 * - Unknown item types are carried whole as an OpaquePart (`meta.item`), sent back unchanged:
 *   client-side ones (`*_output`, `*_response`: computer_call_output, mcp_approval_response...)
 *   as a canonical tool message of their own; model-side ones (`*_call`, `mcp_*`:
 *   web_search_call, mcp_list_tools...) inside the run of model-side items they sit in; any
 *   other (item_reference, which may point at either side's item, and future types) as a
 *   canonical assistant message of its own, never merged with its neighbours. An assistant
 *   message item with empty array content is carried the same way, whole, in its run.
 * - Ids are `m<i>`, i the wire index of the message's first item: Responses ids belong to
 *   items, not to canonical messages, and stay in meta. The origin of a run of several items is
 *   the array of those items; render spreads it.
 *
 * Rendering canonical messages that came from elsewhere: one text part renders as the
 * `{ role, content: "..." }` easy-message form; several parts as input_text parts (output_text
 * with empty annotations on assistant messages); text, calls, results and reasoning render as
 * items in part order (a tool message's stray content as a user message item). Reasoning parts
 * from another format are dropped (the API takes back only its own reasoning items), as are
 * OpaqueParts from another format; `isError` on a result is dropped (no error flag on the
 * wire); MediaParts from another format render from what `mediaSource` reads out of them,
 * else rendering fails with E_UNKNOWN_PART, as does a tool call on a non-assistant message.
 */
import { z } from "zod";
import type { MediaPart, Message, OpaquePart, Part, ReasoningPart, ResultContentPart, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { type Adapter, extraFields, formatError, type ParseOptions, recordOrigin, type RenderOptions, reusable, schemaError, taggedUnion } from "./common.js";
import { audioFormat, audioMediaType, base64Of, dataUrlType, mediaSource, urlOf } from "./media.js";

const R = "openai-responses" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

export interface OpenAIResponsesInputText { type: "input_text"; text: string; [key: string]: unknown }
export interface OpenAIResponsesOutputText { type: "output_text"; text: string; annotations?: unknown[]; logprobs?: unknown[]; [key: string]: unknown }
export interface OpenAIResponsesRefusal { type: "refusal"; refusal: string; [key: string]: unknown }
export interface OpenAIResponsesInputImage { type: "input_image"; image_url?: string | null; file_id?: string | null; detail?: string; [key: string]: unknown }
export interface OpenAIResponsesInputFile { type: "input_file"; file_data?: string; file_id?: string | null; file_url?: string; filename?: string; [key: string]: unknown }
export interface OpenAIResponsesInputAudio { type: "input_audio"; input_audio: { data: string; format: string; [key: string]: unknown }; [key: string]: unknown }
/** A content part of a type ctxfold does not know. */
export interface OpenAIResponsesOtherPart { type: string; [key: string]: unknown }
export type OpenAIResponsesContentPart =
  | OpenAIResponsesInputText | OpenAIResponsesOutputText | OpenAIResponsesRefusal
  | OpenAIResponsesInputImage | OpenAIResponsesInputFile | OpenAIResponsesInputAudio | OpenAIResponsesOtherPart;

export interface OpenAIResponsesMessageItem {
  type?: "message";
  role: "user" | "assistant" | "system" | "developer";
  content: string | OpenAIResponsesContentPart[];
  id?: string;
  status?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesFunctionCall {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  id?: string;
  status?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesFunctionCallOutput {
  type: "function_call_output";
  call_id: string;
  output: string | OpenAIResponsesContentPart[];
  id?: string | null;
  status?: string | null;
  [key: string]: unknown;
}
export interface OpenAIResponsesCustomToolCall { type: "custom_tool_call"; call_id: string; name: string; input: string; id?: string; [key: string]: unknown }
export interface OpenAIResponsesCustomToolCallOutput {
  type: "custom_tool_call_output";
  call_id: string;
  output: string | OpenAIResponsesContentPart[];
  id?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesReasoning {
  type: "reasoning";
  id?: string;
  summary: { type: string; text: string; [key: string]: unknown }[];
  encrypted_content?: string | null;
  content?: { type: string; text: string; [key: string]: unknown }[];
  status?: string;
  [key: string]: unknown;
}
/** An item of a type ctxfold does not model (web_search_call, item_reference, ...). */
export interface OpenAIResponsesOtherItem { type: string; [key: string]: unknown }
export type OpenAIResponsesItem =
  | OpenAIResponsesMessageItem | OpenAIResponsesFunctionCall | OpenAIResponsesFunctionCallOutput | OpenAIResponsesCustomToolCall
  | OpenAIResponsesCustomToolCallOutput | OpenAIResponsesReasoning | OpenAIResponsesOtherItem;
export type OpenAIResponsesWire = OpenAIResponsesItem[];

// ---------------------------------------------------------------------------------------------
// Wire schemas. Loose objects: unknown fields pass and are carried.

export const OpenAIResponsesContentPartSchema = taggedUnion(new Map<string, z.ZodType>([
  ["input_text", z.looseObject({ type: z.literal("input_text"), text: z.string() })],
  ["output_text", z.looseObject({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()).optional(), logprobs: z.array(z.unknown()).nullable().optional() })],
  ["refusal", z.looseObject({ type: z.literal("refusal"), refusal: z.string() })],
  ["input_image", z.looseObject({ type: z.literal("input_image"), image_url: z.string().nullable().optional(), file_id: z.string().nullable().optional(), detail: z.string().optional() })],
  ["input_file", z.looseObject({ type: z.literal("input_file"), file_data: z.string().optional(), file_id: z.string().nullable().optional(), file_url: z.string().optional(), filename: z.string().optional() })],
  ["input_audio", z.looseObject({ type: z.literal("input_audio"), input_audio: z.looseObject({ data: z.string(), format: z.string() }) })],
]));
const ContentSchema = z.union([z.string(), z.array(OpenAIResponsesContentPartSchema)]);

export const OpenAIResponsesMessageItemSchema = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: ContentSchema,
  id: z.string().optional(),
  status: z.string().optional(),
});
export const OpenAIResponsesFunctionCallSchema = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
});
export const OpenAIResponsesFunctionCallOutputSchema = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string(),
  output: ContentSchema,
  id: z.string().nullable().optional(),
  status: z.string().nullable().optional(),
});
export const OpenAIResponsesCustomToolCallSchema = z.looseObject({
  type: z.literal("custom_tool_call"),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
  id: z.string().optional(),
});
export const OpenAIResponsesCustomToolCallOutputSchema = z.looseObject({
  type: z.literal("custom_tool_call_output"),
  call_id: z.string(),
  output: ContentSchema,
  id: z.string().optional(),
});
export const OpenAIResponsesReasoningSchema = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string().optional(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })),
  encrypted_content: z.string().nullable().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string() })).optional(),
  status: z.string().optional(),
});
export const OpenAIResponsesOtherItemSchema = z.looseObject({ type: z.string() });

const kItemSchemas = new Map<string, z.ZodType>([
  ["message", OpenAIResponsesMessageItemSchema],
  ["function_call", OpenAIResponsesFunctionCallSchema],
  ["function_call_output", OpenAIResponsesFunctionCallOutputSchema],
  ["custom_tool_call", OpenAIResponsesCustomToolCallSchema],
  ["custom_tool_call_output", OpenAIResponsesCustomToolCallOutputSchema],
  ["reasoning", OpenAIResponsesReasoningSchema],
]);
/** Any input item: known types checked against their schema, other types passed as they are. */
export const OpenAIResponsesItemSchema = z.union([OpenAIResponsesMessageItemSchema, taggedUnion(kItemSchemas)]);

const kRoles: ReadonlySet<string> = new Set(["user", "assistant", "system", "developer"]);
/** Only run to word the error when an item is not an object with a usable `type`. */
const kEnvelope = z.looseObject({ type: z.string().optional() });
const kWireArray = z.array(z.unknown());

// ---------------------------------------------------------------------------------------------
// What meta["openai-responses"] holds.

/** `meta["openai-responses"]` on a message: its (first) message item. */
export interface OpenAIResponsesMessageMeta {
  /** The wire role where it differs from the canonical one: `developer` on a system message. */
  role?: "developer";
  /** The message item's content was an array. */
  content?: "array";
  /** Fields of the message item ctxfold does not model (type, id, status, unknown ones). */
  fields?: Record<string, unknown>;
}

/** `meta["openai-responses"]` on a part. Its presence on a ReasoningPart marks it as this format's own. */
export interface OpenAIResponsesPartMeta {
  /** A text part's wire content part type (input_text, output_text, refusal): rendered exactly so. */
  type?: string;
  /** A MediaPart's `data` / OpaquePart's `value` is this format's wire content part itself. */
  wire?: true;
  /** An OpaquePart's `value` is a whole input item. */
  item?: true;
  /** A ToolCallPart / ToolResultPart written as custom_tool_call / custom_tool_call_output. */
  custom?: true;
  /** A ToolResultPart's output was an array. */
  output?: "array";
  /** A ReasoningPart's summary array, where its text alone would not give it back. */
  summary?: OpenAIResponsesReasoning["summary"];
  /** Unknown fields of the wire object (content part, call, output or reasoning item). */
  fields?: Record<string, unknown>;
}

const frozenMeta = (value: OpenAIResponsesPartMeta) => Object.freeze({ [R]: Object.freeze(value) });
const kWireMeta = frozenMeta({ wire: true });
const kItemMeta = frozenMeta({ item: true });
const kOwnMeta = frozenMeta({});
const kTextMeta = new Map(["input_text", "output_text", "refusal"].map((t) => [t, frozenMeta({ type: t })]));

function messageMeta(m: Message): OpenAIResponsesMessageMeta | undefined {
  return m.meta[R] as OpenAIResponsesMessageMeta | undefined;
}

function partMeta(p: { meta?: Record<string, unknown> }): OpenAIResponsesPartMeta | undefined {
  return p.meta?.[R] as OpenAIResponsesPartMeta | undefined;
}

function metaOf(value: OpenAIResponsesMessageMeta | OpenAIResponsesPartMeta): Record<string, unknown> {
  return { [R]: value };
}

// ---------------------------------------------------------------------------------------------
// Parsing.

type ContentPart = TextPart | MediaPart | OpaquePart;

const kTextKeys: ReadonlySet<string> = new Set(["type", "text"]);
const kRefusalKeys: ReadonlySet<string> = new Set(["type", "refusal"]);
const kMessageKeys: ReadonlySet<string> = new Set(["role", "content"]);
const kCallKeys: ReadonlySet<string> = new Set(["type", "call_id", "name", "arguments"]);
const kCustomCallKeys: ReadonlySet<string> = new Set(["type", "call_id", "name", "input"]);
const kOutputKeys: ReadonlySet<string> = new Set(["type", "call_id", "output"]);
const kReasoningKeys: ReadonlySet<string> = new Set(["type", "summary", "encrypted_content"]);

function withMediaType(part: MediaPart, mediaType: string | undefined): MediaPart {
  if (mediaType !== undefined) part.mediaType = mediaType;
  return part;
}

function readPart(p: OpenAIResponsesContentPart): ContentPart {
  switch (p.type) {
    case "input_text":
    case "output_text": {
      const fields = extraFields(p, kTextKeys);
      return { type: "text", text: (p as OpenAIResponsesInputText).text, meta: fields ? metaOf({ type: p.type, fields }) : kTextMeta.get(p.type)! };
    }
    case "refusal": {
      const fields = extraFields(p, kRefusalKeys);
      return { type: "text", text: (p as OpenAIResponsesRefusal).refusal, meta: fields ? metaOf({ type: "refusal", fields }) : kTextMeta.get("refusal")! };
    }
    case "input_image": {
      const url = (p as OpenAIResponsesInputImage).image_url;
      return withMediaType({ type: "media", data: p, meta: kWireMeta }, dataUrlType(url ?? undefined) ?? "image/*");
    }
    case "input_file":
      return withMediaType({ type: "media", data: p, meta: kWireMeta }, dataUrlType((p as OpenAIResponsesInputFile).file_data));
    case "input_audio":
      return withMediaType({ type: "media", data: p, meta: kWireMeta }, audioMediaType((p as OpenAIResponsesInputAudio).input_audio.format));
    default:
      return { type: "opaque", value: p, meta: kWireMeta };
  }
}

function readContent(content: string | OpenAIResponsesContentPart[]): { parts: ContentPart[]; array: boolean } {
  return typeof content === "string" ? { parts: [{ type: "text", text: content }], array: false } : { parts: content.map(readPart), array: true };
}

/** The message meta of a message item, undefined when it has nothing to keep. */
function messageItemMeta(item: OpenAIResponsesMessageItem, array: boolean): OpenAIResponsesMessageMeta | undefined {
  const fields = extraFields(item, kMessageKeys);
  const developer = item.role === "developer";
  if (!fields && !developer && !array) return undefined;
  const mm: OpenAIResponsesMessageMeta = {};
  if (developer) mm.role = "developer";
  if (array) mm.content = "array";
  if (fields) mm.fields = fields;
  return mm;
}

function readCall(item: OpenAIResponsesFunctionCall | OpenAIResponsesCustomToolCall): ToolCallPart {
  const custom = item.type === "custom_tool_call";
  const args = custom ? (item as OpenAIResponsesCustomToolCall).input : (item as OpenAIResponsesFunctionCall).arguments;
  const fields = extraFields(item, custom ? kCustomCallKeys : kCallKeys);
  const part: ToolCallPart = { type: "tool-call", id: item.call_id, name: item.name, args };
  if (custom || fields) part.meta = metaOf(custom ? (fields ? { custom: true, fields } : { custom: true }) : { fields });
  return part;
}

function readOutput(item: OpenAIResponsesFunctionCallOutput | OpenAIResponsesCustomToolCallOutput): ToolResultPart {
  const { parts, array } = readContent(item.output);
  const fields = extraFields(item, kOutputKeys);
  const custom = item.type === "custom_tool_call_output";
  const part: ToolResultPart = { type: "tool-result", callId: item.call_id, content: parts as ResultContentPart[] };
  if (custom || array || fields) {
    const pm: OpenAIResponsesPartMeta = {};
    if (custom) pm.custom = true;
    if (array) pm.output = "array";
    if (fields) pm.fields = fields;
    part.meta = metaOf(pm);
  }
  return part;
}

function joinSummary(summary: readonly { text: string }[]): string | undefined {
  return summary.length === 0 ? undefined : summary.map((s) => s.text).join("\n\n");
}

/** Whether a summary is what its joined text renders back to by default. */
function plainSummary(summary: OpenAIResponsesReasoning["summary"]): boolean {
  if (summary.length === 0) return true;
  if (summary.length > 1) return false;
  const s = summary[0]!;
  if (s.type !== "summary_text") return false;
  for (const k in s) if (k !== "type" && k !== "text") return false;
  return true;
}

function readReasoning(item: OpenAIResponsesReasoning): ReasoningPart {
  const part: ReasoningPart = { type: "reasoning" };
  const text = joinSummary(item.summary);
  if (text !== undefined) part.text = text;
  const encrypted = typeof item.encrypted_content === "string" ? item.encrypted_content : undefined;
  if (encrypted !== undefined) part.redacted = encrypted;
  let fields = extraFields(item, kReasoningKeys);
  if (item.encrypted_content !== undefined && encrypted === undefined) (fields ??= {}).encrypted_content = item.encrypted_content;
  const plain = plainSummary(item.summary);
  if (!fields && plain) part.meta = kOwnMeta;
  else {
    const pm: OpenAIResponsesPartMeta = {};
    if (!plain) pm.summary = item.summary;
    if (fields) pm.fields = fields;
    part.meta = metaOf(pm);
  }
  return part;
}

/** Where an item of a type ctxfold does not model goes. */
function sideOf(type: string): "client" | "model" | "alone" {
  if (type.endsWith("_output") || type.endsWith("_response")) return "client";
  if (type.endsWith("_call") || type.startsWith("mcp_")) return "model";
  return "alone";
}

function validateItem(raw: unknown, path: string, options: ParseOptions | undefined): OpenAIResponsesItem {
  const isObj = typeof raw === "object" && raw !== null && !Array.isArray(raw);
  const type = isObj ? (raw as { type?: unknown }).type : undefined;
  if (!isObj || (type !== undefined && typeof type !== "string")) throw schemaError(R, kEnvelope.safeParse(raw).error!, path, options);
  const kind = type ?? "message";
  if (kind === "message") {
    const role = (raw as { role?: unknown }).role;
    if (typeof role === "string" && !kRoles.has(role)) throw formatError("E_UNKNOWN_ROLE", `unknown ${R} role ${JSON.stringify(role)}`, `${path}.role`, options);
  }
  const r = (kItemSchemas.get(kind as string) ?? OpenAIResponsesOtherItemSchema).safeParse(raw);
  if (!r.success) throw schemaError(R, r.error, path, options, raw);
  return raw as OpenAIResponsesItem;
}

/** A run of model-side items being gathered into one canonical assistant message. */
interface Run {
  start: number;
  parts: Part[];
  /** It holds an assistant message item / a call: the next message item or reasoning starts a new run. */
  message: boolean;
  call: boolean;
  meta?: OpenAIResponsesMessageMeta;
}

class Parser {
  readonly out: Message[] = [];
  private run: Run | undefined;

  constructor(private readonly input: readonly unknown[]) {}

  /** The open run, after closing the current one at `i` when `fresh` says it is done. */
  runAt(i: number, fresh: boolean): Run {
    if (this.run && fresh && (this.run.message || this.run.call)) this.close(i);
    return (this.run ??= { start: i, parts: [], message: false, call: false });
  }

  close(end: number): void {
    const run = this.run;
    if (!run) return;
    this.run = undefined;
    const m: Message = { id: `m${run.start}`, role: "assistant", parts: run.parts, meta: run.meta ? metaOf(run.meta) : {} };
    recordOrigin(R, end - run.start === 1 ? this.input[run.start] : this.input.slice(run.start, end), [m]);
    this.out.push(m);
  }

  /** A canonical message of its own, made from the one item at `i`. */
  alone(i: number, role: Message["role"], parts: Part[], meta?: OpenAIResponsesMessageMeta): void {
    this.close(i);
    const m: Message = { id: `m${i}`, role, parts, meta: meta ? metaOf(meta) : {} };
    recordOrigin(R, this.input[i], [m]);
    this.out.push(m);
  }

  item(item: OpenAIResponsesItem, i: number): void {
    switch (item.type ?? "message") {
      case "message": return this.message(item as OpenAIResponsesMessageItem, i);
      case "function_call":
      case "custom_tool_call": {
        const run = this.runAt(i, false);
        run.parts.push(readCall(item as OpenAIResponsesFunctionCall | OpenAIResponsesCustomToolCall));
        run.call = true;
        return;
      }
      case "reasoning":
        this.runAt(i, true).parts.push(readReasoning(item as OpenAIResponsesReasoning));
        return;
      case "function_call_output":
      case "custom_tool_call_output":
        return this.alone(i, "tool", [readOutput(item as OpenAIResponsesFunctionCallOutput)]);
    }
    const opaque: OpaquePart = { type: "opaque", value: item, meta: kItemMeta };
    const side = sideOf(item.type as string);
    if (side === "model") this.runAt(i, false).parts.push(opaque);
    else this.alone(i, side === "client" ? "tool" : "assistant", [opaque]);
  }

  message(item: OpenAIResponsesMessageItem, i: number): void {
    if (item.role !== "assistant") {
      const { parts, array } = readContent(item.content);
      return this.alone(i, item.role === "user" ? "user" : "system", parts, messageItemMeta(item, array));
    }
    if (Array.isArray(item.content) && item.content.length === 0) {
      this.runAt(i, false).parts.push({ type: "opaque", value: item, meta: kItemMeta });
      return;
    }
    const run = this.runAt(i, true);
    const { parts, array } = readContent(item.content);
    for (const p of parts) run.parts.push(p);
    run.message = true;
    run.meta = messageItemMeta(item, array);
  }
}

function parse(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw schemaError(R, kWireArray.safeParse(input).error!, "messages", options);
  const parser = new Parser(input);
  for (let i = 0; i < input.length; i++) parser.item(validateItem(input[i], `messages[${i}]`, options), i);
  parser.close(input.length);
  return parser.out;
}

// ---------------------------------------------------------------------------------------------
// Rendering.

function unrenderable(what: string, where: string): never {
  throw formatError("E_UNKNOWN_PART", `${what} has no ${R} form`, where);
}

function foreignMedia(p: MediaPart, where: () => string): OpenAIResponsesContentPart {
  const s = mediaSource(p);
  if (!s) return unrenderable("a media part whose data holds no URL, base64 data or file id", where());
  const type = s.mediaType;
  const image = type === undefined || type.startsWith("image/");
  const named = s.filename !== undefined ? { filename: s.filename } : {};
  if (s.fileId !== undefined) return image ? { type: "input_image", file_id: s.fileId, detail: "auto" } : { type: "input_file", file_id: s.fileId, ...named };
  const format = audioFormat(type);
  const b64 = base64Of(s);
  if (format && b64 !== undefined) return { type: "input_audio", input_audio: { data: b64, format } };
  const url = urlOf(s)!;
  if (image) return { type: "input_image", image_url: url, detail: "auto" };
  return url.startsWith("data:") ? { type: "input_file", file_data: url, ...named } : { type: "input_file", file_url: url, ...named };
}

function renderPart(p: ContentPart, assistant: boolean, where: () => string): OpenAIResponsesContentPart | undefined {
  const pm = partMeta(p);
  switch (p.type) {
    case "text":
      if (pm?.type === "refusal") return { type: "refusal", refusal: p.text, ...pm.fields };
      if (pm?.type) return { type: pm.type, text: p.text, ...pm.fields };
      return assistant ? { type: "output_text", text: p.text, annotations: [] } : { type: "input_text", text: p.text };
    case "media":
      return pm?.wire ? (p.data as OpenAIResponsesContentPart) : foreignMedia(p, where);
    case "opaque":
      return pm?.wire ? (p.value as OpenAIResponsesContentPart) : undefined;
  }
}

function renderContent(parts: readonly ContentPart[], array: boolean, assistant: boolean, where: (k: number) => string): string | OpenAIResponsesContentPart[] {
  if (parts.length === 0) return array ? [] : "";
  if (!array && parts.length === 1 && parts[0].type === "text" && !partMeta(parts[0])) return parts[0].text;
  const out: OpenAIResponsesContentPart[] = [];
  for (let k = 0; k < parts.length; k++) {
    const r = renderPart(parts[k], assistant, () => where(k));
    if (r !== undefined) out.push(r);
  }
  return out;
}

function renderCall(p: ToolCallPart): OpenAIResponsesFunctionCall | OpenAIResponsesCustomToolCall {
  const pm = partMeta(p);
  if (pm?.custom) return { type: "custom_tool_call", call_id: p.id, name: p.name, input: p.args, ...pm.fields };
  return { type: "function_call", call_id: p.id, name: p.name, arguments: p.args, ...pm?.fields };
}

function renderOutput(r: ToolResultPart, where: string): OpenAIResponsesFunctionCallOutput | OpenAIResponsesCustomToolCallOutput {
  const pm = partMeta(r);
  const output = renderContent(r.content, pm?.output === "array", false, (k) => `${where}.content[${k}]`);
  if (pm?.custom) return { type: "custom_tool_call_output", call_id: r.callId, output, ...pm.fields };
  return { type: "function_call_output", call_id: r.callId, output, ...pm?.fields };
}

function renderReasoning(p: ReasoningPart, pm: OpenAIResponsesPartMeta): OpenAIResponsesReasoning {
  const summary = pm.summary && joinSummary(pm.summary) === p.text ? pm.summary : p.text === undefined ? [] : [{ type: "summary_text", text: p.text }];
  const item: OpenAIResponsesReasoning = { type: "reasoning", ...pm.fields, summary };
  if (p.redacted !== undefined) item.encrypted_content = p.redacted;
  return item;
}

type WireRole = OpenAIResponsesMessageItem["role"];

function messageItem(role: WireRole, parts: readonly ContentPart[], mm: OpenAIResponsesMessageMeta | undefined, where: (k: number) => string): OpenAIResponsesMessageItem {
  const item = (mm?.fields ? { ...mm.fields } : {}) as OpenAIResponsesMessageItem;
  item.role = role;
  item.content = renderContent(parts, mm?.content === "array", role === "assistant", where);
  return item;
}

/**
 * One canonical message as items, in part order: runs of content parts become message items
 * (the message's own meta on the first), calls, results, own reasoning and carried items their
 * items. A user, system or assistant message that yields no item still yields an empty message.
 */
function renderMessage(m: Message, i: number, out: OpenAIResponsesItem[]): void {
  const mm = m.role === "tool" ? undefined : messageMeta(m);
  const role: WireRole = m.role === "tool" ? "user" : m.role === "system" ? (mm?.role ?? "system") : m.role;
  let run: ContentPart[] | undefined;
  let runAt: number[] = [];
  let first = true;
  let emitted = 0;
  const at = (k: number) => `messages[${i}].parts[${k}]`;
  const flush = () => {
    if (!run) return;
    const indices = runAt;
    out.push(messageItem(role, run, first ? mm : undefined, (k) => at(indices[k]!)));
    first = false;
    emitted++;
    run = undefined;
    runAt = [];
  };
  const push = (item: OpenAIResponsesItem) => {
    flush();
    out.push(item);
    emitted++;
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
        return add(p, k);
      case "opaque":
        if (pm?.item) push(p.value as OpenAIResponsesItem);
        else if (pm?.wire) add(p, k);
        return;
      case "tool-call":
        if (m.role !== "assistant") unrenderable(`a tool call on a ${m.role} message`, at(k));
        return push(renderCall(p));
      case "tool-result":
        return push(renderOutput(p, at(k)));
      case "reasoning":
        if (pm) push(renderReasoning(p, pm));
        return;
    }
  });
  flush();
  if (emitted === 0 && m.role !== "tool") out.push(messageItem(role, [], mm, at));
}

function render(messages: readonly Message[], options?: RenderOptions): OpenAIResponsesWire {
  const out: OpenAIResponsesItem[] = [];
  const reuse = options?.reuse !== false;
  for (let i = 0; i < messages.length; i++) {
    if (reuse) {
      const r = reusable(messages, i, R);
      if (r) {
        if (Array.isArray(r.raw)) for (const item of r.raw) out.push(item as OpenAIResponsesItem);
        else out.push(r.raw as OpenAIResponsesItem);
        i += r.length - 1;
        continue;
      }
    }
    renderMessage(messages[i], i, out);
  }
  return out;
}

/** The OpenAI Responses adapter (see the module comment for every mapping decision). */
export const openaiResponsesAdapter: Adapter<OpenAIResponsesWire> = { format: R, parse, render };
