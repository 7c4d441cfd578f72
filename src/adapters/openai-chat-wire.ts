/**
 * The OpenAI Chat Completions wire: the message types ctxfold reads and writes, their zod
 * schemas, and what `meta["openai-chat"]` holds on canonical messages and parts (see
 * openai-chat.ts for the mapping).
 */
import { z } from "zod";
import type { MediaPart, OpaquePart, TextPart } from "../model/schema.js";
import { taggedUnion } from "./common.js";
import { formatMeta } from "./meta.js";

export const F = "openai-chat" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

export interface OpenAIChatTextPart {
  type: "text";
  text: string;
  [key: string]: unknown;
}
export interface OpenAIChatRefusalPart {
  type: "refusal";
  refusal: string;
  [key: string]: unknown;
}
export interface OpenAIChatImagePart {
  type: "image_url";
  image_url: { url: string; detail?: string; [key: string]: unknown };
  [key: string]: unknown;
}
export interface OpenAIChatAudioPart {
  type: "input_audio";
  input_audio: { data: string; format: string; [key: string]: unknown };
  [key: string]: unknown;
}
export interface OpenAIChatFilePart {
  type: "file";
  file: { file_data?: string; file_id?: string; filename?: string; [key: string]: unknown };
  [key: string]: unknown;
}
/** A content part of a type ctxfold does not know. */
export interface OpenAIChatOtherPart {
  type: string;
  [key: string]: unknown;
}
export type OpenAIChatContentPart =
  | OpenAIChatTextPart
  | OpenAIChatRefusalPart
  | OpenAIChatImagePart
  | OpenAIChatAudioPart
  | OpenAIChatFilePart
  | OpenAIChatOtherPart;
export type OpenAIChatContent = string | OpenAIChatContentPart[] | null;

export interface OpenAIChatFunctionToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string; [key: string]: unknown };
  [key: string]: unknown;
}
export interface OpenAIChatCustomToolCall {
  id: string;
  type: "custom";
  custom: { name: string; input: string; [key: string]: unknown };
  [key: string]: unknown;
}
/** A tool call of a type ctxfold does not know. */
export interface OpenAIChatOtherToolCall {
  type: string;
  [key: string]: unknown;
}
export type OpenAIChatToolCall = OpenAIChatFunctionToolCall | OpenAIChatCustomToolCall | OpenAIChatOtherToolCall;

export interface OpenAIChatFunctionCall {
  name: string;
  arguments: string;
  [key: string]: unknown;
}

export interface OpenAIChatSystemMessage {
  role: "system" | "developer";
  content?: OpenAIChatContent;
  name?: string;
  [key: string]: unknown;
}
export interface OpenAIChatUserMessage {
  role: "user";
  content?: OpenAIChatContent;
  name?: string;
  [key: string]: unknown;
}
export interface OpenAIChatAssistantMessage {
  role: "assistant";
  content?: OpenAIChatContent;
  tool_calls?: OpenAIChatToolCall[] | null;
  function_call?: OpenAIChatFunctionCall | null;
  refusal?: string | null;
  name?: string;
  audio?: { id: string; [key: string]: unknown } | null;
  [key: string]: unknown;
}
export interface OpenAIChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content?: OpenAIChatContent;
  [key: string]: unknown;
}
export interface OpenAIChatFunctionMessage {
  role: "function";
  name: string;
  content?: OpenAIChatContent;
  [key: string]: unknown;
}
export type OpenAIChatMessage =
  | OpenAIChatSystemMessage
  | OpenAIChatUserMessage
  | OpenAIChatAssistantMessage
  | OpenAIChatToolMessage
  | OpenAIChatFunctionMessage;
export type OpenAIChatWire = OpenAIChatMessage[];

// ---------------------------------------------------------------------------------------------
// Wire schemas. Loose objects: unknown fields pass and are carried.

