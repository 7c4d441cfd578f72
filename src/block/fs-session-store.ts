/**
 * FsSessionStore: sessions kept in a directory that later processes find again, one
 * subdirectory per session with its manifest (the chain of loops) and a file per loop, written
 * atomically; an overlay that does not read back is dropped with a warning event, never served.
 * The contract both stores keep is store.ts's.
 */
import { randomBytes } from "node:crypto";
import * as nodeFs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { hashText, hashToHex } from "../core/hash.js";
import { CtxfoldError } from "../errors.js";
import { CompactionBlock, Loop, type Session } from "../model/schema.js";
import { errorCode, errorMessage, kNodeFsOps, writeFileAtomic, type FsOps } from "../store/fs-ops.js";
import { sessionOverlayCorrupt, type SessionEvent } from "./events.js";
import {
  idKey,
  sameId,
  showId,
  fieldPath,
  checkSessionId,
  checkLoopId,
  checkSession,
  checkLoop,
  checkBlock,
  notFound,
  noLoop,
  type LoopId,
  type SessionStore,
} from "./store.js";

/** The fs calls FsSessionStore makes: the offload store's, plus listing and removing trees. */
export interface SessionFsOps extends FsOps {
  readdirSync(dir: string): string[];
  rmSync(target: string, options: { recursive: true; force: true }): void;
}

const kNodeFs: SessionFsOps = {
  ...kNodeFsOps,
  readdirSync: (dir) => nodeFs.readdirSync(dir),
  rmSync: nodeFs.rmSync,
};

export interface FsSessionStoreOptions {
  /** The directory holding one subdirectory per session (created on the first write). */
  dir: string;
  /** Replacements for some fs calls (tests). @default node:fs */
  fs?: Partial<SessionFsOps>;
  /** Timestamps of load warnings. @default () => new Date() */
  now?: () => Date | string;
}

/** The manifest: the chain (loop ids, oldest first) and each loop's file key. */
const Manifest = z
  .strictObject({
    version: z.literal(1),
    id: z.string(),
    loops: z.array(Loop.shape.id),
    /** keys[i] names loops/<key>.json and blocks/<key>.json of loops[i]. */
    keys: z.array(z.number().int().nonnegative()),
    /** The next key to hand out; never decreases, so a key is never reused for another loop. */
    nextKey: z.number().int().nonnegative(),
  })
  .superRefine((m, ctx) => {
    if (m.keys.length !== m.loops.length) ctx.addIssue({ code: "custom", message: `${m.loops.length} loops but ${m.keys.length} keys`, path: ["keys"] });
    if (new Set(m.loops.map(idKey)).size !== m.loops.length) ctx.addIssue({ code: "custom", message: "duplicate loop id", path: ["loops"] });
    if (new Set(m.keys).size !== m.keys.length) ctx.addIssue({ code: "custom", message: "duplicate key", path: ["keys"] });
    if (m.keys.some((k) => k >= m.nextKey)) ctx.addIssue({ code: "custom", message: "a key is not below nextKey", path: ["nextKey"] });
  });
type Manifest = z.infer<typeof Manifest>;

const LoopFile = Loop.pick({ id: true, messages: true });

const kManifestFile = "session.json";
const kDirPattern = /^[A-Za-z0-9_-]*-[0-9a-f]{16}$/;
const kReadableChars = 40;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The one JSON layout every file is written in: compact, keys in schema order, newline-ended. */
function encodeJson(value: unknown, what: string): Uint8Array {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new CtxfoldError("E_BAD_INPUT", `cannot be written as JSON: ${errorMessage(cause)}`, { path: what, cause });
  }
  return new TextEncoder().encode(`${text}\n`);
}

/**
 * The directory name of a session: a readable prefix (up to 40 of the id's characters, each
 * outside `[A-Za-z0-9_-]` replaced by `_`, a leading `-` too) then `-` and the 16 hex digits of
 * the id's XXH64. The name never holds a separator or a dot, so no id can reach outside the
 * store's directory, and the hash keeps ids that share a prefix apart.
 */
export function sessionDirName(sessionId: string): string {
  const readable = checkSessionId(sessionId)
    .slice(0, kReadableChars)
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .replace(/^-/, "_");
  return `${readable || "session"}-${hashToHex(hashText(sessionId))}`;
}

