/**
 * The batch's checkpoint (`OUT.checkpoint.json`), written after every chunk: the input lines
 * done, the output and errors-file bytes written for them and their hashes, and what the input
 * was, so `resume` continues with no run lost or written twice, and refuses an input, options or
 * outputs that changed.
 */
import { createHash, type Hash } from "node:crypto";
import { createReadStream, existsSync, statSync, type Stats } from "node:fs";
import { readFile } from "node:fs/promises";
import { CtxfoldError } from "../errors.js";
import { kNodeFsOps, writeFileAtomic } from "../store/fs-ops.js";
import type { ChunkStats, JobOptions } from "./job.js";
import { outputWriteError } from "./output.js";

/** An input file's size and mtime (none for stdin). */
export interface InputFile {
  size?: number;
  /** Rounded to whole ms: an mtime set again through utimes (seconds as a double) comes back off by up to ~0.3 µs. */
  mtimeMs?: number;
}

export const inputFileOf = (stat: Stats | undefined): InputFile => (stat ? { size: stat.size, mtimeMs: Math.round(stat.mtimeMs) } : {});

/**
 * Version 2 added `inputFile`, version 3 the hashes of what was written (`outSha256`,
 * `errSha256`); a checkpoint of another version is refused, never guessed at.
 */
export const kCheckpointVersion = 3;

/** What a batch's job is as far as a checkpoint is concerned: its options, without the input's name. */
export type JobKey = Omit<JobOptions, "file">;

export interface Checkpoint {
  ctxfold: "checkpoint";
  version: typeof kCheckpointVersion;
  input: string;
  /**
   * What the input was: the file's size and mtime when the batch started (absent for stdin),
   * and the SHA-256 (hex) of its lines done, decompressed, as the chunks held them. A resume
   * skips those lines unread, so an input replaced or edited since, even at the same length,
   * would lose the runs that moved into them and write others twice: it is refused instead.
   */
  inputFile: InputFile & { doneSha256: string };
  options: JobKey;
  /** Input lines done (all written), output and errors-file bytes written for them. */
  lines: number;
  outBytes: number;
  errBytes: number;
  /**
   * SHA-256 (hex) of those bytes, the output's first `outBytes` and the errors file's first
   * `errBytes`: a resume continues the files only if they still begin with what was written
   * (an output cut short, or edited, would otherwise get the rest spliced onto what remains).
   */
  outSha256: string;
  errSha256: string;
  stats: ChunkStats;
}

const sameOptions = (a: JobKey, b: JobKey) =>
  JSON.stringify([a.budget, a.format, a.mode, a.preset ?? null, a.offloadDir ?? null, a.redactOffload ?? false, a.config ?? null]) ===
  JSON.stringify([b.budget, b.format, b.mode, b.preset ?? null, b.offloadDir ?? null, b.redactOffload ?? false, b.config ?? null]);

const kStartOver = "rerun without --resume to start over";

/**
 * The checkpoint at `file` if this batch can resume from it: E_BAD_INPUT when there is none,
 * E_CHECKPOINT_MISMATCH when it is of another version, input or options, or the input file's
 * size or mtime changed since (its lines done are compared as runBatch reads past them).
 */
export async function checkpointToResume(file: string, input: string, jobKey: JobKey, now: InputFile): Promise<Checkpoint> {
  if (!existsSync(file)) throw new CtxfoldError("E_BAD_INPUT", `no checkpoint to resume from (${file})`);
  let cp: Partial<Checkpoint> | undefined;
  try {
    cp = JSON.parse(await readFile(file, "utf8")) as Partial<Checkpoint>;
  } catch {
    // reported below
  }
  if (cp?.ctxfold !== "checkpoint") throw new CtxfoldError("E_BAD_INPUT", `${file} is not a ctxfold checkpoint`);
  if (cp.version !== kCheckpointVersion) {
    throw new CtxfoldError(
      "E_CHECKPOINT_MISMATCH",
      `${file} is a version ${String(cp.version)} checkpoint; this ctxfold resumes only from version ${kCheckpointVersion}, which records what the input was: ${kStartOver}`,
    );
  }
  const checkpoint = cp as Checkpoint;
  if (typeof checkpoint.inputFile?.doneSha256 !== "string" || typeof checkpoint.outSha256 !== "string" || typeof checkpoint.errSha256 !== "string")
    throw new CtxfoldError("E_BAD_INPUT", `${file} is not a ctxfold checkpoint (it records no input or output)`);
  if (checkpoint.input !== input || !sameOptions(checkpoint.options, jobKey)) {
    throw new CtxfoldError(
      "E_CHECKPOINT_MISMATCH",
      `${file} was written for ${checkpoint.input} with ${JSON.stringify(checkpoint.options)}; rerun with the same input and options, or without --resume`,
    );
  }
  const was = checkpoint.inputFile;
  const changes = [
    ...(was.size !== now.size ? [`${was.size ?? "?"} bytes, now ${now.size ?? "?"}`] : []),
    ...(was.mtimeMs !== now.mtimeMs ? [`modified ${isoTime(was.mtimeMs)}, now ${isoTime(now.mtimeMs)}`] : []),
  ];
  if (changes.length > 0) throw inputChanged(input, file, changes.join("; "));
  return checkpoint;
}

