/**
 * Rendering canonical messages as an OpenAI Responses `input` item array (the mapping is in
 * openai-responses.ts).
 */
import type { MediaPart, Message, ReasoningPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { formatError, type RenderOptions, reusable } from "./common.js";
import { audioFormat, base64Of, mediaSource, urlOf } from "./media.js";
import {
  type ContentPart, joinSummary, messageMeta, type OpenAIResponsesContentPart, type OpenAIResponsesCustomToolCall, type OpenAIResponsesCustomToolCallOutput,
  type OpenAIResponsesFunctionCall, type OpenAIResponsesFunctionCallOutput, type OpenAIResponsesItem, type OpenAIResponsesMessageItem,
  type OpenAIResponsesMessageMeta, type OpenAIResponsesPartMeta, type OpenAIResponsesReasoning, type OpenAIResponsesWire, partMeta, R,
} from "./openai-responses-wire.js";

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

/** Renders canonical messages as Responses input items, handing back the parsed items for every untouched message. */
export function renderOpenAIResponses(messages: readonly Message[], options?: RenderOptions): OpenAIResponsesWire {
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
