/**
 * Parsing an OpenAI Chat Completions `messages` array into canonical messages (the mapping is
 * in openai-chat.ts).
 */
import type { Message, OpaquePart, Part, ResultContentPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { extraFields, formatError, isObject, type ParseOptions, recordOrigin, schemaError, shownRole } from "./common.js";
import { audioMediaType, dataUrlType, withMediaType } from "./media.js";
import { textPart } from "./meta.js";
import {
  chatMeta,
  type ContentPart,
  type ContentShape,
  F,
  kEnvelope,
  kRoleSchemas,
  kWireArray,
  type OpenAIChatAssistantMessage,
  type OpenAIChatAudioPart,
  type OpenAIChatContent,
  type OpenAIChatContentPart,
  type OpenAIChatCustomToolCall,
  type OpenAIChatFilePart,
  type OpenAIChatFunctionMessage,
  type OpenAIChatFunctionToolCall,
  type OpenAIChatImagePart,
  type OpenAIChatMessage,
  type OpenAIChatMessageMeta,
  type OpenAIChatPartMeta,
  type OpenAIChatRefusalPart,
  type OpenAIChatSystemMessage,
  type OpenAIChatTextPart,
  type OpenAIChatToolCall,
  type OpenAIChatToolMessage,
  type OpenAIChatUserMessage,
} from "./openai-chat-wire.js";

const kWireMeta = chatMeta.frozen({ wire: true });
const kToolCallMeta = chatMeta.frozen({ toolCall: true });
const kRefusalMeta = chatMeta.frozen({ refusal: true });

const kTextKeys: ReadonlySet<string> = new Set(["type", "text"]);
const kRefusalKeys: ReadonlySet<string> = new Set(["type", "refusal"]);
const kPlainKeys: ReadonlySet<string> = new Set(["role", "content"]);
const kToolKeys: ReadonlySet<string> = new Set(["role", "content", "tool_call_id"]);
const kFunctionKeys: ReadonlySet<string> = new Set(["role", "content", "name"]);
const kFunctionCallKeys: ReadonlySet<string> = new Set(["id", "type", "function"]);
const kCustomCallKeys: ReadonlySet<string> = new Set(["id", "type", "custom"]);
const kFnKeys: ReadonlySet<string> = new Set(["name", "arguments"]);
const kCustomKeys: ReadonlySet<string> = new Set(["name", "input"]);

function readPart(p: OpenAIChatContentPart): ContentPart {
  switch (p.type) {
    case "text":
      return textPart(F, (p as OpenAIChatTextPart).text, extraFields(p, kTextKeys));
    case "refusal": {
      const fields = extraFields(p, kRefusalKeys);
      return { type: "text", text: (p as OpenAIChatRefusalPart).refusal, meta: fields ? chatMeta.of({ refusal: true, fields }) : kRefusalMeta };
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

/** Message meta holding what is given, `{}` when nothing is. */
function messageMetaOf(role: "developer" | undefined, shape: ContentShape | undefined, fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!role && !shape && !fields) return {};
  const cm: OpenAIChatMessageMeta = {};
  if (role) cm.role = role;
  if (shape) cm.content = shape;
  if (fields) cm.fields = fields;
  return chatMeta.of(cm);
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
    part.meta = chatMeta.of(pm);
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
    parts.push({
      type: "tool-call",
      id: callId,
      name: fnCall.name,
      args: fnCall.arguments,
      meta: chatMeta.of(fnFields ? { functionCall: true, fnFields } : { functionCall: true }),
    });
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
  if (pm) part.meta = chatMeta.of(pm);
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
  const role = isObject(raw) ? raw.role : undefined;
  const schema = typeof role === "string" ? kRoleSchemas.get(role) : undefined;
  if (!schema) {
    if (typeof role === "string") throw formatError("E_UNKNOWN_ROLE", `unknown ${F} role ${shownRole(role)}`, `${path}.role`, options);
    throw schemaError(F, kEnvelope.safeParse(raw).error!, path, options);
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw schemaError(F, r.error, path, options, raw);
  return raw as OpenAIChatMessage;
}

/** Parses an OpenAI Chat Completions `messages` array into canonical messages, one per wire message. */
export function parseOpenAIChat(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw schemaError(F, kWireArray.safeParse(input).error!, "messages", options);
  const out: Message[] = [];
  const functionCallIds = new Map<string, string>();
  for (let i = 0; i < input.length; i++) {
    const raw: unknown = input[i];
    const w = validate(raw, `messages[${i}]`, options);
    const id = `m${i}`;
    let m: Message;
    switch (w.role) {
      case "assistant":
        m = readAssistant(w, id, functionCallIds);
        break;
      case "tool":
        m = readTool(w, id);
        break;
      case "function":
        m = readFunction(w, id, functionCallIds);
        break;
      default:
        m = readPlain(w, id);
    }
    recordOrigin(F, raw, [m], i);
    out.push(m);
  }
  return out;
}
