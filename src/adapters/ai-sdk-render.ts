/**
 * Rendering canonical messages as an AI SDK 5 `ModelMessage[]` (parts parsed from AI SDK 4 keep
 * its field names; the mapping is in ai-sdk.ts).
 */
import type { MediaPart, Message, Part, ReasoningPart, ResultContentPart, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { argsObject, formatError, type RenderOptions } from "./common.js";
import { base64Of, mediaSource } from "./media.js";
import { assignFields, copyFields, isPlainText } from "./meta.js";
import {
  type AiSdkFilePart,
  type AiSdkHints,
  type AiSdkImagePart,
  type AiSdkMessage,
  type AiSdkOtherPart,
  type AiSdkPart,
  type AiSdkReasoningPart,
  type AiSdkRedactedReasoningPart,
  type AiSdkResultItem,
  type AiSdkTextPart,
  type AiSdkToolCallPart,
  type AiSdkToolResultOutput,
  type AiSdkToolResultPart,
  type AiSdkWire,
  aiSdkMeta,
  F,
  kInventedToolName,
} from "./ai-sdk-wire.js";
import { eachMessage, signatureFields } from "./render.js";

function renderText(p: TextPart): AiSdkTextPart {
  return assignFields({ type: "text", text: p.text }, aiSdkMeta.get(p));
}

function renderMedia(p: MediaPart): AiSdkImagePart | AiSdkFilePart {
  const hints = aiSdkMeta.get(p);
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
  const hints = aiSdkMeta.get(p);
  if (hints?.kind === "redacted-reasoning") return assignFields({ type: "redacted-reasoning", data: p.redacted ?? "" }, hints);
  const out: AiSdkReasoningPart = { type: "reasoning", text: p.text ?? "" };
  if (hints) return assignFields(out, hints);
  // Where the SDK's Anthropic provider reads them.
  const anthropic = signatureFields(p, "redactedData");
  if (anthropic) out.providerOptions = { anthropic };
  return out;
}

function renderToolCall(p: ToolCallPart): AiSdkToolCallPart {
  const hints = aiSdkMeta.get(p);
  const out: AiSdkToolCallPart = { type: "tool-call", toolCallId: p.id, toolName: p.name };
  out[hints?.v === 4 ? "args" : "input"] = argsObject(p.args);
  return assignFields(out, hints);
}

function renderItem(p: ResultContentPart): AiSdkResultItem | undefined {
  switch (p.type) {
    case "text":
      return renderText(p);
    case "media": {
      const hints = aiSdkMeta.get(p);
      const out: Record<string, unknown> = { type: hints?.item ?? "media" };
      if (p.data !== undefined) out.data = p.data;
      if (p.mediaType !== undefined) out[hints?.mimeKey ?? "mediaType"] = p.mediaType;
      return assignFields(out, hints) as AiSdkResultItem;
    }
    case "opaque":
      return aiSdkMeta.get(p)?.wire ? (p.value as AiSdkResultItem) : undefined;
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
  return c !== undefined && isPlainText(c, F) ? c.text : undefined;
}

function renderOutput(p: ToolResultPart, hints: AiSdkHints | undefined): AiSdkToolResultOutput {
  const content = p.content;
  const error = p.isError === true;
  const only = content.length === 1 ? content[0]! : undefined;
  if (hints?.output === "opaque" && only?.type === "opaque" && aiSdkMeta.get(only)?.wire) return only.value as AiSdkToolResultOutput;
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
  const hints = aiSdkMeta.get(p);
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
      return aiSdkMeta.get(p)?.wire ? (p.value as AiSdkOtherPart) : undefined;
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
    else if (p.type !== "opaque")
      throw formatError("E_UNKNOWN_PART", `an ai-sdk system message holds text only, not a ${p.type} part`, `messages[${i}].parts[${k}]`);
  }
  return texts.join("\n");
}

function isOneText(parts: readonly Part[]): parts is [TextPart] {
  return parts.length === 1 && isPlainText(parts[0]!, F);
}

function renderMessage(m: Message, messages: readonly Message[], i: number): AiSdkMessage {
  const hints = aiSdkMeta.get(m);
  let out: AiSdkMessage;
  switch (m.role) {
    case "system":
      out = { role: "system", content: systemText(m, i) };
      break;
    case "user":
    case "assistant":
      out = { role: m.role, content: hints?.content !== "array" && isOneText(m.parts) ? m.parts[0].text : renderParts(m, messages, i) };
      break;
    case "tool":
      out = { role: "tool", content: renderParts(m, messages, i) };
      break;
  }
  return assignFields(out, hints);
}

/** Renders canonical messages as an AI SDK 5 `ModelMessage[]` (parts parsed from AI SDK 4 keep its field names). */
export function renderAiSdk(messages: readonly Message[], options?: RenderOptions): AiSdkWire {
  const out: AiSdkWire = [];
  let lastBuilt: AiSdkMessage | undefined;
  const reused = (raw: unknown) => {
    out.push(raw as AiSdkMessage);
    lastBuilt = undefined;
  };
  eachMessage(messages, F, options, reused, (i) => {
    const m = messages[i]!;
    const built = renderMessage(m, messages, i);
    if (m.role === "tool" && aiSdkMeta.get(m)?.joinPrev && lastBuilt?.role === "tool" && out[out.length - 1] === lastBuilt) {
      for (const p of built.content as AiSdkPart[]) lastBuilt.content.push(p);
    } else {
      out.push(built);
      lastBuilt = built;
    }
    return i + 1;
  });
  return out;
}
