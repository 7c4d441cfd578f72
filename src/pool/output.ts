/**
 * Where the batch writes: the output and its errors file (positioned writes, so a resume can cut
 * them back to what its checkpoint covers) or stdout, every failure an E_OUTPUT_WRITE naming the
 * file; and the refusal to write over the input under any of its names.
 */
import { fstatSync, statSync, type BigIntStats, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import * as path from "node:path";
import type { Readable, Writable } from "node:stream";
import { CtxfoldError } from "../errors.js";
import { errorCode, errorMessage } from "../store/fs-ops.js";

/** Where output goes: a file (positioned writes, so resume can truncate) or a stream. */
export interface Sink {
  write(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * E_OUTPUT_WRITE: one of the batch's own files (the output, its errors file, its checkpoint) could
 * not be written, named with the OS code (ENOSPC…), so a full disk says which file and why.
 */
export function outputWriteError(file: string, cause: unknown): CtxfoldError {
  const code = errorCode(cause);
  const why = code === "EPIPE" ? "its reader closed it before the end of the output" : errorMessage(cause);
  return new CtxfoldError("E_OUTPUT_WRITE", `cannot write ${file}: ${code} (${why})`, { cause });
}

/** `p`, its failure an outputWriteError naming `file`. */
export const writingTo = <T>(file: string, p: Promise<T>): Promise<T> =>
  p.catch((cause: unknown) => {
    throw outputWriteError(file, cause);
  });

/**
 * Writes `data` and waits until the stream took it (a large output to a pipe). A write error
 * (EPIPE: the reader of a pipe went away, as `| head` does) rejects instead of surfacing as an
 * unhandled 'error' event; the listener that takes it stays until the stream emits it, so whoever
 * watches stdout's errors (the ctxfold command: src/cli/main.ts) sees the error is handled here.
 */
export function writeAll(stream: NodeJS.WritableStream, data: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    if (data.length === 0) return resolve();
    const onError = (err: Error) => reject(err);
    stream.once("error", onError);
    stream.write(data, (err) => {
      // On failure the stream emits 'error' after this callback: the listener stays for it.
      if (err) return reject(err);
      stream.off("error", onError);
      resolve();
    });
  });
}

/**
 * A sink over a stream (stdout, named `name` in errors). Each write waits until the stream took
 * it, so a failure (EPIPE: a reader that stopped early, as `| head -c 100` does) stops the batch
 * with E_OUTPUT_WRITE at the chunk it hit, never after the batch counted the chunk written.
 */
export function streamSink(stream: Writable, name: string): Sink {
  return {
    write: (bytes) => writingTo(name, writeAll(stream, bytes)),
    close: async () => undefined,
  };
}

/** A sink over `file`, cut to its first `at` bytes (0: created or emptied). */
export async function fileSink(file: string, at: number): Promise<Sink> {
  const handle = await writingTo(file, open(file, at > 0 ? "r+" : "w"));
  if (at > 0) await writingTo(file, handle.truncate(at));
  let position = at;
  return {
    write: (bytes) =>
      writingTo(
        file,
        (async () => {
          let done = 0;
          while (done < bytes.length) {
            const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position);
            done += bytesWritten;
            position += bytesWritten;
          }
        })(),
      ),
    close: () => writingTo(file, handle.close()),
  };
}

/**
 * E_STORE_WRITE, before any run, when the offload dir cannot be one: a file, or a path under a
 * file. Every run's store would fail alike, so the batch stops naming the dir rather than pass
 * each run through with an error of its own. A dir that does not exist yet is created by the store.
 */
export function refuseUnusableOffloadDir(dir: string): void {
  const shown = path.resolve(dir);
  let stat: Stats | undefined;
  try {
    stat = statSync(dir, { throwIfNoEntry: false });
  } catch (err) {
    throw new CtxfoldError("E_STORE_WRITE", `cannot use ${shown} as the offload dir: ${errorCode(err)} (${errorMessage(err)})`, { cause: err });
  }
  if (stat && !stat.isDirectory()) throw new CtxfoldError("E_STORE_WRITE", `cannot use ${shown} as the offload dir: ENOTDIR (it is a file, not a directory)`);
}

/** A regular file's identity: its device and inode, which every name of it shares (a symlink, a hard link, `./x` for `x`). */
function identityOf(stat: BigIntStats): string | undefined {
  return stat.isFile() ? `${stat.dev}:${stat.ino}` : undefined;
}

/**
 * E_OUTPUT_IS_INPUT when a file the batch writes or removes is the input file (given as a path,
 * or "-" for `stdin`, process.stdin unless given) under whatever name: opening it for writing would empty the input before a
 * line of it is read. Called before anything is opened for writing.
 */
export function refuseToOverwriteInput(input: string, stdin: Readable | undefined, files: [file: string, what: string][]): void {
  const fd = input === "-" ? ((stdin ?? process.stdin) as Readable & { fd?: unknown }).fd : undefined;
  if (input === "-" && typeof fd !== "number") return; // a stream that is no file
  let identity: string | undefined;
  try {
    identity = identityOf(typeof fd === "number" ? fstatSync(fd, { bigint: true }) : statSync(input, { bigint: true }));
  } catch {
    return; // no input to lose (reading it reports why)
  }
  if (identity === undefined) return;
  for (const [file, what] of files) {
    const stat = statSync(file, { bigint: true, throwIfNoEntry: false });
    if (!stat || identityOf(stat) !== identity) continue;
    const inputName = input === "-" ? "the file on stdin" : `the input ${input}`;
    throw new CtxfoldError("E_OUTPUT_IS_INPUT", `refusing to write ${what} ${file}: it is ${inputName} (the same file), which writing would destroy`);
  }
}
