/**
 * Where sessions (block compaction's chain of LoopRecords, each with its original messages and an
 * optional CompactionBlock overlay) are kept between agent calls: `MemorySessionStore` for one
 * process, `FsSessionStore` for a directory that later processes find again.
 *
 * Shared contract (both stores behave the same):
 * - Input is validated with the zod schemas of src/model/schema.ts before anything is stored
 *   (E_BAD_INPUT naming the field), and what is stored is the parsed value: defaults filled
 *   (`meta: {}`), keys the schema does not know dropped. Loop ids must be unique in a session
 *   (`1` and `"1"` are different ids, as JSON keeps them apart).
 * - `save` replaces the whole session (creating it when new). `saveLoop` replaces a loop by id
 *   in place, or appends it when new, and the loop's overlay with it: a loop given without
 *   `compaction` is stored without one. `saveBlock` sets or clears one loop's overlay and
 *   nothing else. Both need the session to exist (E_SESSION_NOT_FOUND), so a mistyped id never
 *   starts a stray session; `saveBlock` on a loop the session does not hold is E_BAD_INPUT.
 * - `load` of an unknown id is E_SESSION_NOT_FOUND; `delete` of one is a no-op; `list` gives
 *   the ids sorted (UTF-16 order).
 * - Nothing stored is shared with the caller: the memory store deep-copies in and out with
 *   structuredClone; the file store holds only bytes.
 *
 * One writer per session at a time: neither store locks across processes (see FsSessionStore).
 */
import type { z } from "zod";
import { CtxfoldError } from "../errors.js";
import { CompactionBlock, Loop, Session } from "../model/schema.js";
import type { SessionEvent } from "./events.js";

export type LoopId = string | number;

export interface SessionStore {
  /** The session and the warnings loading raised (e.g. an overlay that could not be read). */
  load(sessionId: string): { session: Session; warnings: SessionEvent[] };
  /** Stores the whole session, replacing any stored under its id. */
  save(session: Session): void;
  /** Adds the loop (appended to the chain) or replaces the one with its id (same position). */
  saveLoop(sessionId: string, loop: Loop): void;
  /** Sets (block) or clears (undefined) a loop's overlay. */
  saveBlock(sessionId: string, loopId: LoopId, block: CompactionBlock | undefined): void;
  /** Stored session ids, sorted. */
  list(): string[];
  /** Removes the session; a no-op for an unknown id. */
  delete(sessionId: string): void;
  has(sessionId: string): boolean;
}

// ---------------------------------------------------------------------------------------------
// Validation shared by both stores

export const idKey = (id: LoopId): string => (typeof id === "number" ? `n:${id}` : `s:${id}`);
export const sameId = (a: LoopId, b: LoopId): boolean => a === b;
export const showId = (id: LoopId): string => (typeof id === "number" ? String(id) : JSON.stringify(id));

/** A zod issue path as `root.field[3].field`. */
export function fieldPath(root: string, keys: readonly PropertyKey[]): string {
  return keys.reduce<string>((out, k) => (typeof k === "number" ? `${out}[${k}]` : out ? `${out}.${String(k)}` : String(k)), root);
}

function issueError(error: z.ZodError, root: string): CtxfoldError {
  const issue = error.issues[0];
  return new CtxfoldError("E_BAD_INPUT", issue.message, { path: fieldPath(root, issue.path) });
}

export function checkSessionId(sessionId: unknown): string {
  if (typeof sessionId !== "string") throw new CtxfoldError("E_BAD_INPUT", `expected a string, got ${typeof sessionId}`, { path: "sessionId" });
  return sessionId;
}

export function checkLoopId(loopId: unknown): LoopId {
  if (typeof loopId === "string" || (typeof loopId === "number" && Number.isSafeInteger(loopId))) return loopId;
  throw new CtxfoldError("E_BAD_INPUT", "expected a string or an integer", { path: "loopId" });
}

export function checkSession(session: unknown): Session {
  const r = Session.safeParse(session);
  if (!r.success) throw issueError(r.error, "session");
  const seen = new Set<string>();
  r.data.loops.forEach((loop, i) => {
    const k = idKey(loop.id);
    if (seen.has(k)) throw new CtxfoldError("E_BAD_INPUT", `duplicate loop id ${showId(loop.id)}`, { path: `session.loops[${i}].id` });
    seen.add(k);
  });
  return r.data;
}

export function checkLoop(loop: unknown): Loop {
  const r = Loop.safeParse(loop);
  if (!r.success) throw issueError(r.error, "loop");
  return r.data;
}

export function checkBlock(block: unknown): CompactionBlock {
  const r = CompactionBlock.safeParse(block);
  if (!r.success) throw issueError(r.error, "block");
  return r.data;
}

export function notFound(sessionId: string, where?: string): CtxfoldError {
  return new CtxfoldError("E_SESSION_NOT_FOUND", `no session ${JSON.stringify(sessionId)}${where ? ` in ${where}` : ""}`);
}

export function noLoop(sessionId: string, loopId: LoopId): CtxfoldError {
  return new CtxfoldError("E_BAD_INPUT", `session ${JSON.stringify(sessionId)} has no loop ${showId(loopId)}`, { path: "loopId" });
}

// ---------------------------------------------------------------------------------------------
// Memory

/** Sessions in a Map, deep-copied in and out (structuredClone), so callers never alias them. */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, Session>();

  load(sessionId: string): { session: Session; warnings: SessionEvent[] } {
    return { session: structuredClone(this.#get(sessionId)), warnings: [] };
  }

  save(session: Session): void {
    const s = checkSession(session);
    this.#sessions.set(s.id, structuredClone(s));
  }

  saveLoop(sessionId: string, loop: Loop): void {
    const s = this.#get(sessionId);
    const l = structuredClone(checkLoop(loop));
    const i = s.loops.findIndex((x) => sameId(x.id, l.id));
    if (i >= 0) s.loops[i] = l;
    else s.loops.push(l);
  }

  saveBlock(sessionId: string, loopId: LoopId, block: CompactionBlock | undefined): void {
    const s = this.#get(sessionId);
    const id = checkLoopId(loopId);
    const loop = s.loops.find((x) => sameId(x.id, id));
    if (!loop) throw noLoop(sessionId, id);
    if (block === undefined) delete loop.compaction;
    else loop.compaction = structuredClone(checkBlock(block));
  }

  list(): string[] {
    return [...this.#sessions.keys()].sort();
  }

  delete(sessionId: string): void {
    this.#sessions.delete(checkSessionId(sessionId));
  }

  has(sessionId: string): boolean {
    return this.#sessions.has(checkSessionId(sessionId));
  }

  #get(sessionId: string): Session {
    const s = this.#sessions.get(checkSessionId(sessionId));
    if (!s) throw notFound(sessionId);
    return s;
  }
}
