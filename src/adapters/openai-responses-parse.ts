/**
 * Parsing an OpenAI Responses `input` item array into canonical messages (the mapping is in
 * openai-responses.ts).
 */
import type { Message, OpaquePart, Part, ReasoningPart, ResultContentPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { extraFields, formatError, isObject, type ParseOptions, recordOrigin, schemaError, shownRole } from "./common.js";
import { audioMediaType, dataUrlType, withMediaType } from "./media.js";
import {
  type ContentPart,
  joinSummary,
  kEnvelope,
  kItemSchemas,
  kRoles,
  kWireArray,
  type OpenAIResponsesContentPart,
  type OpenAIResponsesCustomToolCall,
  type OpenAIResponsesCustomToolCallOutput,
  type OpenAIResponsesFunctionCall,
  type OpenAIResponsesFunctionCallOutput,
  type OpenAIResponsesInputAudio,
  type OpenAIResponsesInputFile,
  type OpenAIResponsesInputImage,
  type OpenAIResponsesInputText,
  type OpenAIResponsesItem,
  type OpenAIResponsesMessageItem,
  type OpenAIResponsesMessageMeta,
  OpenAIResponsesOtherItemSchema,
  type OpenAIResponsesPartMeta,
  type OpenAIResponsesReasoning,
  type OpenAIResponsesRefusal,
  R,
  responsesMeta,
} from "./openai-responses-wire.js";

const kWireMeta = responsesMeta.frozen({ wire: true });
const kItemMeta = responsesMeta.frozen({ item: true });
const kOwnMeta = responsesMeta.frozen({});
const kTextMeta = new Map(["input_text", "output_text", "refusal"].map((t) => [t, responsesMeta.frozen({ type: t })]));

const kTextKeys: ReadonlySet<string> = new Set(["type", "text"]);
const kRefusalKeys: ReadonlySet<string> = new Set(["type", "refusal"]);
const kMessageKeys: ReadonlySet<string> = new Set(["role", "content"]);
const kCallKeys: ReadonlySet<string> = new Set(["type", "call_id", "name", "arguments"]);
const kCustomCallKeys: ReadonlySet<string> = new Set(["type", "call_id", "name", "input"]);
const kOutputKeys: ReadonlySet<string> = new Set(["type", "call_id", "output"]);
const kReasoningKeys: ReadonlySet<string> = new Set(["type", "summary", "encrypted_content"]);

function readPart(p: OpenAIResponsesContentPart): ContentPart {
  switch (p.type) {
    case "input_text":
    case "output_text": {
      const fields = extraFields(p, kTextKeys);
      return { type: "text", text: (p as OpenAIResponsesInputText).text, meta: fields ? responsesMeta.of({ type: p.type, fields }) : kTextMeta.get(p.type)! };
    }
    case "refusal": {
      const fields = extraFields(p, kRefusalKeys);
      return {
        type: "text",
        text: (p as OpenAIResponsesRefusal).refusal,
        meta: fields ? responsesMeta.of({ type: "refusal", fields }) : kTextMeta.get("refusal")!,
      };
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
  if (custom || fields) part.meta = responsesMeta.of(custom ? (fields ? { custom: true, fields } : { custom: true }) : { fields });
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
    part.meta = responsesMeta.of(pm);
  }
  return part;
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
    part.meta = responsesMeta.of(pm);
  }
  return part;
}

/** Where an item carried whole goes (a compaction_trigger is the caller's request). */
function sideOf(type: string): "client" | "model" | "request" | "alone" {
  if (type === "compaction_trigger") return "request";
  if (type.endsWith("_output") || type.endsWith("_response")) return "client";
  if (type.endsWith("_call") || type.startsWith("mcp_")) return "model";
  return "alone";
}

function validateItem(raw: unknown, path: string, options: ParseOptions | undefined): OpenAIResponsesItem {
  const isObj = isObject(raw);
  const type = isObj ? raw.type : undefined;
  if (!isObj || (type !== undefined && typeof type !== "string")) throw schemaError(R, kEnvelope.safeParse(raw).error!, path, options);
  const kind = type ?? "message";
  if (kind === "message") {
    const role = (raw as { role?: unknown }).role;
    if (typeof role === "string" && !kRoles.has(role)) throw formatError("E_UNKNOWN_ROLE", `unknown ${R} role ${shownRole(role)}`, `${path}.role`, options);
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
    const m: Message = { id: `m${run.start}`, role: "assistant", parts: run.parts, meta: run.meta ? responsesMeta.of(run.meta) : {} };
    recordOrigin(R, end - run.start === 1 ? this.input[run.start] : this.input.slice(run.start, end), [m], run.start);
    this.out.push(m);
  }

  /** A canonical message of its own, made from the one item at `i`. */
  alone(i: number, role: Message["role"], parts: Part[], meta?: OpenAIResponsesMessageMeta): void {
    this.close(i);
    const m: Message = { id: `m${i}`, role, parts, meta: meta ? responsesMeta.of(meta) : {} };
    recordOrigin(R, this.input[i], [m], i);
    this.out.push(m);
  }

  item(item: OpenAIResponsesItem, i: number): void {
    switch (item.type ?? "message") {
      case "message":
        this.message(item as OpenAIResponsesMessageItem, i);
        return;
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
      // Model output carried whole: it opens the response that continues after server-side compaction.
      case "compaction":
        this.runAt(i, true).parts.push({ type: "opaque", value: item, meta: kItemMeta });
        return;
      case "function_call_output":
      case "custom_tool_call_output":
        this.alone(i, "tool", [readOutput(item as OpenAIResponsesFunctionCallOutput)]);
        return;
    }
    const opaque: OpaquePart = { type: "opaque", value: item, meta: kItemMeta };
    const side = sideOf(item.type as string);
    if (side === "model") this.runAt(i, false).parts.push(opaque);
    else this.alone(i, side === "client" ? "tool" : side === "request" ? "user" : "assistant", [opaque]);
  }

  message(item: OpenAIResponsesMessageItem, i: number): void {
    if (item.role !== "assistant") {
      const { parts, array } = readContent(item.content);
      this.alone(i, item.role === "user" ? "user" : "system", parts, messageItemMeta(item, array));
      return;
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

/** Parses an OpenAI Responses `input` item array into canonical messages (runs of model-side items become one assistant message). */
export function parseOpenAIResponses(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw schemaError(R, kWireArray.safeParse(input).error!, "messages", options);
  const parser = new Parser(input);
  for (let i = 0; i < input.length; i++) parser.item(validateItem(input[i], `messages[${i}]`, options), i);
  parser.close(input.length);
  return parser.out;
}
