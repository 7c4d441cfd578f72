/**
 * Rendering canonical messages as an OpenAI Responses `input` item array (the mapping is in
 * openai-responses.ts).
 */
import type { MediaPart, Message, ReasoningPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { type RenderOptions, unrenderable } from "./common.js";
import { foreignSource, openaiMedia } from "./media.js";
import { isPlainText } from "./meta.js";
import {
  type ContentPart,
  joinSummary,
  type OpenAIResponsesContentPart,
  type OpenAIResponsesCustomToolCall,
  type OpenAIResponsesCustomToolCallOutput,
  type OpenAIResponsesFunctionCall,
  type OpenAIResponsesFunctionCallOutput,
  type OpenAIResponsesItem,
  type OpenAIResponsesMessageItem,
  type OpenAIResponsesMessageMeta,
  type OpenAIResponsesPartMeta,
  type OpenAIResponsesReasoning,
  type OpenAIResponsesWire,
  R,
  responsesMeta,
} from "./openai-responses-wire.js";
import { ContentRuns, eachMessage } from "./render.js";

/** A media part of another format, from what `mediaSource` reads out of it. */
function foreignMedia(p: MediaPart, where: () => string): OpenAIResponsesContentPart {
  const s = foreignSource(p, R, where);
  const named = s.filename !== undefined ? { filename: s.filename } : {};
  const m = openaiMedia(s);
  switch (m.kind) {
    case "file-id":
      return m.image ? { type: "input_image", file_id: m.fileId, detail: "auto" } : { type: "input_file", file_id: m.fileId, ...named };
    case "audio":
      return { type: "input_audio", input_audio: { data: m.data, format: m.format } };
    case "image":
      return { type: "input_image", image_url: m.url, detail: "auto" };
    case "file":
      return m.url.startsWith("data:") ? { type: "input_file", file_data: m.url, ...named } : { type: "input_file", file_url: m.url, ...named };
  }
}

function renderPart(p: ContentPart, assistant: boolean, where: () => string): OpenAIResponsesContentPart | undefined {
  const pm = responsesMeta.get(p);
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
  if (!array && parts.length === 1 && isPlainText(parts[0], R)) return parts[0].text;
  const out: OpenAIResponsesContentPart[] = [];
  for (let k = 0; k < parts.length; k++) {
    const r = renderPart(parts[k], assistant, () => where(k));
    if (r !== undefined) out.push(r);
  }
  return out;
}

function renderCall(p: ToolCallPart): OpenAIResponsesFunctionCall | OpenAIResponsesCustomToolCall {
  const pm = responsesMeta.get(p);
  if (pm?.custom) return { type: "custom_tool_call", call_id: p.id, name: p.name, input: p.args, ...pm.fields };
  return { type: "function_call", call_id: p.id, name: p.name, arguments: p.args, ...pm?.fields };
}

function renderOutput(r: ToolResultPart, where: string): OpenAIResponsesFunctionCallOutput | OpenAIResponsesCustomToolCallOutput {
  const pm = responsesMeta.get(r);
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

function messageItem(
  role: WireRole,
  parts: readonly ContentPart[],
  mm: OpenAIResponsesMessageMeta | undefined,
  where: (k: number) => string,
): OpenAIResponsesMessageItem {
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
  const mm = m.role === "tool" ? undefined : responsesMeta.message(m);
  const role: WireRole = m.role === "tool" ? "user" : m.role === "system" ? (mm?.role ?? "system") : m.role;
  const at = (k: number) => `messages[${i}].parts[${k}]`;
  const runs = new ContentRuns<ContentPart, OpenAIResponsesItem>(out, (parts, indices, first) =>
    messageItem(role, parts, first ? mm : undefined, (k) => at(indices[k]!)),
  );
  m.parts.forEach((p, k) => {
    const pm = responsesMeta.get(p);
    switch (p.type) {
      case "text":
      case "media":
        return runs.add(p, k);
      case "opaque":
        if (pm?.item) runs.push(p.value as OpenAIResponsesItem);
        else if (pm?.wire) runs.add(p, k);
        return;
      case "tool-call":
        if (m.role !== "assistant") unrenderable(R, `a tool call on a ${m.role} message`, at(k));
        return runs.push(renderCall(p));
      case "tool-result":
        return runs.push(renderOutput(p, at(k)));
      case "reasoning":
        if (pm) runs.push(renderReasoning(p, pm));
        return;
    }
  });
  runs.flush();
  if (runs.emitted === 0 && m.role !== "tool") out.push(messageItem(role, [], mm, at));
}

/** Renders canonical messages as Responses input items, handing back the parsed items for every untouched message. */
export function renderOpenAIResponses(messages: readonly Message[], options?: RenderOptions): OpenAIResponsesWire {
  const out: OpenAIResponsesItem[] = [];
  eachMessage(
    messages,
    R,
    options,
    // A run of several items was recorded as the array of them.
    (raw) => {
      if (Array.isArray(raw)) for (const item of raw) out.push(item as OpenAIResponsesItem);
      else out.push(raw as OpenAIResponsesItem);
    },
    (i) => {
      renderMessage(messages[i], i, out);
      return i + 1;
    },
  );
  return out;
}
