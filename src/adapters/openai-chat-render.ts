/**
 * Rendering canonical messages as an OpenAI Chat Completions `messages` array (the mapping is
 * in openai-chat.ts).
 */
import type { MediaPart, Message, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { type RenderOptions, unrenderable } from "./common.js";
import { foreignSource, openaiMedia } from "./media.js";
import { isPlainText } from "./meta.js";
import {
  chatMeta,
  type ContentPart,
  type ContentShape,
  F,
  type OpenAIChatAssistantMessage,
  type OpenAIChatContent,
  type OpenAIChatContentPart,
  type OpenAIChatFunctionCall,
  type OpenAIChatFunctionMessage,
  type OpenAIChatMessage,
  type OpenAIChatMessageMeta,
  type OpenAIChatPartMeta,
  type OpenAIChatSystemMessage,
  type OpenAIChatToolCall,
  type OpenAIChatToolMessage,
  type OpenAIChatUserMessage,
  type OpenAIChatWire,
} from "./openai-chat-wire.js";
import { ContentRuns, eachMessage } from "./render.js";

/** A media part of another format, from what `mediaSource` reads out of it. */
function foreignMedia(p: MediaPart, where: () => string): OpenAIChatContentPart {
  const s = foreignSource(p, F, where);
  const named = s.filename ? { filename: s.filename } : {};
  const m = openaiMedia(s);
  switch (m.kind) {
    case "file-id":
      return { type: "file", file: { file_id: m.fileId, ...named } };
    case "audio":
      return { type: "input_audio", input_audio: { data: m.data, format: m.format } };
    case "image":
      return { type: "image_url", image_url: { url: m.url } };
    case "file":
      if (!m.url.startsWith("data:")) return unrenderable(F, `a ${m.mediaType} media part given by URL`, where());
      return { type: "file", file: { file_data: m.url, ...named } };
  }
}

/** Text that is neither a refusal nor carries wire fields renders as a plain string. */
const plainText = (own: unknown) => {
  const pm = own as OpenAIChatPartMeta | undefined;
  return !pm || (!pm.refusal && !pm.fields);
};

function renderPart(p: ContentPart, where: () => string): OpenAIChatContentPart | undefined {
  const pm = chatMeta.get(p);
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

function renderContent(
  parts: readonly ContentPart[],
  shape: ContentShape | undefined,
  empty: null | "",
  where: (k: number) => string,
): OpenAIChatContent | undefined {
  if (parts.length === 0) return shape === "absent" ? undefined : shape === "null" ? null : shape === "array" ? [] : empty;
  if (shape !== "array" && parts.length === 1 && isPlainText(parts[0], F, plainText)) return parts[0].text;
  const out: OpenAIChatContentPart[] = [];
  for (let k = 0; k < parts.length; k++) {
    const r = renderPart(parts[k], () => where(k));
    if (r !== undefined) out.push(r);
  }
  return out;
}

function renderToolCall(p: ToolCallPart): OpenAIChatToolCall {
  const pm = chatMeta.get(p);
  if (pm?.custom) return { id: p.id, type: "custom", custom: { name: p.name, input: p.args, ...pm.fnFields }, ...pm.fields };
  return { id: p.id, type: "function", function: { name: p.name, arguments: p.args, ...pm?.fnFields }, ...pm?.fields };
}

function renderResult(r: ToolResultPart, where: string): OpenAIChatToolMessage | OpenAIChatFunctionMessage {
  const pm = chatMeta.get(r);
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
  const cm = chatMeta.message(m);
  const content: ContentPart[] = [];
  const contentAt: number[] = [];
  const calls: OpenAIChatToolCall[] = [];
  const results: [ToolResultPart, number][] = [];
  let functionCall: OpenAIChatFunctionCall | undefined;
  m.parts.forEach((p, k) => {
    const pm = chatMeta.get(p);
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
  const cm = m.role === "tool" ? undefined : chatMeta.message(m);
  const role = m.role === "tool" ? "user" : m.role === "system" ? (cm?.role ?? "system") : "user";
  const runs = new ContentRuns<ContentPart, OpenAIChatMessage>(out, (parts, at, first) => plainMessage(role, parts, first ? cm : undefined, i, at));
  m.parts.forEach((p, k) => {
    const pm = chatMeta.get(p);
    switch (p.type) {
      case "text":
      case "media":
        runs.add(p, k);
        break;
      case "opaque":
        if (pm?.toolCall) unrenderable(F, `a tool call on a ${m.role} message`, `messages[${i}].parts[${k}]`);
        if (pm?.wire) runs.add(p, k);
        break;
      case "tool-result":
        // The run before the result is written (and fails, if it must) before the result.
        runs.flush();
        runs.push(renderResult(p, `messages[${i}].parts[${k}]`));
        break;
      case "tool-call":
        unrenderable(F, `a tool call on a ${m.role} message`, `messages[${i}].parts[${k}]`);
        break;
      case "reasoning":
        break;
    }
  });
  runs.flush();
  if (runs.emitted === 0 && m.role !== "tool") out.push(plainMessage(role, [], cm, i, []));
}

function plainMessage(
  role: "system" | "developer" | "user",
  parts: ContentPart[],
  cm: OpenAIChatMessageMeta | undefined,
  i: number,
  at: readonly number[],
): OpenAIChatMessage {
  const msg = { role } as OpenAIChatSystemMessage | OpenAIChatUserMessage;
  const content = renderContent(parts, cm?.content, "", (k) => `messages[${i}].parts[${at[k]}]`);
  if (content !== undefined) msg.content = content;
  return cm?.fields ? Object.assign(msg, cm.fields) : msg;
}

/** Renders canonical messages as OpenAI Chat Completions messages, handing back the parsed wire object for every untouched message. */
export function renderOpenAIChat(messages: readonly Message[], options?: RenderOptions): OpenAIChatWire {
  const out: OpenAIChatMessage[] = [];
  eachMessage(
    messages,
    F,
    options,
    (raw) => out.push(raw as OpenAIChatMessage),
    (i) => {
      const m = messages[i];
      if (m.role === "assistant") renderAssistant(m, i, out);
      else renderOther(m, i, out);
      return i + 1;
    },
  );
  return out;
}