/**
 * Sessions as files: `<dir>/<sessionDirName(id)>/` holds `session.json` (the manifest:
 * `{"version":1,"id":…,"loops":[ids, oldest first],"keys":[file keys],"nextKey":n}`),
 * `loops/<key>.json` (`{"id":…,"messages":[…]}`) per loop and `blocks/<key>.json` (the
 * CompactionBlock) per loop that has an overlay. A loop's key is handed out when the loop is
 * first stored and kept while the loop stays in the session, so files do not move when the
 * chain grows and re-saving a loaded session writes the same bytes to the same names.
 *
 * Writes: every file is written atomically (temp file `.<name>.tmp-<pid>-<random>` in the same
 * directory, created exclusively, then renamed over the name); a failure removes the temp file
 * and throws E_STORE_WRITE naming the file, so no file is ever partial. A save writes loop and
 * block files first and the manifest last: a crash in between leaves the previous manifest,
 * which still describes a whole session (its loops' files are replaced whole, never torn, and
 * new loops' files are unreferenced until the manifest names them). Files of loops a `save`
 * drops are removed after the manifest is written; a failure there only leaves unreferenced
 * files and is not reported. `delete` renames the session directory to a hidden name first (the
 * commit point), then removes it. No fsync, and no locking across processes: two writers of
 * one session at the same time can lose one's update (the last manifest wins).
 *
 * Reads: no state is cached, so several store instances (or processes) on one directory see
 * each other's writes. Every file is validated (UTF-8, JSON, the zod schema, the loop id the
 * manifest expects). A manifest or loop file that is missing or fails validation throws
 * E_SESSION_CORRUPT naming the file and the reason: originals are never dropped silently. A
 * block file that fails is only a lost overlay: the loop loads without it, and a
 * `session_overlay_corrupt` warning names the file. A session directory without a manifest is
 * what a crash during the session's first save leaves: `has` and `list` do not see it, `load`
 * reports it as E_SESSION_CORRUPT, and `save` or `delete` replace or remove it. Read errors
 * other than a missing file (EACCES, EIO) throw E_STORE_READ.
 *
 * Unknown `meta` values must be JSON data: a value JSON cannot hold (a BigInt, a cycle) is
 * E_BAD_INPUT on save; one it converts (a Date, NaN) is stored as JSON.stringify converts it.
 */
export class FsSessionStore implements SessionStore {
  /** The absolute directory the sessions are in. */
  readonly dir: string;
  readonly #fs: SessionFsOps;
  readonly #now: () => Date | string;

  constructor(options: FsSessionStoreOptions) {
    if (typeof options?.dir !== "string" || options.dir.length === 0) throw new CtxfoldError("E_BAD_INPUT", "expected a directory path", { path: "dir" });
    this.dir = path.resolve(options.dir);
    this.#fs = { ...kNodeFs, ...options.fs };
    this.#now = options.now ?? (() => new Date());
  }

  /** The directory holding a session's files (whether or not it exists). */
  sessionDir(sessionId: string): string {
    return path.join(this.dir, sessionDirName(sessionId));
  }

