/**
 * The filesystem calls ctxfold's stores make, injectable so tests can simulate ENOSPC, EACCES or
 * a failing rename, and the routines they share: the atomic write (replacing), the exclusive
 * write (never replacing), and the open that takes only regular files.
 */
import { randomBytes } from "node:crypto";
import * as nodeFs from "node:fs";
import * as path from "node:path";
import { CtxfoldError } from "../errors.js";

/** The fs calls a store makes (node:fs by default). */
export interface FsOps {
  writeFileSync(file: string, data: Uint8Array, options: { flag: "wx"; mode: number }): void;
  renameSync(from: string, to: string): void;
  /** A second name for a file; EEXIST when `to` exists (what the exclusive write claims a name with). */
  linkSync(existing: string, to: string): void;
  /** A path, or a descriptor from openSync (read from its start). */
  readFileSync(file: string | number): Uint8Array;
  existsSync(file: string): boolean;
  mkdirSync(dir: string, options: { recursive: true; mode?: number }): unknown;
  unlinkSync(file: string): void;
  readdirSync(dir: string): string[];
  // By descriptor: the pack store's appends and ranged reads.
  openSync(file: string, flags: number, mode?: number): number;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** At `position`, or (null) at the file's offset: its end for a descriptor opened O_APPEND. */
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number | null): number;
  ftruncateSync(fd: number, length: number): void;
  fstatSync(fd: number): { isFile(): boolean; size: number };
  closeSync(fd: number): void;
}

export const kNodeFsOps: FsOps = {
  writeFileSync: nodeFs.writeFileSync,
  renameSync: nodeFs.renameSync,
  linkSync: nodeFs.linkSync,
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

/**
 * What stores create: tool outputs and histories may hold secrets (keys a tool printed, files it
 * read), so they are the user's alone, whatever the umask.
 */
export const kStoreFileMode = 0o600;
export const kStoreDirMode = 0o700;

// O_NOFOLLOW refuses a link as the last component only (ELOOP; EMLINK on FreeBSD): the directory
// above may be a link the user chose. O_NONBLOCK makes a FIFO under a store name open at once, to
// be refused by fstat, rather than hang the read until some writer comes; regular files ignore
// it. Windows has neither flag (0): there, fstat's check is what remains.
const kNoFollow = nodeFs.constants.O_NOFOLLOW ?? 0;
const kNonBlock = nodeFs.constants.O_NONBLOCK ?? 0;

/** The errno code of an fs error ("ENOSPC"), or "EUNKNOWN". */
export const errorCode = (err: unknown): string => String((err as NodeJS.ErrnoException | null)?.code ?? "EUNKNOWN");
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Writes `bytes` to `file` atomically: into `.<name>.tmp-<pid>-<random>` beside it (created
 * exclusively), then renamed over the final name, so a reader sees the old file or the whole
 * new one. On any failure (ENOSPC, EACCES, EROFS, ENOTDIR, a failed rename) the temp file is
 * removed and CtxfoldError E_STORE_WRITE names the file and the OS code; nothing partial stays.
 * `mkdir` first creates the directory (recursively). Files are created kStoreFileMode, directories
 * kStoreDirMode; the rename replaces a link at the final name, never writes through it.
 */
export function writeFileAtomic(fs: FsOps, file: string, bytes: Uint8Array, mkdir = true): void {
  const dir = path.dirname(file);
  const temp = tempBeside(file);
  try {
    if (mkdir) fs.mkdirSync(dir, { recursive: true, mode: kStoreDirMode });
    fs.writeFileSync(temp, bytes, { flag: "wx", mode: kStoreFileMode });
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

/** A temp name beside `file`: a dot, the name, the pid and randomness (never a store name). */
export const tempBeside = (file: string): string =>
  path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);

/** Codes of a link() the filesystem cannot do at all (FAT, some network and FUSE filesystems). */
const kNoHardLinks = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/**
 * Writes `bytes` to `file` unless `file` exists: true when it wrote them, false (writing nothing)
 * when the name was taken, by this process or any other, whatever it holds. The bytes go to a
 * temp file beside it first (as writeFileAtomic), then link() gives them the final name, which
 * fails with EEXIST where the name exists: a reader sees the whole file or none, and two writers
 * of one name never replace each other's bytes (rename would, silently). The temp name is
 * removed either way. Where the filesystem has no hard links (kNoHardLinks), the temp file is
 * renamed into place instead: atomic for readers, but a writer of the same name at the same
 * instant may then replace it. E_STORE_WRITE as writeFileAtomic on any failure.
 */
export function writeFileExclusive(fs: FsOps, file: string, bytes: Uint8Array, mkdir = true): boolean {
  const temp = tempBeside(file);
  try {
    if (mkdir) fs.mkdirSync(path.dirname(file), { recursive: true, mode: kStoreDirMode });
    fs.writeFileSync(temp, bytes, { flag: "wx", mode: kStoreFileMode });
    try {
      fs.linkSync(temp, file);
      return true;
    } catch (err) {
      if (errorCode(err) === "EEXIST") return false;
      if (!kNoHardLinks.has(errorCode(err))) throw err;
    }
    fs.renameSync(temp, file);
    return true;
  } catch (cause) {
    throw new CtxfoldError("E_STORE_WRITE", `cannot write ${file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
  } finally {
    try {
      if (fs.existsSync(temp)) fs.unlinkSync(temp);
    } catch {
      // Temp names start with a dot and are never read; the write's own outcome is what counts.
    }
  }
}

/**
 * Opens `file` of a store's directory, refusing what a store never writes there: a symbolic link
 * (never followed, or a link planted under a ref's name would serve /etc/passwd or any file the
 * process can read) and anything else that is not a regular file (a directory, a FIFO, a device).
 * Such an entry is damage to the store like bytes that fail their hash, and is refused the same
 * way: CtxfoldError E_CORRUPT naming the path, whether reading or writing. OS errors are thrown
 * as they are, for the caller to report as E_STORE_READ or E_STORE_WRITE.
 */
export function openRegularFile(fs: FsOps, file: string, flags: number, mode?: number): number {
  let fd: number;
  try {
    fd = fs.openSync(file, flags | kNoFollow | kNonBlock, mode);
  } catch (cause) {
    const code = errorCode(cause);
    if (kNoFollow !== 0 && (code === "ELOOP" || code === "EMLINK")) throw notRegular(file, `is a symbolic link (${code})`, cause);
    throw cause;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw notRegular(file, "is not a regular file");
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

function notRegular(file: string, what: string, cause?: unknown): CtxfoldError {
  return new CtxfoldError("E_CORRUPT", `${file} ${what}: a store holds only the regular files it wrote, and follows no link; refused`, { cause });
}

/**
 * The bytes of a file of a store's directory (openRegularFile), or undefined when there is none:
 * ENOENT, or ENOTDIR (a directory under a regular file holds nothing; the write that follows
 * reports what is wrong). E_STORE_READ names the file and the OS code for any other failure.
 */
export function readRegularFile(fs: FsOps, file: string): Uint8Array | undefined {
  let fd: number | undefined;
  try {
    fd = openRegularFile(fs, file, nodeFs.constants.O_RDONLY);
    return fs.readFileSync(fd);
  } catch (cause) {
    if (CtxfoldError.isInstance(cause)) throw cause;
    const code = errorCode(cause);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new CtxfoldError("E_STORE_READ", `cannot read ${file}: ${code} (${errorMessage(cause)})`, { cause });
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
