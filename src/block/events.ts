/**
 * Block compaction's compaction events (CompactionStarted / CompactionEnded, "consumed by
 * SessionRecorder for observability") and the two warnings the block path raises instead of
 * failing: a block that no longer matches its loop, and a block file that cannot be read.
 *
 * Decisions:
 * - One discriminated union on `type`, with snake_case type names (they are written to JSONL
 *   files and read by other tools; the names are the wire format, stable across versions).
 * - The zod schemas are the single source of the types, so `readSessionEvents` validates a
 *   line with the same definition the writer used. Objects are strict: a field added later is
 *   a new event type or an optional field, never a silently ignored one.
 * - `at` is an ISO 8601 timestamp (`Date#toISOString`, or any offset form). The constructors
 *   take it as an argument defaulting to the wall clock, so callers that need deterministic
 *   output inject their own clock.
 * - Token counts are estimates (ContextTracker / TokenCounter), non-negative integers;
 *   `durationMs` is a non-negative number (fractions allowed: `performance.now()` deltas).
 */
import { z } from "zod";
import type { CompactionInfo } from "./config.js";

const LoopId = z.union([z.string(), z.number().int()]);
const Tokens = z.number().int().nonnegative();
const At = z.iso.datetime({ offset: true });

/** Compaction is about to run (fired after `beforeCompactionStart`). */
export const CompactionStartedEvent = z.strictObject({
  type: z.literal("compaction_started"),
  at: At,
  sessionId: z.string().optional(),
  /** The loop compaction runs for; absent in the legacy in-memory path. */
  loopId: LoopId.optional(),
  /** Loops that get a block (current first); empty in the legacy path. */
  loopIds: z.array(LoopId),
  maxContextTokens: Tokens,
  /** Estimated tokens of the context before compaction. */
  tokensBefore: Tokens,
});
export type CompactionStartedEvent = z.infer<typeof CompactionStartedEvent>;

/** Compaction finished: the started event's fields plus the result. */
export const CompactionEndedEvent = CompactionStartedEvent.extend({
  type: z.literal("compaction_ended"),
  /** Estimated tokens of the context after compaction. */
  tokensAfter: Tokens,
  /** Wall time compaction took. */
  durationMs: z.number().nonnegative(),
});
export type CompactionEndedEvent = z.infer<typeof CompactionEndedEvent>;

/** A block whose covered turn range no longer matches its loop: skipped, raw messages loaded. */
export const CompactionBlockStaleEvent = z.strictObject({
  type: z.literal("compaction_block_stale"),
  at: At,
  sessionId: z.string().optional(),
  loopId: LoopId,
  /** Why the block does not fit, for a human. */
  reason: z.string(),
});
export type CompactionBlockStaleEvent = z.infer<typeof CompactionBlockStaleEvent>;

/** A block file that cannot be read or parsed: its loop was loaded without the overlay. */
export const SessionOverlayCorruptEvent = z.strictObject({
  type: z.literal("session_overlay_corrupt"),
  at: At,
  sessionId: z.string(),
  /** The block file. */
  path: z.string(),
  reason: z.string(),
});
export type SessionOverlayCorruptEvent = z.infer<typeof SessionOverlayCorruptEvent>;

export const SessionEvent = z.discriminatedUnion("type", [CompactionStartedEvent, CompactionEndedEvent, CompactionBlockStaleEvent, SessionOverlayCorruptEvent]);
export type SessionEvent = z.infer<typeof SessionEvent>;
export type SessionEventType = SessionEvent["type"];

/** Where events go: a recorder's `sink`, a logger, an array's push. */
export type EventSink = (event: SessionEvent) => void;

/** A timestamp argument: an ISO string as is, a Date converted, undefined meaning now. */
export type EventTime = string | Date | undefined;

function iso(at: EventTime): string {
  if (at === undefined) return new Date().toISOString();
  return typeof at === "string" ? at : at.toISOString();
}

/** Copies only the fields the event carries (CompactionInfo may hold more, e.g. tokensAfter). */
function startedFields(info: CompactionInfo) {
  return {
    ...(info.sessionId !== undefined ? { sessionId: info.sessionId } : {}),
    ...(info.loopId !== undefined ? { loopId: info.loopId } : {}),
    loopIds: [...info.loopIds],
    maxContextTokens: info.maxContextTokens,
    tokensBefore: info.tokensBefore,
  };
}

export function compactionStarted(info: CompactionInfo, at?: EventTime): CompactionStartedEvent {
  return { type: "compaction_started", at: iso(at), ...startedFields(info) };
}

export function compactionEnded(info: CompactionInfo & { tokensAfter: number }, durationMs: number, at?: EventTime): CompactionEndedEvent {
  return { type: "compaction_ended", at: iso(at), ...startedFields(info), tokensAfter: info.tokensAfter, durationMs };
}

export function compactionBlockStale(fields: { sessionId?: string; loopId: string | number; reason: string }, at?: EventTime): CompactionBlockStaleEvent {
  return {
    type: "compaction_block_stale",
    at: iso(at),
    ...(fields.sessionId !== undefined ? { sessionId: fields.sessionId } : {}),
    loopId: fields.loopId,
    reason: fields.reason,
  };
}

export function sessionOverlayCorrupt(fields: { sessionId: string; path: string; reason: string }, at?: EventTime): SessionOverlayCorruptEvent {
  return { type: "session_overlay_corrupt", at: iso(at), sessionId: fields.sessionId, path: fields.path, reason: fields.reason };
}
