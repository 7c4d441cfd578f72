/**
 * The OpenAI Responses wire: the input item types ctxfold reads and writes, their zod schemas,
 * and what `meta["openai-responses"]` holds on canonical messages and parts (see
 * openai-responses.ts for the mapping).
 */
import { z } from "zod";
import type { MediaPart, OpaquePart, TextPart } from "../model/schema.js";
import { taggedUnion } from "./common.js";
import { formatMeta } from "./meta.js";

export const R = "openai-responses" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

export interface OpenAIResponsesInputText {
  type: "input_text";
  text: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesOutputText {
  type: "output_text";
  text: string;
  annotations?: unknown[];
  logprobs?: unknown[];
  [key: string]: unknown;
}
export interface OpenAIResponsesRefusal {
  type: "refusal";
  refusal: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesInputImage {
  type: "input_image";
  image_url?: string | null;
  file_id?: string | null;
  detail?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesInputFile {
  type: "input_file";
  file_data?: string;
  file_id?: string | null;
  file_url?: string;
  filename?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesInputAudio {
  type: "input_audio";
  input_audio: { data: string; format: string; [key: string]: unknown };
  [key: string]: unknown;
}
/** A content part of a type ctxfold does not know. */
export interface OpenAIResponsesOtherPart {
  type: string;
  [key: string]: unknown;
}
export type OpenAIResponsesContentPart =
  | OpenAIResponsesInputText
  | OpenAIResponsesOutputText
  | OpenAIResponsesRefusal
  | OpenAIResponsesInputImage
  | OpenAIResponsesInputFile
  | OpenAIResponsesInputAudio
  | OpenAIResponsesOtherPart;

export interface OpenAIResponsesMessageItem {
  type?: "message";
  role: "user" | "assistant" | "system" | "developer";
  content: string | OpenAIResponsesContentPart[];
  id?: string;
  status?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesFunctionCall {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  id?: string;
  status?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesFunctionCallOutput {
  type: "function_call_output";
  call_id: string;
  output: string | OpenAIResponsesContentPart[];
  id?: string | null;
  status?: string | null;
  [key: string]: unknown;
}
export interface OpenAIResponsesCustomToolCall {
  type: "custom_tool_call";
  call_id: string;
  name: string;
  input: string;
  id?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesCustomToolCallOutput {
  type: "custom_tool_call_output";
  call_id: string;
  output: string | OpenAIResponsesContentPart[];
  id?: string;
  [key: string]: unknown;
}
export interface OpenAIResponsesReasoning {
  type: "reasoning";
  id?: string;
  summary: { type: string; text: string; [key: string]: unknown }[];
  encrypted_content?: string | null;
  content?: { type: string; text: string; [key: string]: unknown }[];
  status?: string;
  [key: string]: unknown;
}
/**
 * A compaction item (server-side compaction, or `/responses/compact`): opaque state standing for
 * the history before it, sent back exactly as it came (carried whole as an OpaquePart).
 */
export interface OpenAIResponsesCompaction {
  type: "compaction";
  encrypted_content: string;
  id?: string | null;
  created_by?: string;
  [key: string]: unknown;
}
/** An item of a type ctxfold does not model (web_search_call, item_reference, compaction_trigger, ...). */
export interface OpenAIResponsesOtherItem {
  type: string;
  [key: string]: unknown;
}
export type OpenAIResponsesItem =
  | OpenAIResponsesMessageItem
  | OpenAIResponsesFunctionCall
  | OpenAIResponsesFunctionCallOutput
  | OpenAIResponsesCustomToolCall
  | OpenAIResponsesCustomToolCallOutput
  | OpenAIResponsesReasoning
  | OpenAIResponsesCompaction
  | OpenAIResponsesOtherItem;
export type OpenAIResponsesWire = OpenAIResponsesItem[];

// ---------------------------------------------------------------------------------------------
// Wire schemas. Loose objects: unknown fields pass and are carried.

export const OpenAIResponsesContentPartSchema = taggedUnion(
  new Map<string, z.ZodType>([
    ["input_text", z.looseObject({ type: z.literal("input_text"), text: z.string() })],
    [
      "output_text",
      z.looseObject({
        type: z.literal("output_text"),
        text: z.string(),
        annotations: z.array(z.unknown()).optional(),
        logprobs: z.array(z.unknown()).nullable().optional(),
      }),
    ],
    ["refusal", z.looseObject({ type: z.literal("refusal"), refusal: z.string() })],
    [
      "input_image",
      z.looseObject({
        type: z.literal("input_image"),
        image_url: z.string().nullable().optional(),
        file_id: z.string().nullable().optional(),
        detail: z.string().optional(),
      }),
    ],
    [
      "input_file",
      z.looseObject({
        type: z.literal("input_file"),
        file_data: z.string().optional(),
        file_id: z.string().nullable().optional(),
        file_url: z.string().optional(),
        filename: z.string().optional(),
      }),
    ],
    ["input_audio", z.looseObject({ type: z.literal("input_audio"), input_audio: z.looseObject({ data: z.string(), format: z.string() }) })],
  ]),
);
const ContentSchema = z.union([z.string(), z.array(OpenAIResponsesContentPartSchema)]);

export const OpenAIResponsesMessageItemSchema = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: ContentSchema,
  id: z.string().optional(),
  status: z.string().optional(),
});
export const OpenAIResponsesFunctionCallSchema = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
});
export const OpenAIResponsesFunctionCallOutputSchema = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string(),
  output: ContentSchema,
  id: z.string().nullable().optional(),
  status: z.string().nullable().optional(),
});
export const OpenAIResponsesCustomToolCallSchema = z.looseObject({
  type: z.literal("custom_tool_call"),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
  id: z.string().optional(),
});
export const OpenAIResponsesCustomToolCallOutputSchema = z.looseObject({
  type: z.literal("custom_tool_call_output"),
  call_id: z.string(),
  output: ContentSchema,
  id: z.string().optional(),
});
export const OpenAIResponsesReasoningSchema = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string().optional(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })),
  encrypted_content: z.string().nullable().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string() })).optional(),
  status: z.string().optional(),
});
export const OpenAIResponsesCompactionSchema = z.looseObject({
  type: z.literal("compaction"),
  encrypted_content: z.string(),
  id: z.string().nullable().optional(),
});
export const OpenAIResponsesOtherItemSchema = z.looseObject({ type: z.string() });

