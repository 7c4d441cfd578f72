/**
 * Rendering canonical messages as an Anthropic Messages request `{ system?, messages }` (the
 * mapping is in anthropic.ts).
 */
import type { MediaPart, Message, Part, ReasoningPart, ResultContentPart, ToolResultPart } from "../model/schema.js";
import { argsObject, formatError, type RenderOptions, unrenderable } from "./common.js";
import { base64Of, foreignSource } from "./media.js";
import {
  type AnthropicBlock,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicOtherBlock,
  type AnthropicPartMeta,
  type AnthropicSource,
  type AnthropicSystem,
  type AnthropicTextBlock,
  type AnthropicThinkingBlock,
  type AnthropicToolResultBlock,
  type AnthropicToolResultContent,
  type AnthropicWire,
  anthropicMeta,
  F,
  isPlain,
} from "./anthropic-wire.js";
import { eachMessage } from "./render.js";

/** Copies `fields` onto `block` without overwriting what the canonical part set. */
function fillFields<T extends Record<string, unknown>>(block: T, fields: Record<string, unknown> | undefined): T {
  if (fields) for (const k in fields) if (!(k in block)) (block as Record<string, unknown>)[k] = fields[k];
  return block;
}

function documentType(mediaType: string): boolean {
  return mediaType === "application/pdf" || mediaType.startsWith("text/");
}

/** An image or document block for a MediaPart of another format, from what `mediaSource` reads. */
function foreignMedia(p: MediaPart, where: () => string): AnthropicImageBlock | AnthropicDocumentBlock {
  const s = foreignSource(p, F, where);
  const mediaType = s.mediaType;
  const document = mediaType !== undefined && documentType(mediaType);
  if (mediaType !== undefined && !document && !mediaType.startsWith("image/")) return unrenderable(F, `a ${mediaType} media part`, where());
  let source: AnthropicSource;
  const b64 = base64Of(s);
  if (s.fileId !== undefined) source = { type: "file", file_id: s.fileId };
  else if (b64 !== undefined) source = mediaType !== undefined ? { type: "base64", media_type: mediaType, data: b64 } : { type: "base64", data: b64 };
  else if (s.url !== undefined && !s.url.startsWith("data:")) source = { type: "url", url: s.url };
  else return unrenderable(F, "a media part whose data URL is not base64", where());
  return document ? { type: "document", source } : { type: "image", source };
}

function renderReasoning(p: ReasoningPart): AnthropicBlock | undefined {
  const pm = anthropicMeta.get(p);
  if (p.text === undefined && p.redacted !== undefined) {
    return pm?.native ? fillFields({ type: "redacted_thinking", data: p.redacted }, pm.fields) : undefined;
  }
  if (!pm?.native && p.signature === undefined) return undefined;
  const block: AnthropicThinkingBlock = { type: "thinking", thinking: p.text ?? "" };
  if (p.signature !== undefined) block.signature = p.signature;
  return fillFields(block, pm?.fields);
}

function renderResultContent(
  parts: readonly ResultContentPart[],
  pm: AnthropicPartMeta | undefined,
  where: (k: number) => string,
): string | AnthropicToolResultContent[] | undefined {
  if (pm?.content !== "array") {
    if (parts.length === 0) return undefined;
    if (parts.length === 1 && isPlain(parts[0])) return parts[0].text;
  }
  const out: AnthropicToolResultContent[] = [];
  for (let k = 0; k < parts.length; k++) {
    const b = renderBlock(parts[k], () => where(k));
    if (b !== undefined) out.push(b);
  }
  return out;
}

function renderResult(p: ToolResultPart, where: () => string): AnthropicToolResultBlock {
  const pm = anthropicMeta.get(p);
  const block: AnthropicToolResultBlock = { type: "tool_result", tool_use_id: p.callId };
  const content = renderResultContent(p.content, pm, (k) => `${where()}.content[${k}]`);
  if (content !== undefined) block.content = content;
  if (p.isError !== undefined) block.is_error = p.isError;
  return fillFields(block, pm?.fields);
}

/** The wire block of one part; undefined for a part of another format that Anthropic cannot take. */
function renderBlock(p: Part, where: () => string): AnthropicBlock | undefined {
  const pm = anthropicMeta.get(p);
  switch (p.type) {
    case "text":
      return fillFields({ type: "text", text: p.text }, pm?.fields);
    case "tool-call":
      return fillFields({ type: "tool_use", id: p.id, name: p.name, input: argsObject(p.args) }, pm?.fields);
    case "tool-result":
      return renderResult(p, where);
    case "reasoning":
      return renderReasoning(p);
    case "media":
      return pm?.type ? fillFields({ type: pm.type, source: p.data as AnthropicSource }, pm.fields) : foreignMedia(p, where);
    case "opaque":
      return pm?.wire ? (p.value as AnthropicBlock) : undefined;
    default:
      return unrenderable(F, `a part of type ${JSON.stringify((p as { type: unknown }).type)}`, where());
  }
}

function renderBlocks(parts: readonly Part[], i: number, out: AnthropicBlock[]): AnthropicBlock[] {
  for (let k = 0; k < parts.length; k++) {
    const b = renderBlock(parts[k], () => `messages[${i}].parts[${k}]`);
    if (b !== undefined) out.push(b);
  }
  return out;
}

function wireMessage(role: "user" | "assistant", content: string | AnthropicBlock[], fields: Record<string, unknown> | undefined): AnthropicMessage {
  return fillFields({ role, content }, fields);
}

