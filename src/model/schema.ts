/**
 * The canonical transcript model: the zod schemas are the single source of its types and
 * defaults. Every adapter parses a provider's messages into these and renders them back.
 *
 * `meta` on a message or a part carries what the canonical fields do not: the provider fields
 * ctxfold does not model (kept, never dropped) and what an adapter needs to render the original
 * bytes again. Compaction never reads it.
 */
import { z } from "zod";

/** Provider data ctxfold carries without modelling it. */
export const Meta = z.record(z.string(), z.unknown());
export type Meta = z.infer<typeof Meta>;

export const TextPart = z.object({
  type: z.literal("text"),
  text: z.string(),
  meta: Meta.optional(),
});
export type TextPart = z.infer<typeof TextPart>;

/** A tool call; `args` is the raw argument string exactly as the model produced it. */
export const ToolCallPart = z.object({
  type: z.literal("tool-call"),
  id: z.string(),
  name: z.string(),
  args: z.string(),
  meta: Meta.optional(),
});
export type ToolCallPart = z.infer<typeof ToolCallPart>;

/** Images, audio, files: carried as the provider gave them. */
export const MediaPart = z.object({
  type: z.literal("media"),
  mediaType: z.string().optional(),
  data: z.unknown(),
  meta: Meta.optional(),
});
export type MediaPart = z.infer<typeof MediaPart>;

/** A part type ctxfold does not know, carried as it came. */
export const OpaquePart = z.object({
  type: z.literal("opaque"),
  value: z.unknown(),
  meta: Meta.optional(),
});
export type OpaquePart = z.infer<typeof OpaquePart>;

/** What a tool result holds. */
export const ResultContentPart = z.discriminatedUnion("type", [TextPart, MediaPart, OpaquePart]);
export type ResultContentPart = z.infer<typeof ResultContentPart>;

export const ToolResultPart = z.object({
  type: z.literal("tool-result"),
  callId: z.string(),
  name: z.string().optional(),
  content: z.array(ResultContentPart),
  isError: z.boolean().optional(),
  meta: Meta.optional(),
});
export type ToolResultPart = z.infer<typeof ToolResultPart>;

/** Model reasoning: readable text, or provider-encrypted data when redacted. */
export const ReasoningPart = z.object({
  type: z.literal("reasoning"),
  text: z.string().optional(),
  redacted: z.string().optional(),
  signature: z.string().optional(),
  meta: Meta.optional(),
});
export type ReasoningPart = z.infer<typeof ReasoningPart>;

export const Part = z.discriminatedUnion("type", [TextPart, ToolCallPart, ToolResultPart, ReasoningPart, MediaPart, OpaquePart]);
export type Part = z.infer<typeof Part>;

export const Role = z.enum(["system", "user", "assistant", "tool"]);
export type Role = z.infer<typeof Role>;

/** Where a message sits in a session: block compaction's TurnId. */
export const TurnId = z.object({
  loop: z.union([z.string(), z.number().int()]),
  index: z.number().int().nonnegative(),
});
export type TurnId = z.infer<typeof TurnId>;

export const Message = z.object({
  id: z.string(),
  role: Role,
  parts: z.array(Part),
  turn: TurnId.optional(),
  /** Never compacted, dropped or summarised. */
  pinned: z.boolean().optional(),
  meta: Meta.default({}),
});
export type Message = z.infer<typeof Message>;
export type MessageInput = z.input<typeof Message>;

/** A tool call and its result: the unit of step compaction (step reduction and the step compactor). */
export const Step = z.object({
  call: ToolCallPart,
  /** Undefined while the call is unanswered. */
  result: ToolResultPart.optional(),
  /** Index of the message holding the call, and of the one holding the result. */
  callMessage: z.number().int().nonnegative(),
  resultMessage: z.number().int().nonnegative().optional(),
});
export type Step = z.infer<typeof Step>;

/** Inclusive range of turn indices within a loop (block compaction). */
export const TurnRange = z
  .object({
    startTurn: z.number().int().nonnegative(),
    endTurn: z.number().int().nonnegative(),
  })
  .refine((r) => r.endTurn >= r.startTurn, { message: "endTurn must be >= startTurn", path: ["endTurn"] });
export type TurnRange = z.infer<typeof TurnRange>;

/** A turn range plus the replacement messages for that range (block compaction). */
export const CompactedSection = z.object({
  range: TurnRange,
  messages: z.array(Message),
});
export type CompactedSection = z.infer<typeof CompactedSection>;

/** Non-destructive compaction overlay stored beside a loop's original messages (block compaction). */
export const CompactionBlock = z.object({
  keepFirst: TurnRange.optional(),
  keepCompacted: CompactedSection.optional(),
  keepRecent: CompactedSection.optional(),
  /** ISO 8601; injected by the caller's clock so output stays deterministic. */
  createdAt: z.string(),
  /**
   * The loop messages the block was built from: their count and a content hash (16 hex digits,
   * see blockSourceHash). A loop whose first `messages` messages no longer hash the same was
   * edited after compaction; its block is skipped, never applied blindly. Messages appended
   * after compaction are loaded raw after the overlay.
   */
  source: z.object({ messages: z.number().int().nonnegative(), hash: z.string().regex(/^[0-9a-f]{16}$/) }).optional(),
});
export type CompactionBlock = z.infer<typeof CompactionBlock>;

/** A turn: the messages sharing one TurnId, as [start, end) indices into its loop's messages. */
export const Turn = z.object({
  index: z.number().int(),
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
});
export type Turn = z.infer<typeof Turn>;

/** Block compaction's LoopRecord: one agent loop's original messages and an optional overlay. */
export const Loop = z.object({
  id: z.union([z.string(), z.number().int()]),
  messages: z.array(Message),
  compaction: CompactionBlock.optional(),
});
export type Loop = z.infer<typeof Loop>;

/** A chain of loops, oldest first. */
export const Session = z.object({
  id: z.string(),
  loops: z.array(Loop),
});
export type Session = z.infer<typeof Session>;
