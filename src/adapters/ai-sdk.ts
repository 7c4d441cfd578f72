/**
 * The Vercel AI SDK adapter: `ModelMessage[]` of AI SDK 5 (the `messages` of generateText /
 * streamText), also reading the `CoreMessage` field names of AI SDK 4.
 *
 * Decisions (where the SDK leaves a choice):
 * - Versions. AI SDK 4 wrote tool-call `args`, tool-result `result` (+ `isError`,
 *   `experimental_content`), image/file `mimeType`, reasoning `signature` and a
 *   `redacted-reasoning` part; AI SDK 5 writes `input`, `output: { type, value }`, `mediaType`
 *   and keeps the Anthropic signature in `providerOptions.anthropic`. Both parse; every part
 *   renders back in the version it was parsed in (a hint in its meta). Canonical parts from other
 *   formats render as AI SDK 5.
 * - Tool messages. One wire tool message may hold several results; parse makes one canonical
 *   tool message per part (ids `m<i>.<k>` when there are several) and marks the later ones
 *   `joinPrev`, so a rebuild merges them back. Canonical tool messages without that hint (every
 *   other format's) render one wire message each: consecutive tool messages are never merged.
 * - Tool results. `text` / `error-text` become one text part, `json` / `error-json` one text part
 *   holding the JSON (hint `output: "json"`, so the same value renders back while the text still
 *   parses), `content` its items, an unknown output type an opaque part. `isError` is set by the
 *   `error-*` types. A canonical result with several text parts and `isError` renders as
 *   `error-text` of the texts joined by "\n"; with non-text parts it renders as `content` and the
 *   error flag is lost (AI SDK 5 has no error form for rich content).
 * - Tool names. `toolName` is required by the SDK; a canonical result without a name takes the
 *   name of the matching call earlier in the conversation (scanned back by call id), else
 *   "unknown". Such an invented name is marked on the wire part (a non-enumerable symbol, like
 *   kRawArgs), and parse drops a name so marked: an in-memory round trip gives back a result
 *   without a name, so no other format gains one. A JSON round trip keeps the name.
 * - System messages hold a string in the SDK: several canonical text parts are joined with "\n";
 *   opaque parts there are dropped and any other part is E_UNKNOWN_PART at render.
 * - Reasoning. `signature` / `redacted` of the canonical part are read from
 *   `providerOptions.anthropic.signature` / `.redactedData` (or AI SDK 4's `signature` /
 *   `redacted-reasoning`); the wire fields stay in meta and render back unchanged. A canonical
 *   part from another format renders its signature / redacted data in those same
 *   `providerOptions.anthropic` fields, which is where the SDK's Anthropic provider reads them;
 *   nothing is invented when the canonical part has none.
 * - Unknown part types (AI SDK 6's tool approvals, provider extensions), result items and
 *   tool-result output types are carried as opaque parts (meta `wire: true`) and rendered back
 *   unchanged. Opaque parts from other formats are dropped: they are that provider's own data.
 * - Media parts render back as the image / file part they were. A media part from another format
 *   renders as an image part (a file part when its media type is not `image/*`) holding the
 *   base64 text or URL that openai-chat's `mediaSource` reads out of its data, else the data as is.
 * - Unknown roles are E_UNKNOWN_ROLE: the canonical model has no place for them.
 */
