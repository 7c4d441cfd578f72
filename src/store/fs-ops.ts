/**
 * The filesystem calls ctxfold's stores make, injectable so tests can simulate ENOSPC, EACCES or
 * a failing rename, and the one atomic-write routine they share.
 */
import { randomBytes } from "node:crypto";
import * as nodeFs from "node:fs";
import * as path from "node:path";
import { CtxfoldError } from "../errors.js";

/** The fs calls a store makes (node:fs by default). */
export interface FsOps {
  writeFileSync(file: string, data: Uint8Array, options: { flag: "wx" }): void;
  renameSync(from: string, to: string): void;
  /** A path, or a descriptor from openSync (read from its start). */
  readFileSync(file: string | number): Uint8Array;
  existsSync(file: string): boolean;
  mkdirSync(dir: string, options: { recursive: true }): unknown;
  unlinkSync(file: string): void;
  readdirSync(dir: string): string[];
  // By descriptor: the pack store's appends and ranged reads.
  openSync(file: string, flags: number, mode?: number): number;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  ftruncateSync(fd: number, length: number): void;
  fstatSync(fd: number): { isFile(): boolean; size: number };
  closeSync(fd: number): void;
}

export const kNodeFsOps: FsOps = {
  writeFileSync: nodeFs.writeFileSync,
  renameSync: nodeFs.renameSync,
  readFileSync: nodeFs.readFileSync,
  existsSync: nodeFs.existsSync,
  mkdirSync: nodeFs.mkdirSync,
  unlinkSync: nodeFs.unlinkSync,
  readdirSync: (dir) => nodeFs.readdirSync(dir),
  openSync: nodeFs.openSync,
  readSync: nodeFs.readSync,
  writeSync: nodeFs.writeSync,
  ftruncateSync: nodeFs.ftruncateSync,
  fstatSync: nodeFs.fstatSync,
  closeSync: nodeFs.closeSync,
};

/** The errno code of an fs error ("ENOSPC"), or "EUNKNOWN". */
export const errorCode = (err: unknown): string => String((err as NodeJS.ErrnoException | null)?.code ?? "EUNKNOWN");
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Writes `bytes` to `file` atomically: into `.<name>.tmp-<pid>-<random>` beside it (created
 * exclusively), then renamed over the final name, so a reader sees the old file or the whole
 * new one. On any failure (ENOSPC, EACCES, EROFS, ENOTDIR, a failed rename) the temp file is
 * removed and CtxfoldError E_STORE_WRITE names the file and the OS code; nothing partial stays.
 * `mkdir` first creates the directory (recursively).
 */
export function writeFileAtomic(fs: FsOps, file: string, bytes: Uint8Array, mkdir = true): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  try {
    if (mkdir) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(temp, bytes, { flag: "wx" });
    fs.renameSync(temp, file);
  } catch (cause) {
    try {
      if (fs.existsSync(temp)) fs.unlinkSync(temp);
    } catch {
      // The write error is the one to report; temp names start with a dot and are never read.
    }
    throw new CtxfoldError("E_STORE_WRITE", `cannot write ${file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
  }
}