function renderPlain(m: Message, role: "user" | "assistant", i: number): AnthropicMessage {
  const cm = anthropicMeta.message(m);
  const parts = m.parts;
  const content = cm?.content !== "array" && !cm?.tail && parts.length === 1 && isPlain(parts[0]) ? parts[0].text : renderBlocks(parts, i, []);
  return wireMessage(role, content, cm?.fields);
}

/**
 * A tool message parsed from Anthropic, with the tail user message after it if there is one:
 * their blocks interleaved as the `blocks` hint says, leftovers after.
 */
function renderSplit(tool: Message, order: string, tail: Message | undefined, i: number): AnthropicMessage {
  const out: AnthropicBlock[] = [];
  const rs = tool.parts;
  const os = tail ? tail.parts : [];
  let r = 0;
  let o = 0;
  const push = (p: Part, at: number, k: number) => {
    const b = renderBlock(p, () => `messages[${at}].parts[${k}]`);
    if (b !== undefined) out.push(b);
  };
  for (let c = 0; c < order.length; c++) {
    if (order.charCodeAt(c) === 114 /* r */) {
      if (r < rs.length) push(rs[r], i, r++);
    } else if (o < os.length) push(os[o], i + 1, o++);
  }
  while (r < rs.length) push(rs[r], i, r++);
  while (o < os.length) push(os[o], i + 1, o++);
  return wireMessage("user", out, anthropicMeta.message(tool)?.fields);
}

/** Renders the tool message(s) at `i` into `out`; returns the index after them. */
function renderTool(messages: readonly Message[], i: number, out: AnthropicMessage[]): number {
  const order = anthropicMeta.message(messages[i])?.blocks;
  if (typeof order === "string") {
    const next = messages[i + 1];
    const tail = next !== undefined && next.role === "user" && anthropicMeta.message(next)?.tail ? next : undefined;
    out.push(renderSplit(messages[i], order, tail, i));
    return tail ? i + 2 : i + 1;
  }
  const blocks: AnthropicBlock[] = [];
  let j = i;
  while (j < messages.length && messages[j].role === "tool" && typeof anthropicMeta.message(messages[j])?.blocks !== "string") {
    renderBlocks(messages[j].parts, j, blocks);
    j++;
  }
  out.push({ role: "user", content: blocks });
  return j;
}

function renderSystem(m: Message, i: number): AnthropicSystem {
  const cm = anthropicMeta.message(m);
  const parts = m.parts;
  if (cm?.content !== "array" && parts.length === 1 && isPlain(parts[0])) return parts[0].text;
  const out: (AnthropicTextBlock | AnthropicOtherBlock)[] = [];
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    if (p.type === "text") out.push(fillFields({ type: "text", text: p.text }, anthropicMeta.get(p)?.fields));
    else if (p.type === "opaque" && anthropicMeta.get(p)?.wire) out.push(p.value as AnthropicOtherBlock);
    else if (p.type !== "opaque") {
      throw formatError(
        "E_UNKNOWN_PART",
        `a ${p.type} part in a system message: the ${F} system parameter takes text blocks only`,
        `messages[${i}].parts[${k}]`,
      );
    }
  }
  return out;
}

/** Several system values as one: text blocks of them all, in order. */
function joinSystem(values: AnthropicSystem[]): AnthropicSystem | undefined {
  if (values.length <= 1) return values[0];
  const out: (AnthropicTextBlock | AnthropicOtherBlock)[] = [];
  for (const v of values) {
    if (typeof v === "string") out.push({ type: "text", text: v });
    else for (const b of v) out.push(b);
  }
  return out;
}

/**
 * Renders canonical messages as `{ system?, messages }`, handing back the parsed wire object
 * for every untouched message (see the module comment for the mapping).
 */
export function renderAnthropic(messages: readonly Message[], options?: RenderOptions): AnthropicWire {
  const out: AnthropicMessage[] = [];
  const systems: AnthropicSystem[] = [];
  let afterMessages = false;
  /** The system message at i joins the `system` parameter, which it can only do before the conversation starts. */
  const addSystem = (i: number, value: () => AnthropicSystem) => {
    if (out.length > 0) {
      throw formatError(
        "E_BAD_INPUT",
        `a system message after the conversation started: ${F} takes system text only as the \`system\` parameter`,
        `messages[${i}]`,
      );
    }
    systems.push(value());
    if (anthropicMeta.message(messages[i])?.afterMessages) afterMessages = true;
  };
  const reused = (raw: unknown, i: number) => {
    if (messages[i].role === "system") addSystem(i, () => raw as AnthropicSystem);
    else out.push(raw as AnthropicMessage);
  };
  eachMessage(messages, F, options, reused, (i) => {
    const m = messages[i];
    if (m.role === "system") addSystem(i, () => renderSystem(m, i));
    else if (m.role === "tool") return renderTool(messages, i, out);
    else if (m.role === "user" || m.role === "assistant") out.push(renderPlain(m, m.role, i));
    else throw formatError("E_UNKNOWN_ROLE", `unknown canonical role ${JSON.stringify((m as { role: unknown }).role)}`, `messages[${i}].role`);
    return i + 1;
  });
  const system = joinSystem(systems);
  if (system === undefined) return { messages: out };
  return afterMessages ? { messages: out, system } : { system, messages: out };
}