const isoTime = (ms: number | undefined) => (ms === undefined ? "?" : new Date(ms).toISOString());

/** E_CHECKPOINT_MISMATCH: `input` is not what it was when `checkpoint` was written (`what` says how). */
export function inputChanged(input: string, checkpoint: string, what: string): CtxfoldError {
  return new CtxfoldError("E_CHECKPOINT_MISMATCH", `${input === "-" ? "stdin" : input} changed since ${checkpoint} was written (${what}): ${kStartOver}`);
}

/**
 * The hash of the first `bytes` of `file` (one of the batch's outputs), after checking that they
 * are the bytes the checkpoint recorded as written (`sha256`): E_CHECKPOINT_MISMATCH naming the
 * file and what differs when it is gone, shorter, or begins otherwise. What follows them (written
 * after the checkpoint) is not checked: the resume cuts it off and writes it again.
 */
export async function writtenAsRecorded(file: string, bytes: number, sha256: string, checkpoint: string): Promise<Hash> {
  const hash = createHash("sha256");
  const size = statSync(file, { throwIfNoEntry: false })?.size;
  if (size === undefined && bytes > 0) throw outputChanged(file, checkpoint, `it is gone; ${bytes} bytes were written to it`);
  if (size !== undefined && size < bytes) throw outputChanged(file, checkpoint, `${size} bytes, ${bytes - size} fewer than the ${bytes} written to it`);
  if (bytes > 0) for await (const block of createReadStream(file, { start: 0, end: bytes - 1 })) hash.update(block as Buffer);
  if (hash.copy().digest("hex") !== sha256) throw outputChanged(file, checkpoint, `its first ${bytes} bytes are not the ones written`);
  return hash;
}

/** E_CHECKPOINT_MISMATCH: an output `file` is not what `checkpoint` says was written to it (`what` says how). */
function outputChanged(file: string, checkpoint: string, what: string): CtxfoldError {
  return new CtxfoldError(
    "E_CHECKPOINT_MISMATCH",
    `${file} changed since ${checkpoint} was written (${what}): resuming would splice the rest onto it; ${kStartOver}`,
  );
}

/**
 * Reads past the first `lines` lines of `input` (those a checkpoint says are done), feeding their
 * bytes to `done`; returns the rest of the input.
 */
export async function skipLines(input: AsyncIterable<Buffer>, lines: number, done: Hash): Promise<AsyncIterable<Buffer>> {
  const it = input[Symbol.asyncIterator]();
  let skip = lines;
  let rest: Buffer | undefined;
  while (skip > 0) {
    const r = await it.next();
    if (r.done) break;
    let at = 0;
    while (skip > 0 && at < r.value.length) {
      const nl = r.value.indexOf(0x0a, at);
      at = nl < 0 ? r.value.length : nl + 1;
      if (nl >= 0) skip--;
    }
    done.update(r.value.subarray(0, at));
    if (at < r.value.length) rest = r.value.subarray(at);
  }
  return (async function* () {
    if (rest) yield rest;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  })();
}

/** Writes `checkpoint` to `file` atomically; E_OUTPUT_WRITE naming the file and the OS error on failure. */
export function writeCheckpoint(file: string, checkpoint: Checkpoint): void {
  try {
    writeFileAtomic(kNodeFsOps, file, Buffer.from(JSON.stringify(checkpoint)), false);
  } catch (err) {
    throw outputWriteError(file, (err as Error).cause ?? err); // the OS error, not the store's wording
  }
}