import { z } from "zod";
import type { MediaPart, Message, Meta, OpaquePart, Part, ReasoningPart, ResultContentPart, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { type Adapter, argsObject, extraFields, formatError, type ParseOptions, rawArgsOf, recordOrigin, type RenderOptions, reusable, schemaError, taggedUnion } from "./common.js";
import { base64Of, mediaSource } from "./media.js";

const F = "ai-sdk" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

/** `providerOptions`: provider name to that provider's options. */
export type AiSdkProviderOptions = Record<string, Record<string, unknown>>;

interface Loose {
  [key: string]: unknown;
}

export interface AiSdkTextPart extends Loose {
  type: "text";
  text: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkImagePart extends Loose {
  type: "image";
  image: unknown;
  mediaType?: string;
  /** AI SDK 4. */
  mimeType?: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkFilePart extends Loose {
  type: "file";
  data: unknown;
  filename?: string;
  mediaType?: string;
  /** AI SDK 4. */
  mimeType?: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkReasoningPart extends Loose {
  type: "reasoning";
  text: string;
  /** AI SDK 4. */
  signature?: string;
  providerOptions?: AiSdkProviderOptions;
}
/** AI SDK 4 only. */
export interface AiSdkRedactedReasoningPart extends Loose {
  type: "redacted-reasoning";
  data: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkToolCallPart extends Loose {
  type: "tool-call";
  toolCallId: string;
  toolName: string;
  /** AI SDK 5: any JSON value. */
  input?: unknown;
  /** AI SDK 4. */
  args?: unknown;
  providerExecuted?: boolean;
  providerOptions?: AiSdkProviderOptions;
}
/** An item of a `content` tool output (AI SDK 5) or of `experimental_content` (AI SDK 4). */
export type AiSdkResultItem =
  | (Loose & { type: "text"; text: string })
  | (Loose & { type: "media"; data: unknown; mediaType?: string })
  | (Loose & { type: "image"; data: unknown; mimeType?: string; mediaType?: string })
  | (Loose & { type: string });
export type AiSdkToolResultOutput =
  | (Loose & { type: "text" | "error-text"; value: string })
  | (Loose & { type: "json" | "error-json"; value: unknown })
  | (Loose & { type: "content"; value: AiSdkResultItem[] })
  | (Loose & { type: string });
export interface AiSdkToolResultPart extends Loose {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  /** AI SDK 5. */
  output?: AiSdkToolResultOutput;
  /** AI SDK 4. */
  result?: unknown;
  /** AI SDK 4. */
  isError?: boolean;
  /** AI SDK 4. */
  experimental_content?: AiSdkResultItem[];
  providerOptions?: AiSdkProviderOptions;
}
/** A part whose type this adapter does not model, carried unchanged. */
export interface AiSdkOtherPart extends Loose {
  type: string;
}
export type AiSdkPart =
  | AiSdkTextPart
  | AiSdkImagePart
  | AiSdkFilePart
  | AiSdkReasoningPart
  | AiSdkRedactedReasoningPart
  | AiSdkToolCallPart
  | AiSdkToolResultPart
  | AiSdkOtherPart;

export interface AiSdkSystemMessage extends Loose {
  role: "system";
  content: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkUserMessage extends Loose {
  role: "user";
  content: string | AiSdkPart[];
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkAssistantMessage extends Loose {
  role: "assistant";
  content: string | AiSdkPart[];
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkToolMessage extends Loose {
  role: "tool";
  content: AiSdkPart[];
  providerOptions?: AiSdkProviderOptions;
}
export type AiSdkMessage = AiSdkSystemMessage | AiSdkUserMessage | AiSdkAssistantMessage | AiSdkToolMessage;
export type AiSdkWire = AiSdkMessage[];

// ---------------------------------------------------------------------------------------------
// Wire schemas: loose objects (unknown fields pass), one safeParse per message.

export const AiSdkProviderOptionsSchema = z.record(z.string(), z.record(z.string(), z.unknown()));
const po = AiSdkProviderOptionsSchema.optional();
/** A union tagged by `type`: known tags checked, other tags pass (they become opaque parts). */
const byType = (schemas: Record<string, z.ZodType>) => taggedUnion(new Map(Object.entries(schemas)));

export const AiSdkResultItemSchema = byType({
  text: z.looseObject({ type: z.literal("text"), text: z.string() }),
  media: z.looseObject({ type: z.literal("media"), data: z.unknown(), mediaType: z.string().optional() }),
  image: z.looseObject({ type: z.literal("image"), data: z.unknown(), mimeType: z.string().optional(), mediaType: z.string().optional() }),
});

export const AiSdkToolResultOutputSchema = byType({
  text: z.looseObject({ type: z.literal("text"), value: z.string() }),
  "error-text": z.looseObject({ type: z.literal("error-text"), value: z.string() }),
  json: z.looseObject({ type: z.literal("json"), value: z.unknown() }),
  "error-json": z.looseObject({ type: z.literal("error-json"), value: z.unknown() }),
  content: z.looseObject({ type: z.literal("content"), value: z.array(AiSdkResultItemSchema) }),
});

export const AiSdkPartSchema = byType({
  text: z.looseObject({ type: z.literal("text"), text: z.string(), providerOptions: po }),
  image: z.looseObject({ type: z.literal("image"), image: z.unknown(), mediaType: z.string().optional(), mimeType: z.string().optional(), providerOptions: po }),
  file: z.looseObject({ type: z.literal("file"), data: z.unknown(), filename: z.string().optional(), mediaType: z.string().optional(), mimeType: z.string().optional(), providerOptions: po }),
  reasoning: z.looseObject({ type: z.literal("reasoning"), text: z.string(), signature: z.string().optional(), providerOptions: po }),
  "redacted-reasoning": z.looseObject({ type: z.literal("redacted-reasoning"), data: z.string(), providerOptions: po }),
  "tool-call": z
    .looseObject({ type: z.literal("tool-call"), toolCallId: z.string(), toolName: z.string(), providerExecuted: z.boolean().optional(), providerOptions: po })
    .refine((p) => p.input !== undefined || p.args !== undefined, { message: "Invalid input: expected `input` (AI SDK 5) or `args` (AI SDK 4)", path: ["input"] }),
  "tool-result": z
    .looseObject({
      type: z.literal("tool-result"),
      toolCallId: z.string(),
      toolName: z.string(),
      output: AiSdkToolResultOutputSchema.optional(),
      isError: z.boolean().optional(),
      experimental_content: z.array(AiSdkResultItemSchema).optional(),
      providerOptions: po,
    })
    .refine((p) => p.output !== undefined || p.result !== undefined, { message: "Invalid input: expected `output` (AI SDK 5) or `result` (AI SDK 4)", path: ["output"] }),
});

const partsOrString = z.union([z.string(), z.array(AiSdkPartSchema)]);
export const AiSdkMessageSchema = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: z.string(), providerOptions: po }),
  z.looseObject({ role: z.literal("user"), content: partsOrString, providerOptions: po }),
  z.looseObject({ role: z.literal("assistant"), content: partsOrString, providerOptions: po }),
  z.looseObject({ role: z.literal("tool"), content: z.array(AiSdkPartSchema), providerOptions: po }),
]);

// ---------------------------------------------------------------------------------------------
// Hints: what meta["ai-sdk"] holds on messages and parts.

/** meta["ai-sdk"] of a canonical message or part parsed from the AI SDK. */
export interface AiSdkHints {
  /** Wire fields ctxfold does not model (providerOptions, providerExecuted, filename, ...), carried unchanged. */
  fields?: Record<string, unknown>;
  /** An opaque part's value is a wire part (or item, or tool output) of this format. */
  wire?: true;
  /** The content was a part array (a lone text part would otherwise render as a string). */
  content?: "array";
  /** This tool message shared one wire tool message with the one before it. */
  joinPrev?: true;
  /** Which wire part a media or reasoning part was. */
  kind?: "image" | "file" | "redacted-reasoning";
  /** The media type was under AI SDK 4's `mimeType`. */
  mimeKey?: "mimeType";
  /** AI SDK 4 field names (`args`, `result`). */
  v?: 4;
  /** The tool output form when it is not the default text / error-text. */
  output?: "json" | "content" | "opaque";
  /** Fields of the `output` object beside `type` and `value`. */
  outputFields?: Record<string, unknown>;
  /** AI SDK 4 `result` beside `experimental_content` (which the content came from). */
  result?: unknown;
  /** A result item that was AI SDK 4's `image` rather than `media`. */
  item?: "image";
}

const kMessageKeys = new Set(["role", "content"]);
const kTextKeys = new Set(["type", "text"]);
const kDataKeys = new Set(["type", "data"]);
const kToolCallKeys5 = new Set(["type", "toolCallId", "toolName", "input"]);
const kToolCallKeys4 = new Set(["type", "toolCallId", "toolName", "args"]);
const kToolResultKeys5 = new Set(["type", "toolCallId", "toolName", "output"]);
const kToolResultKeys4 = new Set(["type", "toolCallId", "toolName", "result", "isError"]);
const kToolResultKeys4Content = new Set(["type", "toolCallId", "toolName", "result", "isError", "experimental_content"]);
const kOutputKeys = new Set(["type", "value"]);
const kRoles = new Set(["system", "user", "assistant", "tool"]);

/**
 * Marks a wire tool-result part whose `toolName` render filled in (the canonical result had no
 * name); the value is that name. Non-enumerable, so JSON and deep equality never see it.
 */
export const kInventedToolName: unique symbol = Symbol.for("ctxfold.ai-sdk.inventedToolName");

const hintsOf = (meta: Meta | undefined): AiSdkHints | undefined => meta?.[F] as AiSdkHints | undefined;

function metaWith(hints: AiSdkHints | undefined): Meta | undefined {
  return hints ? { [F]: hints } : undefined;
}

function withFields(fields: Record<string, unknown> | undefined, hints?: AiSdkHints): AiSdkHints | undefined {
  if (!fields) return hints;
  return hints ? { ...hints, fields } : { fields };
}

/** The meta of every opaque part this adapter makes: its value is this format's own wire object. */
const kWireMeta: Meta = Object.freeze({ [F]: Object.freeze({ wire: true }) });

function opaque(value: unknown): OpaquePart {
  return { type: "opaque", value, meta: kWireMeta };
}

// ---------------------------------------------------------------------------------------------
// Parse.

type Path = string;

function parseText(p: AiSdkTextPart): TextPart {
  const part: TextPart = { type: "text", text: p.text };
  const meta = metaWith(withFields(extraFields(p, kTextKeys)));
  if (meta) part.meta = meta;
  return part;
}

function parseMedia(p: AiSdkImagePart | AiSdkFilePart, kind: "image" | "file"): MediaPart {
  const dataKey = kind === "image" ? "image" : "data";
  const mimeKey = "mediaType" in p ? "mediaType" : "mimeType" in p ? "mimeType" : undefined;
  const part: MediaPart = { type: "media", data: p[dataKey] };
  if (mimeKey && typeof p[mimeKey] === "string") part.mediaType = p[mimeKey];
  let fields: Record<string, unknown> | undefined;
  for (const k in p) if (k !== "type" && k !== dataKey && k !== mimeKey) (fields ??= {})[k] = p[k];
  const hints: AiSdkHints = { kind };
  if (mimeKey === "mimeType") hints.mimeKey = "mimeType";
  part.meta = metaWith(withFields(fields, hints));
  return part;
}

function anthropicOptions(p: { providerOptions?: unknown }): Record<string, unknown> | undefined {
  const options = p.providerOptions as AiSdkProviderOptions | undefined;
  return options?.anthropic;
}

function parseReasoning(p: AiSdkReasoningPart): ReasoningPart {
  const anthropic = anthropicOptions(p);
  const signature = typeof p.signature === "string" ? p.signature : typeof anthropic?.signature === "string" ? anthropic.signature : undefined;
  const redacted = typeof anthropic?.redactedData === "string" ? anthropic.redactedData : undefined;
  const part: ReasoningPart = { type: "reasoning" };
  // Redacted thinking travels as an empty text plus the data: the canonical part has no text then.
  if (p.text !== "" || redacted === undefined) part.text = p.text;
  if (redacted !== undefined) part.redacted = redacted;
  if (signature !== undefined) part.signature = signature;
  const meta = metaWith(withFields(extraFields(p, kTextKeys)));
  if (meta) part.meta = meta;
  return part;
}

function parseRedactedReasoning(p: AiSdkRedactedReasoningPart): ReasoningPart {
  return { type: "reasoning", redacted: p.data, meta: { [F]: withFields(extraFields(p, kDataKeys), { kind: "redacted-reasoning" }) } };
}

function parseToolCall(p: AiSdkToolCallPart): ToolCallPart {
  const v4 = p.input === undefined;
  const value = v4 ? p.args : p.input;
  const part: ToolCallPart = { type: "tool-call", id: p.toolCallId, name: p.toolName, args: value === null ? "null" : rawArgsOf(value) };
  const meta = metaWith(withFields(extraFields(p, v4 ? kToolCallKeys4 : kToolCallKeys5), v4 ? { v: 4 } : undefined));
  if (meta) part.meta = meta;
  return part;
}

function jsonText(value: unknown, path: Path, options: ParseOptions | undefined): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (typeof text !== "string") throw formatError("E_SCHEMA", "not a valid ai-sdk message: the tool result value is not JSON", path, options);
  return text;
}

function parseItem(item: AiSdkResultItem): ResultContentPart {
  switch (item.type) {
    case "text":
      return parseText(item as AiSdkTextPart);
    case "media":
    case "image": {
      const mimeKey = "mediaType" in item ? "mediaType" : item.type === "image" && "mimeType" in item ? "mimeType" : undefined;
      const part: MediaPart = { type: "media", data: item.data };
      if (mimeKey && typeof item[mimeKey] === "string") part.mediaType = item[mimeKey] as string;
      let fields: Record<string, unknown> | undefined;
      for (const k in item) if (k !== "type" && k !== "data" && k !== mimeKey) (fields ??= {})[k] = item[k];
      let hints: AiSdkHints | undefined = item.type === "image" ? { item: "image" } : undefined;
      if (mimeKey === "mimeType") hints = { ...hints, mimeKey: "mimeType" };
      const meta = metaWith(withFields(fields, hints));
      if (meta) part.meta = meta;
      return part;
    }
    default:
      return opaque(item);
  }
}

function parseOutput(output: AiSdkToolResultOutput, part: ToolResultPart, hints: AiSdkHints, path: Path, options: ParseOptions | undefined): void {
  switch (output.type) {
    case "text":
    case "error-text":
      part.content = [{ type: "text", text: output.value as string }];
      break;
    case "json":
    case "error-json":
      part.content = [{ type: "text", text: jsonText(output.value, `${path}.output.value`, options) }];
      hints.output = "json";
      break;
    case "content":
      part.content = (output.value as AiSdkResultItem[]).map(parseItem);
      hints.output = "content";
      break;
    default:
      part.content = [opaque(output)];
      hints.output = "opaque";
      return;
  }
  if (output.type === "error-text" || output.type === "error-json") part.isError = true;
  const outputFields = extraFields(output, kOutputKeys);
  if (outputFields) hints.outputFields = outputFields;
}

function parseToolResult(p: AiSdkToolResultPart, path: Path, options: ParseOptions | undefined): ToolResultPart {
  const part: ToolResultPart = { type: "tool-result", callId: p.toolCallId, content: [] };
  if ((p as unknown as Record<symbol, unknown>)[kInventedToolName] !== p.toolName) part.name = p.toolName;
  const hints: AiSdkHints = {};
  let known: ReadonlySet<string>;
  if (p.output !== undefined) {
    known = kToolResultKeys5;
    parseOutput(p.output, part, hints, path, options);
  } else {
    hints.v = 4;
    if (typeof p.isError === "boolean") part.isError = p.isError;
    if (p.experimental_content !== undefined) {
      known = kToolResultKeys4Content;
      part.content = p.experimental_content.map(parseItem);
      hints.result = p.result;
    } else {
      known = kToolResultKeys4;
      if (typeof p.result === "string") part.content = [{ type: "text", text: p.result }];
      else {
        part.content = [{ type: "text", text: jsonText(p.result, `${path}.result`, options) }];
        hints.output = "json";
      }
    }
  }
  const fields = extraFields(p, known);
  if (fields) hints.fields = fields;
  if (Object.keys(hints).length > 0) part.meta = { [F]: hints };
  return part;
}

function parsePart(p: AiSdkPart, path: Path, options: ParseOptions | undefined): Part {
  switch (p.type) {
    case "text":
      return parseText(p as AiSdkTextPart);
    case "image":
      return parseMedia(p as AiSdkImagePart, "image");
    case "file":
      return parseMedia(p as AiSdkFilePart, "file");
    case "reasoning":
      return parseReasoning(p as AiSdkReasoningPart);
    case "redacted-reasoning":
      return parseRedactedReasoning(p as AiSdkRedactedReasoningPart);
    case "tool-call":
      return parseToolCall(p as AiSdkToolCallPart);
    case "tool-result":
      return parseToolResult(p as AiSdkToolResultPart, path, options);
    default:
      return opaque(p);
  }
}

function parseParts(content: AiSdkPart[], path: Path, options: ParseOptions | undefined): Part[] {
  const parts = new Array<Part>(content.length);
  for (let k = 0; k < content.length; k++) parts[k] = parsePart(content[k]!, `${path}.content[${k}]`, options);
  return parts;
}

/** A wire tool message becomes one canonical tool message per part (see the header). */
function parseToolMessage(w: AiSdkToolMessage, i: number, fields: Record<string, unknown> | undefined, options: ParseOptions | undefined): Message[] {
  const path = `messages[${i}]`;
  const parts = parseParts(w.content, path, options);
  const first = fields ? { [F]: { fields } } : {};
  if (parts.length <= 1) return [{ id: `m${i}`, role: "tool", parts, meta: first }];
  return parts.map((part, k) => ({ id: `m${i}.${k}`, role: "tool", parts: [part], meta: k === 0 ? first : { [F]: { joinPrev: true } } }));
}

function parseMessage(w: AiSdkMessage, i: number, options: ParseOptions | undefined): Message[] {
  const fields = extraFields(w, kMessageKeys);
  if (w.role === "tool") return parseToolMessage(w, i, fields, options);
  let parts: Part[];
  let hints: AiSdkHints | undefined;
  if (typeof w.content === "string") parts = [{ type: "text", text: w.content }];
  else {
    parts = parseParts(w.content, `messages[${i}]`, options);
    hints = { content: "array" };
  }
  hints = withFields(fields, hints);
  return [{ id: `m${i}`, role: w.role, parts, meta: hints ? { [F]: hints } : {} }];
}

function checkRole(raw: unknown, i: number, options: ParseOptions | undefined): void {
  if (typeof raw !== "object" || raw === null) return;
  const role = (raw as { role?: unknown }).role;
  if (typeof role === "string" && !kRoles.has(role)) {
    throw formatError("E_UNKNOWN_ROLE", `unknown ai-sdk role ${JSON.stringify(role)} (one of system, user, assistant, tool)`, `messages[${i}]`, options);
  }
}

// ---------------------------------------------------------------------------------------------
// Render.

/** Copies carried wire fields onto a rendered object (`__proto__` as an own field too). */
function copyFields<T extends object>(out: T, fields: Record<string, unknown> | undefined): T {
  if (fields) {
    for (const k in fields) {
      if (k === "__proto__") Object.defineProperty(out, k, { value: fields[k], enumerable: true, configurable: true, writable: true });
      else (out as Record<string, unknown>)[k] = fields[k];
    }
  }
  return out;
}

function assignFields<T extends object>(out: T, hints: AiSdkHints | undefined): T {
  return copyFields(out, hints?.fields);
}

function renderText(p: TextPart): AiSdkTextPart {
  return assignFields({ type: "text", text: p.text }, hintsOf(p.meta));
}

function renderMedia(p: MediaPart): AiSdkImagePart | AiSdkFilePart {
  const hints = hintsOf(p.meta);
  if (!hints) return foreignMedia(p);
  const kind = hints.kind === "file" ? "file" : "image";
  const out: Record<string, unknown> = { type: kind };
  if (p.data !== undefined) out[kind === "image" ? "image" : "data"] = p.data;
  if (p.mediaType !== undefined) out[hints.mimeKey ?? "mediaType"] = p.mediaType;
  return assignFields(out, hints) as AiSdkImagePart | AiSdkFilePart;
}

/**
 * A media part from another format: its bytes as the SDK takes them (base64 text, or a URL /
 * data URL string) where `mediaSource` can read them out of the data, else the data unchanged;
 * an image part unless the media type says otherwise (a wildcard type such as `image/*` is left out).
 */
function foreignMedia(p: MediaPart): AiSdkImagePart | AiSdkFilePart {
  const s = mediaSource(p);
  const data = s ? (base64Of(s) ?? s.url ?? p.data) : p.data;
  const mediaType = s?.mediaType ?? p.mediaType;
  const exact = mediaType !== undefined && !mediaType.endsWith("/*") ? mediaType : undefined;
  if (exact !== undefined && !exact.startsWith("image/")) return { type: "file", data, mediaType: exact };
  const out: AiSdkImagePart = { type: "image", image: data };
  if (exact !== undefined) out.mediaType = exact;
  return out;
}

function renderReasoning(p: ReasoningPart): AiSdkReasoningPart | AiSdkRedactedReasoningPart {
  const hints = hintsOf(p.meta);
  if (hints?.kind === "redacted-reasoning") return assignFields({ type: "redacted-reasoning", data: p.redacted ?? "" }, hints);
  const out: AiSdkReasoningPart = { type: "reasoning", text: p.text ?? "" };
  if (hints) return assignFields(out, hints);
  if (p.signature !== undefined || p.redacted !== undefined) {
    const anthropic: Record<string, unknown> = {};
    if (p.signature !== undefined) anthropic.signature = p.signature;
    if (p.redacted !== undefined) anthropic.redactedData = p.redacted;
    out.providerOptions = { anthropic };
  }
  return out;
}

function renderToolCall(p: ToolCallPart): AiSdkToolCallPart {
  const hints = hintsOf(p.meta);
  const out: AiSdkToolCallPart = { type: "tool-call", toolCallId: p.id, toolName: p.name };
  out[hints?.v === 4 ? "args" : "input"] = argsObject(p.args);
  return assignFields(out, hints);
}

function renderItem(p: ResultContentPart): AiSdkResultItem | undefined {
  switch (p.type) {
    case "text":
      return renderText(p);
    case "media": {
      const hints = hintsOf(p.meta);
      const out: Record<string, unknown> = { type: hints?.item ?? "media" };
      if (p.data !== undefined) out.data = p.data;
      if (p.mediaType !== undefined) out[hints?.mimeKey ?? "mediaType"] = p.mediaType;
      return assignFields(out, hints) as AiSdkResultItem;
    }
    case "opaque":
      return hintsOf(p.meta)?.wire ? (p.value as AiSdkResultItem) : undefined;
  }
}

/** Result items; opaque items from other formats are dropped (they are that provider's own data). */
function renderItems(content: ResultContentPart[]): AiSdkResultItem[] {
  const out: AiSdkResultItem[] = [];
  for (const c of content) {
    const item = renderItem(c);
    if (item !== undefined) out.push(item);
  }
  return out;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The one text of a result that is a single plain text part, else undefined. */
function singleText(content: ResultContentPart[]): string | undefined {
  const c = content.length === 1 ? content[0]! : undefined;
  return c?.type === "text" && !hintsOf(c.meta) ? c.text : undefined;
}

function renderOutput(p: ToolResultPart, hints: AiSdkHints | undefined): AiSdkToolResultOutput {
  const content = p.content;
  const error = p.isError === true;
  const only = content.length === 1 ? content[0]! : undefined;
  if (hints?.output === "opaque" && only?.type === "opaque" && hintsOf(only.meta)?.wire) return only.value as AiSdkToolResultOutput;
  const withOutputFields = (out: AiSdkToolResultOutput) => copyFields(out, hints?.outputFields);
  const text = hints?.output === "content" ? undefined : singleText(content);
  if (text !== undefined) {
    if (hints?.output === "json") {
      const value = tryJson(text);
      if (value !== undefined) return withOutputFields({ type: error ? "error-json" : "json", value });
    }
    return withOutputFields({ type: error ? "error-text" : "text", value: text });
  }
  if (error && hints?.output !== "content" && content.every((c) => c.type === "text")) {
    return withOutputFields({ type: "error-text", value: content.map((c) => (c as TextPart).text).join("\n") });
  }
  return withOutputFields({ type: "content", value: renderItems(content) });
}

function renderResultV4(p: ToolResultPart, hints: AiSdkHints, out: AiSdkToolResultPart): void {
  const text = "result" in hints ? undefined : singleText(p.content);
  if (text !== undefined) {
    const value = hints.output === "json" ? tryJson(text) : undefined;
    out.result = value !== undefined ? value : text;
  } else {
    out.result = "result" in hints ? hints.result : p.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
    out.experimental_content = renderItems(p.content);
  }
  if (p.isError !== undefined) out.isError = p.isError;
}

/** The name of the call `callId` answers, scanning back from message `before`. */
function callName(messages: readonly Message[], before: number, callId: string): string | undefined {
  for (let i = before; i >= 0; i--) {
    const parts = messages[i]!.parts;
    for (let k = parts.length - 1; k >= 0; k--) {
      const c = parts[k]!;
      if (c.type === "tool-call" && c.id === callId) return c.name;
    }
  }
  return undefined;
}

function renderToolResult(p: ToolResultPart, messages: readonly Message[], i: number): AiSdkToolResultPart {
  const hints = hintsOf(p.meta);
  let name = p.name;
  let invented = false;
  if (name === undefined) {
    name = callName(messages, i, p.callId) ?? "unknown";
    invented = true;
  }
  const out: AiSdkToolResultPart = { type: "tool-result", toolCallId: p.callId, toolName: name };
  if (hints?.v === 4) renderResultV4(p, hints, out);
  else out.output = renderOutput(p, hints);
  assignFields(out, hints);
  if (invented) Object.defineProperty(out, kInventedToolName, { value: name, enumerable: false, configurable: true });
  return out;
}

function renderPart(p: Part, messages: readonly Message[], i: number): AiSdkPart | undefined {
  switch (p.type) {
    case "text":
      return renderText(p);
    case "media":
      return renderMedia(p);
    case "reasoning":
      return renderReasoning(p);
    case "tool-call":
      return renderToolCall(p);
    case "tool-result":
      return renderToolResult(p, messages, i);
    case "opaque":
      return hintsOf(p.meta)?.wire ? (p.value as AiSdkOtherPart) : undefined;
  }
}

/** Wire parts; opaque parts from other formats are dropped (they are that provider's own data). */
function renderParts(m: Message, messages: readonly Message[], i: number): AiSdkPart[] {
  const out: AiSdkPart[] = [];
  for (const p of m.parts) {
    const w = renderPart(p, messages, i);
    if (w !== undefined) out.push(w);
  }
  return out;
}

function systemText(m: Message, i: number): string {
  const parts = m.parts;
  if (parts.length === 1 && parts[0]!.type === "text") return parts[0]!.text;
  const texts: string[] = [];
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k]!;
    if (p.type === "text") texts.push(p.text);
    else if (p.type !== "opaque") throw formatError("E_UNKNOWN_PART", `an ai-sdk system message holds text only, not a ${p.type} part`, `messages[${i}].parts[${k}]`);
  }
  return texts.join("\n");
}

function isPlainText(parts: readonly Part[]): parts is [TextPart] {
  return parts.length === 1 && parts[0]!.type === "text" && !hintsOf(parts[0]!.meta);
}

function renderMessage(m: Message, messages: readonly Message[], i: number): AiSdkMessage {
  const hints = hintsOf(m.meta);
  let out: AiSdkMessage;
  switch (m.role) {
    case "system":
      out = { role: "system", content: systemText(m, i) };
      break;
    case "user":
    case "assistant":
      out = { role: m.role, content: hints?.content !== "array" && isPlainText(m.parts) ? m.parts[0].text : renderParts(m, messages, i) };
      break;
    case "tool":
      out = { role: "tool", content: renderParts(m, messages, i) };
      break;
  }
  return assignFields(out, hints);
}

// ---------------------------------------------------------------------------------------------
// The adapter.

/** Parses an AI SDK `ModelMessage[]` (or AI SDK 4 `CoreMessage[]`) into canonical messages. */
function parse(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw formatError("E_SCHEMA", "expected an array of ai-sdk messages", "messages", options);
  const out: Message[] = [];
  for (let i = 0; i < input.length; i++) {
    const raw: unknown = input[i];
    checkRole(raw, i, options);
    const r = AiSdkMessageSchema.safeParse(raw);
    if (!r.success) throw schemaError(F, r.error, `messages[${i}]`, options, raw);
    const group = parseMessage(raw as AiSdkMessage, i, options);
    recordOrigin(F, raw, group);
    for (const m of group) out.push(m);
  }
  return out;
}

/** Renders canonical messages as an AI SDK 5 `ModelMessage[]` (parts parsed from AI SDK 4 keep its field names). */
function render(messages: readonly Message[], options?: RenderOptions): AiSdkWire {
  const reuse = options?.reuse !== false;
  const out: AiSdkWire = [];
  let lastBuilt: AiSdkMessage | undefined;
  for (let i = 0; i < messages.length; ) {
    if (reuse) {
      const r = reusable(messages, i, F);
      if (r) {
        out.push(r.raw as AiSdkMessage);
        lastBuilt = undefined;
        i += r.length;
        continue;
      }
    }
    const m = messages[i]!;
    const built = renderMessage(m, messages, i);
    if (m.role === "tool" && hintsOf(m.meta)?.joinPrev && lastBuilt?.role === "tool" && out[out.length - 1] === lastBuilt) {
      for (const p of built.content as AiSdkPart[]) lastBuilt.content.push(p);
    } else {
      out.push(built);
      lastBuilt = built;
    }
    i++;
  }
  return out;
}

/** The Vercel AI SDK `ModelMessage[]` adapter (format "ai-sdk"). */
export const aiSdkAdapter: Adapter<AiSdkWire> = { format: F, parse, render };
