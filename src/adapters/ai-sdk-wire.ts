/**
 * The Vercel AI SDK wire: the `ModelMessage` types of AI SDK 5 (with AI SDK 4's `CoreMessage`
 * field names) ctxfold reads and writes, their zod schemas, and what `meta["ai-sdk"]` holds on
 * canonical messages and parts (see ai-sdk.ts for the mapping).
 */
import { z } from "zod";
import { taggedUnion } from "./common.js";
import { formatMeta } from "./meta.js";

export const F = "ai-sdk" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

/** `providerOptions`: provider name to that provider's options. */
export type AiSdkProviderOptions = Record<string, Record<string, unknown>>;

/** Any other fields of a part, kept as they are. */
export interface Loose {
  [key: string]: unknown;
}

export interface AiSdkTextPart extends Loose {
  type: "text";
  text: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkImagePart extends Loose {
  type: "image";
  image: unknown;
  mediaType?: string;
  /** AI SDK 4. */
  mimeType?: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkFilePart extends Loose {
  type: "file";
  data: unknown;
  filename?: string;
  mediaType?: string;
  /** AI SDK 4. */
  mimeType?: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkReasoningPart extends Loose {
  type: "reasoning";
  text: string;
  /** AI SDK 4. */
  signature?: string;
  providerOptions?: AiSdkProviderOptions;
}
/** AI SDK 4 only. */
export interface AiSdkRedactedReasoningPart extends Loose {
  type: "redacted-reasoning";
  data: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkToolCallPart extends Loose {
  type: "tool-call";
  toolCallId: string;
  toolName: string;
  /** AI SDK 5: any JSON value. */
  input?: unknown;
  /** AI SDK 4. */
  args?: unknown;
  providerExecuted?: boolean;
  providerOptions?: AiSdkProviderOptions;
}
/** An item of a `content` tool output (AI SDK 5) or of `experimental_content` (AI SDK 4). */
export type AiSdkResultItem =
  | (Loose & { type: "text"; text: string })
  | (Loose & { type: "media"; data: unknown; mediaType?: string })
  | (Loose & { type: "image"; data: unknown; mimeType?: string; mediaType?: string })
  | (Loose & { type: string });
export type AiSdkToolResultOutput =
  | (Loose & { type: "text" | "error-text"; value: string })
  | (Loose & { type: "json" | "error-json"; value: unknown })
  | (Loose & { type: "content"; value: AiSdkResultItem[] })
  | (Loose & { type: string });
export interface AiSdkToolResultPart extends Loose {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  /** AI SDK 5. */
  output?: AiSdkToolResultOutput;
  /** AI SDK 4. */
  result?: unknown;
  /** AI SDK 4. */
  isError?: boolean;
  /** AI SDK 4. */
  experimental_content?: AiSdkResultItem[];
  providerOptions?: AiSdkProviderOptions;
}
/** A part whose type this adapter does not model, carried unchanged. */
export interface AiSdkOtherPart extends Loose {
  type: string;
}
export type AiSdkPart =
  | AiSdkTextPart
  | AiSdkImagePart
  | AiSdkFilePart
  | AiSdkReasoningPart
  | AiSdkRedactedReasoningPart
  | AiSdkToolCallPart
  | AiSdkToolResultPart
  | AiSdkOtherPart;

export interface AiSdkSystemMessage extends Loose {
  role: "system";
  content: string;
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkUserMessage extends Loose {
  role: "user";
  content: string | AiSdkPart[];
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkAssistantMessage extends Loose {
  role: "assistant";
  content: string | AiSdkPart[];
  providerOptions?: AiSdkProviderOptions;
}
export interface AiSdkToolMessage extends Loose {
  role: "tool";
  content: AiSdkPart[];
  providerOptions?: AiSdkProviderOptions;
}
export type AiSdkMessage = AiSdkSystemMessage | AiSdkUserMessage | AiSdkAssistantMessage | AiSdkToolMessage;
export type AiSdkWire = AiSdkMessage[];

// ---------------------------------------------------------------------------------------------
// Wire schemas: loose objects (unknown fields pass), one safeParse per message.

export const AiSdkProviderOptionsSchema = z.record(z.string(), z.record(z.string(), z.unknown()));
const po = AiSdkProviderOptionsSchema.optional();
/** A union tagged by `type`: known tags checked, other tags pass (they become opaque parts). */
const byType = (schemas: Record<string, z.ZodType>) => taggedUnion(new Map(Object.entries(schemas)));

export const AiSdkResultItemSchema = byType({
  text: z.looseObject({ type: z.literal("text"), text: z.string() }),
  media: z.looseObject({ type: z.literal("media"), data: z.unknown(), mediaType: z.string().optional() }),
  image: z.looseObject({ type: z.literal("image"), data: z.unknown(), mimeType: z.string().optional(), mediaType: z.string().optional() }),
});

export const AiSdkToolResultOutputSchema = byType({
  text: z.looseObject({ type: z.literal("text"), value: z.string() }),
  "error-text": z.looseObject({ type: z.literal("error-text"), value: z.string() }),
  json: z.looseObject({ type: z.literal("json"), value: z.unknown() }),
  "error-json": z.looseObject({ type: z.literal("error-json"), value: z.unknown() }),
  content: z.looseObject({ type: z.literal("content"), value: z.array(AiSdkResultItemSchema) }),
});

export const AiSdkPartSchema = byType({
  text: z.looseObject({ type: z.literal("text"), text: z.string(), providerOptions: po }),
  image: z.looseObject({
    type: z.literal("image"),
    image: z.unknown(),
    mediaType: z.string().optional(),
    mimeType: z.string().optional(),
    providerOptions: po,
  }),
  file: z.looseObject({
    type: z.literal("file"),
    data: z.unknown(),
    filename: z.string().optional(),
    mediaType: z.string().optional(),
    mimeType: z.string().optional(),
    providerOptions: po,
  }),
  reasoning: z.looseObject({ type: z.literal("reasoning"), text: z.string(), signature: z.string().optional(), providerOptions: po }),
  "redacted-reasoning": z.looseObject({ type: z.literal("redacted-reasoning"), data: z.string(), providerOptions: po }),
  "tool-call": z
    .looseObject({ type: z.literal("tool-call"), toolCallId: z.string(), toolName: z.string(), providerExecuted: z.boolean().optional(), providerOptions: po })
    .refine((p) => p.input !== undefined || p.args !== undefined, {
      message: "Invalid input: expected `input` (AI SDK 5) or `args` (AI SDK 4)",
      path: ["input"],
    }),
  "tool-result": z
    .looseObject({
      type: z.literal("tool-result"),
      toolCallId: z.string(),
      toolName: z.string(),
      output: AiSdkToolResultOutputSchema.optional(),
      isError: z.boolean().optional(),
      experimental_content: z.array(AiSdkResultItemSchema).optional(),
      providerOptions: po,
    })
    .refine((p) => p.output !== undefined || p.result !== undefined, {
      message: "Invalid input: expected `output` (AI SDK 5) or `result` (AI SDK 4)",
      path: ["output"],
    }),
});

const partsOrString = z.union([z.string(), z.array(AiSdkPartSchema)]);
export const AiSdkMessageSchema = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: z.string(), providerOptions: po }),
  z.looseObject({ role: z.literal("user"), content: partsOrString, providerOptions: po }),
  z.looseObject({ role: z.literal("assistant"), content: partsOrString, providerOptions: po }),
  z.looseObject({ role: z.literal("tool"), content: z.array(AiSdkPartSchema), providerOptions: po }),
]);

// ---------------------------------------------------------------------------------------------
// Hints: what meta["ai-sdk"] holds on messages and parts.

/** meta["ai-sdk"] of a canonical message or part parsed from the AI SDK. */
export interface AiSdkHints {
  /** Wire fields ctxfold does not model (providerOptions, providerExecuted, filename, ...), carried unchanged. */
  fields?: Record<string, unknown>;
  /** An opaque part's value is a wire part (or item, or tool output) of this format. */
  wire?: true;
  /** The content was a part array (a lone text part would otherwise render as a string). */
  content?: "array";
  /** This tool message shared one wire tool message with the one before it. */
  joinPrev?: true;
  /** Which wire part a media or reasoning part was. */
  kind?: "image" | "file" | "redacted-reasoning";
  /** The media type was under AI SDK 4's `mimeType`. */
  mimeKey?: "mimeType";
  /** AI SDK 4 field names (`args`, `result`). */
  v?: 4;
  /** The tool output form when it is not the default text / error-text. */
  output?: "json" | "content" | "opaque";
  /** Fields of the `output` object beside `type` and `value`. */
  outputFields?: Record<string, unknown>;
  /** AI SDK 4 `result` beside `experimental_content` (which the content came from). */
  result?: unknown;
  /** A result item that was AI SDK 4's `image` rather than `media`. */
  item?: "image";
}

/**
 * Marks a wire tool-result part whose `toolName` render filled in (the canonical result had no
 * name); the value is that name. Non-enumerable, so JSON and deep equality never see it.
 */
export const kInventedToolName: unique symbol = Symbol.for("ctxfold.ai-sdk.inventedToolName");

/** @internal `meta["ai-sdk"]` of canonical messages and parts. */
export const aiSdkMeta = formatMeta<AiSdkHints>(F);