export const OpenAIChatTextPartSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
export const OpenAIChatRefusalPartSchema = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });
export const OpenAIChatImagePartSchema = z.looseObject({
  type: z.literal("image_url"),
  image_url: z.looseObject({ url: z.string(), detail: z.string().optional() }),
});
export const OpenAIChatAudioPartSchema = z.looseObject({
  type: z.literal("input_audio"),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
export const OpenAIChatFilePartSchema = z.looseObject({
  type: z.literal("file"),
  file: z.looseObject({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
});
export const OpenAIChatContentPartSchema = taggedUnion(
  new Map<string, z.ZodType>([
    ["text", OpenAIChatTextPartSchema],
    ["refusal", OpenAIChatRefusalPartSchema],
    ["image_url", OpenAIChatImagePartSchema],
    ["input_audio", OpenAIChatAudioPartSchema],
    ["file", OpenAIChatFilePartSchema],
  ]),
);
/** Content on every role: string, part array, null or absent (kept as given; the API is stricter). */
const ContentSchema = z
  .union([z.string(), z.array(OpenAIChatContentPartSchema)])
  .nullable()
  .optional();

export const OpenAIChatFunctionToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal("function"),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export const OpenAIChatCustomToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal("custom"),
  custom: z.looseObject({ name: z.string(), input: z.string() }),
});
export const OpenAIChatToolCallSchema = taggedUnion(
  new Map<string, z.ZodType>([
    ["function", OpenAIChatFunctionToolCallSchema],
    ["custom", OpenAIChatCustomToolCallSchema],
  ]),
);

export const OpenAIChatSystemMessageSchema = z.looseObject({ role: z.literal("system"), content: ContentSchema, name: z.string().optional() });
export const OpenAIChatDeveloperMessageSchema = z.looseObject({ role: z.literal("developer"), content: ContentSchema, name: z.string().optional() });
export const OpenAIChatUserMessageSchema = z.looseObject({ role: z.literal("user"), content: ContentSchema, name: z.string().optional() });
export const OpenAIChatAssistantMessageSchema = z.looseObject({
  role: z.literal("assistant"),
  content: ContentSchema,
  tool_calls: z.array(OpenAIChatToolCallSchema).nullable().optional(),
  function_call: z.looseObject({ name: z.string(), arguments: z.string() }).nullable().optional(),
  refusal: z.string().nullable().optional(),
  name: z.string().optional(),
  audio: z.looseObject({ id: z.string() }).nullable().optional(),
});
export const OpenAIChatToolMessageSchema = z.looseObject({ role: z.literal("tool"), tool_call_id: z.string(), content: ContentSchema });
export const OpenAIChatFunctionMessageSchema = z.looseObject({ role: z.literal("function"), name: z.string(), content: ContentSchema });
export const OpenAIChatMessageSchema = z.discriminatedUnion("role", [
  OpenAIChatSystemMessageSchema,
  OpenAIChatDeveloperMessageSchema,
  OpenAIChatUserMessageSchema,
  OpenAIChatAssistantMessageSchema,
  OpenAIChatToolMessageSchema,
  OpenAIChatFunctionMessageSchema,
]);

export const kRoleSchemas = new Map<string, z.ZodType>([
  ["system", OpenAIChatSystemMessageSchema],
  ["developer", OpenAIChatDeveloperMessageSchema],
  ["user", OpenAIChatUserMessageSchema],
  ["assistant", OpenAIChatAssistantMessageSchema],
  ["tool", OpenAIChatToolMessageSchema],
  ["function", OpenAIChatFunctionMessageSchema],
]);
/** Only run to word the error when a message is not an object with a string role. */
export const kEnvelope = z.looseObject({ role: z.string() });
export const kWireArray = z.array(z.unknown());

// ---------------------------------------------------------------------------------------------
// What meta["openai-chat"] holds.

/** How content was written, kept where the plain rendering would write it otherwise. */
export type ContentShape = "array" | "null" | "absent";

/** `meta["openai-chat"]` on a message. */
export interface OpenAIChatMessageMeta {
  /** The wire role where it differs from the canonical one: `developer` on a system message. */
  role?: "developer";
  content?: ContentShape;
  /** Wire fields ctxfold does not model (name, refusal, audio, unknown ones), carried unchanged. */
  fields?: Record<string, unknown>;
}

/** `meta["openai-chat"]` on a part. */
export interface OpenAIChatPartMeta {
  /** A MediaPart's `data` / OpaquePart's `value` is this format's wire content part itself. */
  wire?: true;
  /** A text part written as a `refusal` content part. */
  refusal?: true;
  /** An OpaquePart that is an entry of `tool_calls` of an unknown type. */
  toolCall?: true;
  /** A ToolCallPart written as a `custom` tool call. */
  custom?: true;
  /** A ToolCallPart written as the legacy `function_call`. */
  functionCall?: true;
  /** A ToolResultPart written as a legacy `function` message. */
  function?: true;
  /** A ToolResultPart's content shape. */
  content?: ContentShape;
  /** Unknown fields of the wire object (content part, tool call, tool or function message). */
  fields?: Record<string, unknown>;
  /** Unknown fields of a tool call's `function` / `custom` object. */
  fnFields?: Record<string, unknown>;
}

/** @internal `meta["openai-chat"]` of canonical messages and parts. */
export const chatMeta = formatMeta<OpenAIChatMessageMeta, OpenAIChatPartMeta>(F);

/** The canonical parts a wire content array maps to. */
export type ContentPart = TextPart | MediaPart | OpaquePart;
