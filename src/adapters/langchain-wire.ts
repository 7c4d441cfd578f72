/**
 * The LangChain wire: the message dict and content block types ctxfold reads and writes, their
 * zod schemas, the message kinds, and what `meta.langchain` holds on canonical messages, parts
 * and tool calls (see langchain.ts for the mapping).
 */
import { z } from "zod";
import type { Role } from "../model/schema.js";
import { taggedUnion } from "./common.js";
import { formatMeta } from "./meta.js";

export const F = "langchain" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

export interface Loose {
  [key: string]: unknown;
}

/** A LangChain ToolCall. */
export interface LangchainToolCall extends Loose {
  name: string;
  args: Record<string, unknown>;
  id?: string | null;
  type?: "tool_call";
}

/** A content block: a bare string or an object with a `type`. */
export type LangchainBlock = string | (Loose & { type: string });
export type LangchainContent = string | LangchainBlock[];

export interface LangchainMessage extends Loose {
  /** The message kind (human, ai, system, tool, ...); `role` names it instead when present. */
  type?: string;
  role?: string;
  content: LangchainContent;
  id?: string | null;
  name?: string | null;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
  tool_calls?: LangchainToolCall[];
  invalid_tool_calls?: Record<string, unknown>[];
  usage_metadata?: Record<string, unknown> | null;
  tool_call_id?: string;
  status?: "success" | "error";
  artifact?: unknown;
}
export type LangchainWire = LangchainMessage[];

// ---------------------------------------------------------------------------------------------
// Wire schemas.

export const LangchainBlockSchema = z.union([
  z.string(),
  taggedUnion(
    new Map<string, z.ZodType>([
      ["text", z.looseObject({ type: z.literal("text"), text: z.string() })],
      ["image_url", z.looseObject({ type: z.literal("image_url"), image_url: z.unknown() })],
      ["reasoning", z.looseObject({ type: z.literal("reasoning"), reasoning: z.string().optional(), extras: z.record(z.string(), z.unknown()).optional() })],
    ]),
  ),
]);

export const LangchainToolCallSchema = z.looseObject({
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  id: z.string().nullable().optional(),
  type: z.literal("tool_call").optional(),
});

const kwargs = z.record(z.string(), z.unknown()).optional();
const base = {
  content: z.union([z.string(), z.array(LangchainBlockSchema)]),
  id: z.string().nullable().optional(),
  name: z.string().nullable().optional(),
  additional_kwargs: kwargs,
  response_metadata: kwargs,
};

/** The schema of each message kind, by canonical role. */
export const LangchainMessageSchemas = {
  system: z.looseObject(base),
  user: z.looseObject(base),
  assistant: z.looseObject({
    ...base,
    tool_calls: z.array(LangchainToolCallSchema).optional(),
    invalid_tool_calls: z.array(z.looseObject({})).optional(),
    usage_metadata: z.looseObject({}).nullable().optional(),
  }),
  tool: z.looseObject({
    ...base,
    tool_call_id: z.string(),
    status: z.enum(["success", "error"]).optional(),
  }),
} as const satisfies Record<Role, z.ZodType>;

/** Only run to word the error when a message's kind is not a string. */
export const kKindKey = z.looseObject({ type: z.string() });
export const kRoleKey = z.looseObject({ role: z.string() });

// ---------------------------------------------------------------------------------------------
// Kinds and hints.

export const kKinds = new Map<string, Role>([
  ["system", "system"],
  ["developer", "system"],
  ["SystemMessageChunk", "system"],
  ["human", "user"],
  ["user", "user"],
  ["HumanMessageChunk", "user"],
  ["ai", "assistant"],
  ["assistant", "assistant"],
  ["AIMessageChunk", "assistant"],
  ["tool", "tool"],
  ["ToolMessageChunk", "tool"],
]);
export const kDefaultKind: Record<Role, string> = { system: "system", user: "human", assistant: "ai", tool: "tool" };

/** meta["langchain"] of a canonical message, part or tool call parsed from LangChain. */
export interface LangchainHints {
  /** Wire fields ctxfold does not model (additional_kwargs, response_metadata, usage_metadata, ...), carried unchanged. */
  fields?: Record<string, unknown>;
  /** A media part's data / an opaque part's value is this format's own wire value. */
  wire?: true;
  /** The kind was under `role`, not `type`. */
  key?: "role";
  /** The kind's spelling when it is not the default (human, ai, system, tool). */
  kind?: string;
  /** The canonical id is the wire `id`. */
  id?: true;
  /** The content was a block list (a lone text part would otherwise render as a string). */
  content?: "array";
  /** The AI message had no `tool_calls` field. */
  noCalls?: true;
  /** A text block that was a bare string in the content list. */
  bare?: true;
  /** A tool call without a string `id` (its canonical id is ""). */
  noId?: true;
  /** A tool call without `type: "tool_call"`. */
  noType?: true;
}

/** @internal `meta.langchain` of canonical messages, parts and tool calls. */
export const langchainMeta = formatMeta<LangchainHints>(F);
