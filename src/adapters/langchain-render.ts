/**
 * Rendering canonical messages as LangChain message dicts (the mapping is in langchain.ts).
 */
import type { MediaPart, Message, Part, ReasoningPart, ToolCallPart } from "../model/schema.js";
import { argsObject, formatError, isObject, type RenderOptions } from "./common.js";
import { mediaSource, urlOf } from "./media.js";
import { assignFields, isPlainText } from "./meta.js";
import {
  F,
  kDefaultKind,
  type LangchainBlock,
  type LangchainContent,
  type LangchainHints,
  type LangchainMessage,
  type LangchainToolCall,
  type LangchainWire,
  langchainMeta,
  type Loose,
} from "./langchain-wire.js";
import { eachMessage, signatureFields } from "./render.js";

function renderReasoning(p: ReasoningPart): LangchainBlock {
  const hints = langchainMeta.get(p);
  const out: Loose & { type: string } = { type: "reasoning" };
  if (p.text !== undefined) out.reasoning = p.text;
  if (hints) return assignFields(out, hints);
  const extras = signatureFields(p, "redacted");
  if (extras) out.extras = extras;
  return out;
}

/**
 * A media part as an `image_url` block: its own data back, or for a part from another format the
 * URL (or data URL) `mediaSource` (media.ts) reads out of its data, else the data as is.
 */
function renderMedia(p: MediaPart): LangchainBlock {
  const hints = langchainMeta.get(p);
  const out: Loose & { type: string } = { type: "image_url" };
  if (hints?.wire) {
    if (p.data !== undefined) out.image_url = p.data;
    return assignFields(out, hints);
  }
  const s = mediaSource(p);
  const url = s && urlOf(s);
  out.image_url = url !== undefined ? { url } : p.data;
  return out;
}

/** A content block; undefined for an opaque part from another format (dropped: that provider's own data). */
function renderBlock(p: Part, path: string, where: string): LangchainBlock | undefined {
  switch (p.type) {
    case "text": {
      const hints = langchainMeta.get(p);
      return hints?.bare ? p.text : assignFields({ type: "text", text: p.text }, hints);
    }
    case "media":
      return renderMedia(p);
    case "reasoning":
      return renderReasoning(p);
    case "opaque":
      return langchainMeta.get(p)?.wire ? (p.value as LangchainBlock) : undefined;
    case "tool-call":
    case "tool-result":
      throw formatError("E_UNKNOWN_PART", `a langchain ${where} message cannot hold a ${p.type} part`, path);
  }
}

/** Content from parts (`indices[k]` is the canonical index of parts[k], for error paths). */
function renderContent(
  parts: readonly Part[],
  indices: readonly number[] | undefined,
  hints: LangchainHints | undefined,
  i: number,
  where: string,
): LangchainContent {
  if (hints?.content !== "array" && parts.length === 1 && isPlainText(parts[0]!, F)) return parts[0]!.text;
  const out: LangchainBlock[] = [];
  for (let k = 0; k < parts.length; k++) {
    const block = renderBlock(parts[k]!, `messages[${i}].parts[${indices ? indices[k] : k}]`, where);
    if (block !== undefined) out.push(block);
  }
  return out;
}

function renderToolCall(p: ToolCallPart): LangchainToolCall {
  const hints = langchainMeta.get(p);
  const value = argsObject(p.args);
  const args = isObject(value) ? value : {};
  const out: LangchainToolCall = { name: p.name, args };
  if (!hints?.noId) out.id = p.id;
  if (!hints?.noType) out.type = "tool_call";
  return assignFields(out, hints);
}

function head(m: Message, hints: LangchainHints | undefined): LangchainMessage {
  const out = { [hints?.key ?? "type"]: hints?.kind ?? kDefaultKind[m.role] } as LangchainMessage;
  return out;
}

function finish(out: LangchainMessage, m: Message, hints: LangchainHints | undefined): LangchainMessage {
  if (hints?.id) out.id = m.id;
  return assignFields(out, hints);
}

function renderAi(m: Message, hints: LangchainHints | undefined, i: number): LangchainMessage {
  const content: Part[] = [];
  const indices: number[] = [];
  const calls: LangchainToolCall[] = [];
  m.parts.forEach((p, k) => {
    if (p.type === "tool-call") calls.push(renderToolCall(p));
    else {
      content.push(p);
      indices.push(k);
    }
  });
  const out = head(m, hints);
  out.content = renderContent(content, indices, hints, i, "ai");
  if (calls.length > 0 || !hints?.noCalls) out.tool_calls = calls;
  return finish(out, m, hints);
}

function renderTool(m: Message, hints: LangchainHints | undefined, i: number, sink: LangchainMessage[]): void {
  if (m.parts.length === 0) throw formatError("E_UNKNOWN_PART", "a langchain tool message needs a tool result", `messages[${i}].parts`);
  m.parts.forEach((p, k) => {
    if (p.type !== "tool-result")
      throw formatError("E_UNKNOWN_PART", `a langchain tool message holds a tool result, not a ${p.type} part`, `messages[${i}].parts[${k}]`);
    const out = head(m, hints);
    out.content = renderContent(p.content, undefined, hints, i, "tool");
    out.tool_call_id = p.callId;
    if (p.name !== undefined) out.name = p.name;
    if (p.isError !== undefined) out.status = p.isError ? "error" : "success";
    sink.push(k === 0 ? finish(out, m, hints) : out);
  });
}

function renderMessage(m: Message, i: number, sink: LangchainMessage[]): void {
  const hints = langchainMeta.get(m);
  switch (m.role) {
    case "system":
    case "user": {
      const out = head(m, hints);
      out.content = renderContent(m.parts, undefined, hints, i, m.role === "user" ? "human" : "system");
      sink.push(finish(out, m, hints));
      return;
    }
    case "assistant":
      sink.push(renderAi(m, hints, i));
      return;
    case "tool":
      renderTool(m, hints, i, sink);
      return;
  }
}

/** Renders canonical messages as LangChain message dicts. */
export function renderLangchain(messages: readonly Message[], options?: RenderOptions): LangchainWire {
  const out: LangchainWire = [];
  eachMessage(
    messages,
    F,
    options,
    (raw) => out.push(raw as LangchainMessage),
    (i) => {
      renderMessage(messages[i]!, i, out);
      return i + 1;
    },
  );
  return out;
}