  load(sessionId: string): { session: Session; warnings: SessionEvent[] } {
    const sdir = this.sessionDir(sessionId);
    const manifest = this.#manifest(sessionId, "load");
    const warnings: SessionEvent[] = [];
    const loops: Loop[] = manifest.loops.map((id, i) => {
      const key = manifest.keys[i];
      const file = this.#loopFile(sdir, key);
      const bytes = this.#read(file);
      if (bytes === undefined) throw corrupt(file, `missing (session.json lists loop ${showId(id)} here)`);
      const parsed = decode(bytes, LoopFile);
      if (!parsed.ok) throw corrupt(file, parsed.reason);
      if (!sameId(parsed.value.id, id)) throw corrupt(file, `holds loop ${showId(parsed.value.id)}, session.json expects ${showId(id)}`);
      const loop: Loop = { id: parsed.value.id, messages: parsed.value.messages };
      const blockFile = this.#blockFile(sdir, key);
      let blockBytes: Uint8Array | undefined;
      try {
        blockBytes = this.#read(blockFile);
      } catch (err) {
        warnings.push(sessionOverlayCorrupt({ sessionId, path: blockFile, reason: errorMessage(err) }, this.#now()));
      }
      if (blockBytes !== undefined) {
        const block = decode(blockBytes, CompactionBlock);
        if (block.ok) loop.compaction = block.value;
        else warnings.push(sessionOverlayCorrupt({ sessionId, path: blockFile, reason: block.reason }, this.#now()));
      }
      return loop;
    });
    return { session: { id: manifest.id, loops }, warnings };
  }

  save(session: Session): void {
    const s = checkSession(session);
    const sdir = this.sessionDir(s.id);
    const old = this.#manifest(s.id, "save");
    const oldKeys = new Map<string, number>();
    old?.loops.forEach((id, i) => oldKeys.set(idKey(id), old.keys[i]));
    let nextKey = old?.nextKey ?? 0;
    const keys = s.loops.map((loop) => oldKeys.get(idKey(loop.id)) ?? nextKey++);
    // Encode everything first: a value JSON cannot hold fails before any file changes.
    const files = s.loops.map((loop, i) => ({
      key: keys[i],
      loop: encodeJson({ id: loop.id, messages: loop.messages }, `session.loops[${i}]`),
      block: loop.compaction === undefined ? undefined : encodeJson(loop.compaction, `session.loops[${i}].compaction`),
    }));
    for (const f of files) {
      this.#write(this.#loopFile(sdir, f.key), f.loop);
      if (f.block) this.#write(this.#blockFile(sdir, f.key), f.block);
      else this.#remove(this.#blockFile(sdir, f.key));
    }
    this.#writeManifest(sdir, { version: 1, id: s.id, loops: s.loops.map((l) => l.id), keys, nextKey });
    const kept = new Set(keys);
    for (const key of old?.keys ?? []) {
      if (kept.has(key)) continue;
      for (const file of [this.#loopFile(sdir, key), this.#blockFile(sdir, key)]) {
        try {
          this.#remove(file);
        } catch {
          // Unreferenced now: the manifest no longer names this key, and keys are never reused.
        }
      }
    }
  }

  saveLoop(sessionId: string, loop: Loop): void {
    const l = checkLoop(loop);
    const sdir = this.sessionDir(sessionId);
    const m = this.#manifest(sessionId, "update");
    const i = m.loops.findIndex((id) => sameId(id, l.id));
    const key = i >= 0 ? m.keys[i] : m.nextKey;
    const loopBytes = encodeJson({ id: l.id, messages: l.messages }, "loop");
    const blockBytes = l.compaction === undefined ? undefined : encodeJson(l.compaction, "loop.compaction");
    this.#write(this.#loopFile(sdir, key), loopBytes);
    if (blockBytes) this.#write(this.#blockFile(sdir, key), blockBytes);
    else this.#remove(this.#blockFile(sdir, key));
    if (i < 0) this.#writeManifest(sdir, { version: 1, id: m.id, loops: [...m.loops, l.id], keys: [...m.keys, key], nextKey: key + 1 });
  }

  saveBlock(sessionId: string, loopId: LoopId, block: CompactionBlock | undefined): void {
    const id = checkLoopId(loopId);
    const bytes = block === undefined ? undefined : encodeJson(checkBlock(block), "block");
    const sdir = this.sessionDir(sessionId);
    const m = this.#manifest(sessionId, "update");
    const i = m.loops.findIndex((x) => sameId(x, id));
    if (i < 0) throw noLoop(sessionId, id);
    const file = this.#blockFile(sdir, m.keys[i]);
    if (bytes) this.#write(file, bytes);
    else this.#remove(file);
  }

  list(): string[] {
    let names: string[];
    try {
      names = this.#fs.readdirSync(this.dir);
    } catch (cause) {
      if (errorCode(cause) === "ENOENT") return [];
      throw new CtxfoldError("E_STORE_READ", `cannot list ${this.dir}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
    const ids: string[] = [];
    for (const name of names) {
      if (!kDirPattern.test(name)) continue;
      const m = this.#readManifest(path.join(this.dir, name, kManifestFile));
      // A directory copied or renamed by hand would not be found by load under its id.
      if (m && sessionDirName(m.id) === name) ids.push(m.id);
    }
    return ids.sort();
  }

  delete(sessionId: string): void {
    const sdir = this.sessionDir(sessionId);
    if (!this.#fs.existsSync(sdir)) return;
    const trash = path.join(this.dir, `.${path.basename(sdir)}.deleting-${process.pid}-${randomBytes(6).toString("hex")}`);
    try {
      this.#fs.renameSync(sdir, trash);
    } catch (cause) {
      if (errorCode(cause) === "ENOENT") return;
      throw new CtxfoldError("E_STORE_WRITE", `cannot delete ${sdir}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
    try {
      this.#fs.rmSync(trash, { recursive: true, force: true });
    } catch {
      // The session is gone from the store (its directory has a hidden name); only bytes remain.
    }
  }

  has(sessionId: string): boolean {
    return this.#fs.existsSync(path.join(this.sessionDir(sessionId), kManifestFile));
  }

  #loopFile(sdir: string, key: number): string {
    return path.join(sdir, "loops", `${key}.json`);
  }

  #blockFile(sdir: string, key: number): string {
    return path.join(sdir, "blocks", `${key}.json`);
  }

  /**
   * The session's manifest. For "load" and "update" a missing session is E_SESSION_NOT_FOUND
   * (a directory without a manifest is E_SESSION_CORRUPT on load); for "save" a missing
   * manifest is a new session (undefined). A corrupt manifest is E_SESSION_CORRUPT in all three:
   * a save must not hand out keys the unreadable manifest may still reference.
   */
  #manifest(sessionId: string, purpose: "load" | "update"): Manifest;
  #manifest(sessionId: string, purpose: "save"): Manifest | undefined;
  #manifest(sessionId: string, purpose: "load" | "update" | "save"): Manifest | undefined {
    const sdir = this.sessionDir(sessionId);
    const file = path.join(sdir, kManifestFile);
    const m = this.#readManifest(file);
    if (m === undefined) {
      if (purpose === "save") return undefined;
      if (purpose === "load" && this.#fs.existsSync(sdir)) throw corrupt(file, "missing (the session directory exists: a first save did not finish)");
      throw notFound(sessionId, this.dir);
    }
    if (m.id !== sessionId) throw corrupt(file, `holds session ${JSON.stringify(m.id)}, expected ${JSON.stringify(sessionId)}`);
    return m;
  }

  /** A manifest file: undefined when missing, E_SESSION_CORRUPT when invalid. */
  #readManifest(file: string): Manifest | undefined {
    const bytes = this.#read(file);
    if (bytes === undefined) return undefined;
    const r = decode(bytes, Manifest);
    if (!r.ok) throw corrupt(file, r.reason);
    return r.value;
  }

  #writeManifest(sdir: string, m: Manifest): void {
    // Built field by field so the bytes follow one layout whatever the caller's key order.
    const ordered: Manifest = { version: 1, id: m.id, loops: m.loops, keys: m.keys, nextKey: m.nextKey };
    this.#write(path.join(sdir, kManifestFile), encodeJson(ordered, "manifest"));
  }

  /** A file's bytes, undefined when it does not exist; E_STORE_READ for other errors. */
  #read(file: string): Uint8Array | undefined {
    try {
      return this.#fs.readFileSync(file);
    } catch (cause) {
      const code = errorCode(cause);
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      throw new CtxfoldError("E_STORE_READ", `cannot read ${file}: ${code} (${errorMessage(cause)})`, { cause });
    }
  }

  /** Atomic write (see the class note): the whole file or E_STORE_WRITE and no file change. */
  #write(file: string, bytes: Uint8Array): void {
    writeFileAtomic(this.#fs, file, bytes);
  }

  /** Removes a file if it exists; E_STORE_WRITE when it cannot. */
  #remove(file: string): void {
    try {
      this.#fs.unlinkSync(file);
    } catch (cause) {
      const code = errorCode(cause);
      if (code === "ENOENT" || code === "ENOTDIR") return;
      throw new CtxfoldError("E_STORE_WRITE", `cannot remove ${file}: ${code} (${errorMessage(cause)})`, { cause });
    }
  }
}

function corrupt(file: string, reason: string): CtxfoldError {
  return new CtxfoldError("E_SESSION_CORRUPT", reason, { path: file });
}

/** Bytes → UTF-8 → JSON → schema, or the reason it failed (first issue with its field). */
function decode<T>(bytes: Uint8Array, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (err) {
    return { ok: false, reason: err instanceof SyntaxError ? `not JSON: ${err.message}` : `not UTF-8: ${errorMessage(err)}` };
  }
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  const field = fieldPath("", issue.path);
  return { ok: false, reason: `invalid: ${field ? `${field}: ` : ""}${issue.message}` };
}
