/**
 * The Anthropic Messages wire: the block and message types ctxfold reads and writes, their zod
 * schemas, and what `meta.anthropic` holds on canonical messages and parts (see anthropic.ts
 * for the mapping).
 */
import { z } from "zod";
import type { Part, TextPart } from "../model/schema.js";
import { taggedUnion } from "./common.js";
import { formatMeta, isPlainText } from "./meta.js";

export const F = "anthropic" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: unknown;
  citations?: unknown[] | null;
  [key: string]: unknown;
}
/** An image or document `source`: base64, url, file, text or content. */
export interface AnthropicSource {
  type: string;
  media_type?: string;
  data?: unknown;
  url?: string;
  file_id?: string;
  [key: string]: unknown;
}
export interface AnthropicImageBlock {
  type: "image";
  source: AnthropicSource;
  [key: string]: unknown;
}
export interface AnthropicDocumentBlock {
  type: "document";
  source: AnthropicSource;
  title?: string | null;
  context?: string | null;
  [key: string]: unknown;
}
export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  [key: string]: unknown;
}
/** A block of a type ctxfold does not know (server_tool_use, web_search_tool_result, ...). */
export interface AnthropicOtherBlock {
  type: string;
  [key: string]: unknown;
}
export type AnthropicToolResultContent = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicOtherBlock;
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | AnthropicToolResultContent[];
  is_error?: boolean;
  [key: string]: unknown;
}
export interface AnthropicThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string;
  [key: string]: unknown;
}
export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
  [key: string]: unknown;
}
/**
 * A compaction block: the summary standing for the conversation before it. Threshold compaction
 * (`compact_20260112`) returns `content` and `encrypted_content` at the start of an assistant
 * response; on-demand compaction (`compact-2026-09-04`) returns `content` and a `signature`.
 * Either is sent back exactly as it came (carried whole as an OpaquePart).
 */
export interface AnthropicCompactionBlock {
  type: "compaction";
  content?: string | null;
  encrypted_content?: string | null;
  signature?: string;
  cache_control?: unknown;
  [key: string]: unknown;
}
export type AnthropicBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicCompactionBlock
  | AnthropicOtherBlock;

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
  [key: string]: unknown;
}
export type AnthropicSystem = string | (AnthropicTextBlock | AnthropicOtherBlock)[];
/** What this adapter reads and writes of a Messages API request. */
export interface AnthropicWire {
  system?: AnthropicSystem;
  messages: AnthropicMessage[];
}

// ---------------------------------------------------------------------------------------------
// Wire schemas. Loose objects: unknown fields pass and are carried.

export const AnthropicTextBlockSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
export const AnthropicSourceSchema = z.looseObject({ type: z.string() });
export const AnthropicImageBlockSchema = z.looseObject({ type: z.literal("image"), source: AnthropicSourceSchema });
export const AnthropicDocumentBlockSchema = z.looseObject({ type: z.literal("document"), source: AnthropicSourceSchema });
export const AnthropicToolUseBlockSchema = z.looseObject({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.unknown() });
export const AnthropicToolResultContentSchema = taggedUnion(
  new Map<string, z.ZodType>([
    ["text", AnthropicTextBlockSchema],
    ["image", AnthropicImageBlockSchema],
    ["document", AnthropicDocumentBlockSchema],
  ]),
);
export const AnthropicToolResultBlockSchema = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(AnthropicToolResultContentSchema)]).optional(),
  is_error: z.boolean().optional(),
});
export const AnthropicThinkingBlockSchema = z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().optional() });
export const AnthropicRedactedThinkingBlockSchema = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });
export const AnthropicCompactionBlockSchema = z.looseObject({
  type: z.literal("compaction"),
  content: z.string().nullable().optional(),
  encrypted_content: z.string().nullable().optional(),
  signature: z.string().optional(),
});
export const AnthropicBlockSchema = taggedUnion(
  new Map<string, z.ZodType>([
    ["text", AnthropicTextBlockSchema],
    ["image", AnthropicImageBlockSchema],
    ["document", AnthropicDocumentBlockSchema],
    ["tool_use", AnthropicToolUseBlockSchema],
    ["tool_result", AnthropicToolResultBlockSchema],
    ["thinking", AnthropicThinkingBlockSchema],
    ["redacted_thinking", AnthropicRedactedThinkingBlockSchema],
    ["compaction", AnthropicCompactionBlockSchema],
  ]),
);
export const AnthropicMessageSchema = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(AnthropicBlockSchema)]),
});
/** The API takes text blocks only; blocks of other types are carried as they are. */
export const AnthropicSystemSchema = z.union([z.string(), z.array(taggedUnion(new Map<string, z.ZodType>([["text", AnthropicTextBlockSchema]])))]);
/** A whole `{ system?, messages }` request (parse checks one message at a time instead). */
export const AnthropicWireSchema = z.looseObject({ system: AnthropicSystemSchema.optional(), messages: z.array(AnthropicMessageSchema) });

export const kWireArray = z.array(z.unknown());

// ---------------------------------------------------------------------------------------------
// What meta.anthropic holds.

/** `meta.anthropic` on a message. */
export interface AnthropicMessageMeta {
  /** Content was a block array where the plain rendering would write a string. */
  content?: "array";
  /** Fields of the wire message besides role and content, carried unchanged. */
  fields?: Record<string, unknown>;
  /**
   * On a tool message: the block order of the wire user message it came from, one letter a
   * block: `r` the next of its results, `o` the next part of the `tail` user message after it.
   * A tool message with this hint is one wire message and is never merged with its neighbours.
   */
  blocks?: string;
  /** On a user message: the non-result blocks of the wire message the tool message before it came from. */
  tail?: true;
  /** On the system message: `system` came after `messages` in the request object. */
  afterMessages?: true;
}

/** `meta.anthropic` on a part. */
export interface AnthropicPartMeta {
  /** Wire fields not modelled by the canonical part: cache_control, citations, caller, unknown ones. */
  fields?: Record<string, unknown>;
  /** On a tool result: content was an array where the plain rendering would write a string or nothing. */
  content?: "array";
  /** On a MediaPart: the wire block type (its `data` is the block's `source`). */
  type?: "image" | "document";
  /** On a ReasoningPart: parsed from an Anthropic thinking block (so it renders even unsigned). */
  native?: true;
  /** On an OpaquePart: its value is an Anthropic block, safe to send back. */
  wire?: true;
}

/** @internal `meta.anthropic` of canonical messages and parts. */
export const anthropicMeta = formatMeta<AnthropicMessageMeta, AnthropicPartMeta>(F);

/** Whether a part renders as a plain string where the format allows one: text without any `meta.anthropic`. */
export function isPlain(p: Part): p is TextPart {
  return isPlainText(p, F, (own) => own === undefined);
}
