/**
 * Rendering canonical messages as an OpenAI Chat Completions `messages` array (the mapping is
 * in openai-chat.ts).
 */
import type { MediaPart, Message, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { formatError, type RenderOptions, reusable } from "./common.js";
import { audioFormat, base64Of, mediaSource, urlOf } from "./media.js";
import {
  type ContentPart, type ContentShape, F, messageMeta, type OpenAIChatAssistantMessage, type OpenAIChatContent, type OpenAIChatContentPart,
  type OpenAIChatFunctionCall, type OpenAIChatFunctionMessage, type OpenAIChatMessage, type OpenAIChatMessageMeta, type OpenAIChatSystemMessage,
  type OpenAIChatToolCall, type OpenAIChatToolMessage, type OpenAIChatUserMessage, type OpenAIChatWire, partMeta,
} from "./openai-chat-wire.js";

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

/** Renders canonical messages as OpenAI Chat Completions messages, handing back the parsed wire object for every untouched message. */
export function renderOpenAIChat(messages: readonly Message[], options?: RenderOptions): OpenAIChatWire {
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