export const kItemSchemas = new Map<string, z.ZodType>([
  ["message", OpenAIResponsesMessageItemSchema],
  ["function_call", OpenAIResponsesFunctionCallSchema],
  ["function_call_output", OpenAIResponsesFunctionCallOutputSchema],
  ["custom_tool_call", OpenAIResponsesCustomToolCallSchema],
  ["custom_tool_call_output", OpenAIResponsesCustomToolCallOutputSchema],
  ["reasoning", OpenAIResponsesReasoningSchema],
  ["compaction", OpenAIResponsesCompactionSchema],
]);
/** Any input item: known types checked against their schema, other types passed as they are. */
export const OpenAIResponsesItemSchema = z.union([OpenAIResponsesMessageItemSchema, taggedUnion(kItemSchemas)]);

export const kRoles: ReadonlySet<string> = new Set(["user", "assistant", "system", "developer"]);
/** Only run to word the error when an item is not an object with a usable `type`. */
export const kEnvelope = z.looseObject({ type: z.string().optional() });
export const kWireArray = z.array(z.unknown());

// ---------------------------------------------------------------------------------------------
// What meta["openai-responses"] holds.

/** `meta["openai-responses"]` on a message: its (first) message item. */
export interface OpenAIResponsesMessageMeta {
  /** The wire role where it differs from the canonical one: `developer` on a system message. */
  role?: "developer";
  /** The message item's content was an array. */
  content?: "array";
  /** Fields of the message item ctxfold does not model (type, id, status, unknown ones). */
  fields?: Record<string, unknown>;
}

/** `meta["openai-responses"]` on a part. Its presence on a ReasoningPart marks it as this format's own. */
export interface OpenAIResponsesPartMeta {
  /** A text part's wire content part type (input_text, output_text, refusal): rendered exactly so. */
  type?: string;
  /** A MediaPart's `data` / OpaquePart's `value` is this format's wire content part itself. */
  wire?: true;
  /** An OpaquePart's `value` is a whole input item. */
  item?: true;
  /** A ToolCallPart / ToolResultPart written as custom_tool_call / custom_tool_call_output. */
  custom?: true;
  /** A ToolResultPart's output was an array. */
  output?: "array";
  /** A ReasoningPart's summary array, where its text alone would not give it back. */
  summary?: OpenAIResponsesReasoning["summary"];
  /** Unknown fields of the wire object (content part, call, output or reasoning item). */
  fields?: Record<string, unknown>;
}

/** @internal `meta["openai-responses"]` of canonical messages and parts. */
export const responsesMeta = formatMeta<OpenAIResponsesMessageMeta, OpenAIResponsesPartMeta>(R);

/** The canonical parts a wire content array maps to. */
export type ContentPart = TextPart | MediaPart | OpaquePart;

/** A reasoning item's summary as one text: its texts joined by a blank line. */
export function joinSummary(summary: readonly { text: string }[]): string | undefined {
  return summary.length === 0 ? undefined : summary.map((s) => s.text).join("\n\n");
}
