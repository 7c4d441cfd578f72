/**
 * Parsing an AI SDK `ModelMessage[]` (or AI SDK 4 `CoreMessage[]`) into canonical messages (the
 * mapping is in ai-sdk.ts).
 */
import type { MediaPart, Message, Meta, OpaquePart, Part, ReasoningPart, ResultContentPart, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { extraFields, formatError, type ParseOptions, rawArgsOf, recordOrigin, schemaError, shownRole } from "./common.js";
import { fieldsMeta, textPart, withFields } from "./meta.js";
import {
  type AiSdkFilePart,
  type AiSdkHints,
  type AiSdkImagePart,
  type AiSdkMessage,
  AiSdkMessageSchema,
  type AiSdkPart,
  type AiSdkProviderOptions,
  type AiSdkReasoningPart,
  type AiSdkRedactedReasoningPart,
  type AiSdkResultItem,
  type AiSdkTextPart,
  type AiSdkToolCallPart,
  type AiSdkToolMessage,
  type AiSdkToolResultOutput,
  type AiSdkToolResultPart,
  aiSdkMeta,
  F,
  kInventedToolName,
} from "./ai-sdk-wire.js";

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

function metaWith(hints: AiSdkHints | undefined): Meta | undefined {
  return hints ? aiSdkMeta.of(hints) : undefined;
}

/** The meta of every opaque part this adapter makes: its value is this format's own wire object. */
const kWireMeta: Meta = aiSdkMeta.frozen({ wire: true });

function opaque(value: unknown): OpaquePart {
  return { type: "opaque", value, meta: kWireMeta };
}

type Path = string;

function parseText(p: AiSdkTextPart): TextPart {
  return textPart(F, p.text, extraFields(p, kTextKeys));
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
  const meta = fieldsMeta(F, extraFields(p, kTextKeys));
  if (meta) part.meta = meta;
  return part;
}

function parseRedactedReasoning(p: AiSdkRedactedReasoningPart): ReasoningPart {
  return { type: "reasoning", redacted: p.data, meta: aiSdkMeta.of(withFields<AiSdkHints>(extraFields(p, kDataKeys), { kind: "redacted-reasoning" })) };
}

function parseToolCall(p: AiSdkToolCallPart): ToolCallPart {
  const v4 = p.input === undefined;
  const value = v4 ? p.args : p.input;
  const part: ToolCallPart = { type: "tool-call", id: p.toolCallId, name: p.toolName, args: value === null ? "null" : rawArgsOf(value) };
  const meta = metaWith(withFields<AiSdkHints>(extraFields(p, v4 ? kToolCallKeys4 : kToolCallKeys5), v4 ? { v: 4 } : undefined));
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
  if (Object.keys(hints).length > 0) part.meta = aiSdkMeta.of(hints);
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
  const first = fieldsMeta(F, fields) ?? {};
  if (parts.length <= 1) return [{ id: `m${i}`, role: "tool", parts, meta: first }];
  return parts.map((part, k) => ({ id: `m${i}.${k}`, role: "tool", parts: [part], meta: k === 0 ? first : aiSdkMeta.of({ joinPrev: true }) }));
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
  return [{ id: `m${i}`, role: w.role, parts, meta: metaWith(hints) ?? {} }];
}

function checkRole(raw: unknown, i: number, options: ParseOptions | undefined): void {
  if (typeof raw !== "object" || raw === null) return;
  const role = (raw as { role?: unknown }).role;
  if (typeof role === "string" && !kRoles.has(role)) {
    throw formatError("E_UNKNOWN_ROLE", `unknown ai-sdk role ${shownRole(role)} (one of system, user, assistant, tool)`, `messages[${i}]`, options);
  }
}

/** Parses an AI SDK `ModelMessage[]` (or AI SDK 4 `CoreMessage[]`) into canonical messages. */
export function parseAiSdk(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw formatError("E_SCHEMA", "expected an array of ai-sdk messages", "messages", options);
  const out: Message[] = [];
  for (let i = 0; i < input.length; i++) {
    const raw: unknown = input[i];
    checkRole(raw, i, options);
    const r = AiSdkMessageSchema.safeParse(raw);
    if (!r.success) throw schemaError(F, r.error, `messages[${i}]`, options, raw);
    const group = parseMessage(raw as AiSdkMessage, i, options);
    recordOrigin(F, raw, group, i);
    for (const m of group) out.push(m);
  }
  return out;
}
