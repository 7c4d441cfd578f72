/**
 * The batch engine behind `ctxfold compact`: streams JSONL, cuts it into chunks of whole lines
 * (≥ chunkBytes), compacts them in a Piscina pool (or in-process for one worker and small
 * inputs), and writes the results in input order. Memory stays bounded: at most
 * `2 × workers` chunks are in flight, and reading waits for a free slot.
 *
 * Faults: a bad line, or a run the compactor fails on, is written through with an error record
 * (or, under `strict`, stops the run); a chunk whose worker dies is retried once in a fresh
 * worker, then written through with an error record per run; an offload store that cannot be
 * written stops the batch on either path (a worker returns the error, rebuilt here, so only a
 * death counts as a crash); an interrupt finishes the chunks in flight and leaves a checkpoint
 * (`OUT.checkpoint.json`) from which `resume` continues with no run lost or written twice.
 */
import { createHash, type Hash } from "node:crypto";
import { createReadStream, existsSync, fstatSync, statSync, type BigIntStats, type Stats } from "node:fs";
import { open, readFile, rm, truncate } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Readable, type Writable } from "node:stream";
import { Piscina } from "piscina";
import { getCoreModule } from "../core/load-core.js";
import { CtxfoldError } from "../errors.js";
import { errorCode, errorMessage, kNodeFsOps, writeFileAtomic } from "../store/fs-ops.js";
import { addStats, compactChunk, emptyStats, unpack, type ChunkResult, type ChunkStats, type ErrorRecord, type JobOptions } from "./job.js";
import { gunzipIfGzip, isBlankLine, linesOf } from "./input.js";
import type { WorkerReply, WorkerTask } from "./worker.js";

export interface BatchOptions extends Omit<JobOptions, "file"> {
  /** A file (.gz is gunzipped; gzip data is also recognised by its magic bytes) or "-" for `stdin`. */
  input: string;
  /** A file, or "-" for `stdout`. */
  output: string;
  /** Worker threads; 1 compacts in-process. */
  workers: number;
  /** Continue from OUT.checkpoint.json (refused when it is not of this input, as it was then, and these options). */
  resume?: boolean;
  /** Stop at the first line that cannot be compacted (E_BAD_INPUT naming file:line). */
  strict?: boolean;
  stdin?: Readable;
  stdout?: Writable;
  /** Called when the run is to stop (SIGINT); returns the handler's removal. */
  onInterrupt?: (stop: () => void) => () => void;
  /** Called after every chunk written. */
  onProgress?: (p: BatchProgress) => void;
  /** Error records of a run written to stdout go here, one line each. @default ignored */
  onError?: (record: ErrorRecord) => void;
  /** @default 256 KiB, or CTXFOLD_CHUNK_BYTES (tests use small chunks to have many) */
  chunkBytes?: number;
  /** Inputs smaller than this (files only) run in-process whatever `workers` says. @default 1 MiB */
  inProcessBelow?: number;
  /**
   * Each worker's V8 old-generation limit, MB (its young generation gets kWorkerYoungHeapMb); 0
   * leaves V8's defaults. @default 128: a worker's live heap is ~50 MB on the dev corpus, and
   * without a limit V8 lets each grow to ~150 MB before collecting, which put 2 workers at
   * 400–750 MB of RSS; with it, ~300 MB for 15–30% more CPU in the collector. A run too big for the limit
   * kills its worker: its chunk is retried, then passed through with E_WORKER_CRASH.
   */
  workerHeapMb?: number;
}

export const kDefaultWorkerHeapMb = 128;
const kWorkerYoungHeapMb = 8;

export interface BatchProgress {
  runs: number;
  /** Input bytes read so far (compressed bytes for .gz), and the input's size when known. */
  readBytes: number;
  totalBytes?: number;
  elapsedMs: number;
}

export interface BatchSummary extends ChunkStats {
  lines: number;
  chunks: number;
  seconds: number;
  /** Worker threads used (0: in-process). */
  workers: number;
  interrupted: boolean;
  /** Lines the run skipped because a checkpoint said they were done. */
  resumedAfterLine: number;
  errorsFile?: string;
  checkpoint?: string;
  /** Chunks retried after a worker died, and chunks written through after the retry died too. */
  retried: number;
  crashed: number;
  /** The process's peak resident set (main thread and workers), MB. */
  peakRssMB: number;
}

/** An input file's size and mtime (none for stdin). */
interface InputFile {
  size?: number;
  /** Rounded to whole ms: an mtime set again through utimes (seconds as a double) comes back off by up to ~0.3 µs. */
  mtimeMs?: number;
}

const inputFileOf = (stat: Stats | undefined): InputFile => (stat ? { size: stat.size, mtimeMs: Math.round(stat.mtimeMs) } : {});

/** Version 2 added `inputFile`; a checkpoint of another version is refused, never guessed at. */
const kCheckpointVersion = 2;

interface Checkpoint {
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
  options: Omit<JobOptions, "file">;
  /** Input lines done (all written), output and errors-file bytes written for them. */
  lines: number;
  outBytes: number;
  errBytes: number;
  stats: ChunkStats;
}

const kDefaultChunkBytes = 256 * 1024;
const kDefaultInProcessBelow = 1 << 20;

/** The worker script: dist's worker.js beside this file, or dist's when running from sources. */
function workerFile(): string {
  const here = new URL("./worker.js", import.meta.url);
  if (existsSync(fileURLToPath(here))) return here.href;
  const built = new URL("../../dist/src/pool/worker.js", import.meta.url);
  if (existsSync(fileURLToPath(built))) return built.href;
  throw new CtxfoldError("E_BAD_INPUT", `the pool's worker script is not built (looked for ${fileURLToPath(here)}); run \`npm run build\``);
}

/**
 * Reads past the first `lines` lines of `input` (those a checkpoint says are done), feeding their
 * bytes to `done`; returns the rest of the input.
 */
async function skipLines(input: AsyncIterable<Buffer>, lines: number, done: Hash): Promise<AsyncIterable<Buffer>> {
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

/**
 * `stream`, each chunk's length told to `count` as it is read. Read only as asked (a 'data'
 * listener would set the stream flowing, and what it read before the chunker's first request,
 * across the awaits that open the output, would be lost to the chunker).
 */
function counting(stream: Readable, count: (bytes: number) => void): Readable {
  return Readable.from((async function* () {
    for await (const data of stream as AsyncIterable<Buffer>) {
      count(data.length);
      yield data;
    }
  })(), { objectMode: false });
}

/** Whole-line chunks of the input, the first starting at line `firstLine`. */
async function* chunksOf(input: AsyncIterable<Buffer>, chunkBytes: number, firstLine: number): AsyncGenerator<{ bytes: Uint8Array; firstLine: number }> {
  let pending: Buffer[] = [];
  let size = 0;
  let line = firstLine;
  const take = (all: Buffer, cut: number) => {
    const bytes = new Uint8Array(cut);
    bytes.set(all.subarray(0, cut));
    let n = 0;
    for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) n++;
    if (cut > 0 && bytes[cut - 1] !== 0x0a) n++;
    const chunk = { bytes, firstLine: line };
    line += n;
    return chunk;
  };
  for await (const buf of input) {
    if (buf.length === 0) continue;
    pending.push(buf);
    size += buf.length;
    if (size < chunkBytes) continue;
    const all = Buffer.concat(pending, size);
    const cut = all.lastIndexOf(0x0a) + 1;
    if (cut === 0) continue; // one line longer than a chunk: keep reading
    yield take(all, cut);
    pending = cut < all.length ? [all.subarray(cut)] : [];
    size = all.length - cut;
  }
  if (size > 0) {
    const all = Buffer.concat(pending, size);
    yield take(all, all.length);
  }
}

/** A chunk written through unchanged, with an error record per run (after a worker died twice). */
function passThrough(bytes: Uint8Array, firstLine: number, reason: string): ChunkResult {
  const stats = emptyStats();
  const errors: ErrorRecord[] = [];
  let lines = 0;
  for (const { raw, index } of linesOf(bytes)) {
    lines++;
    if (isBlankLine(raw)) continue;
    stats.runs++;
    stats.errors++;
    errors.push({ line: firstLine + index, code: "E_WORKER_CRASH", reason });
  }
  const out = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? Buffer.concat([bytes, Buffer.from("\n")]) : bytes;
  stats.bytesIn = bytes.length;
  stats.bytesOut = out.length;
  return { out, errors, stats, lines };
}

/** Where output goes: a file (positioned writes, so resume can truncate) or a stream. */
interface Sink {
  write(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * E_OUTPUT_WRITE: one of the batch's own files (the output, its errors file, its checkpoint) could
 * not be written, named with the OS code (ENOSPC…), so a full disk says which file and why.
 */
function outputWriteError(file: string, cause: unknown): CtxfoldError {
  return new CtxfoldError("E_OUTPUT_WRITE", `cannot write ${file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
}

/** `p`, its failure an outputWriteError naming `file`. */
const writingTo = <T>(file: string, p: Promise<T>): Promise<T> => p.catch((cause: unknown) => {
  throw outputWriteError(file, cause);
});

/** A sink over a stream (stdout, named `name` in errors). */
function streamSink(stream: Writable, name: string): Sink {
  return {
    write: (bytes) => writingTo(name, new Promise<void>((resolve, reject) => {
      if (bytes.length === 0) return resolve();
      const ok = stream.write(bytes, (err) => (err ? reject(err) : undefined));
      if (ok) resolve();
      else stream.once("drain", resolve);
    })),
    close: async () => undefined,
  };
}

/** A sink over `file`, cut to its first `at` bytes (0: created or emptied). */
async function fileSink(file: string, at: number): Promise<Sink> {
  const handle = await writingTo(file, open(file, at > 0 ? "r+" : "w"));
  if (at > 0) await writingTo(file, handle.truncate(at));
  let position = at;
  return {
    write: (bytes) => writingTo(file, (async () => {
      let done = 0;
      while (done < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position);
        done += bytesWritten;
        position += bytesWritten;
      }
    })()),
    close: () => writingTo(file, handle.close()),
  };
}

/** A regular file's identity: its device and inode, which every name of it shares (a symlink, a hard link, `./x` for `x`). */
function identityOf(stat: BigIntStats): string | undefined {
  return stat.isFile() ? `${stat.dev}:${stat.ino}` : undefined;
}

/**
 * E_OUTPUT_IS_INPUT when a file the batch writes or removes is the input file (given as a path,
 * or on stdin) under whatever name: opening it for writing would empty the input before a line
 * of it is read. Called before anything is opened for writing.
 */
function refuseToOverwriteInput(options: BatchOptions, files: [file: string, what: string][]): void {
  const fd = options.input === "-" ? ((options.stdin ?? process.stdin) as Readable & { fd?: unknown }).fd : undefined;
  if (options.input === "-" && typeof fd !== "number") return; // a stream that is no file
  let input: string | undefined;
  try {
    input = identityOf(typeof fd === "number" ? fstatSync(fd, { bigint: true }) : statSync(options.input, { bigint: true }));
  } catch {
    return; // no input to lose (reading it reports why)
  }
  if (input === undefined) return;
  for (const [file, what] of files) {
    const stat = statSync(file, { bigint: true, throwIfNoEntry: false });
    if (!stat || identityOf(stat) !== input) continue;
    const inputName = options.input === "-" ? "the file on stdin" : `the input ${options.input}`;
    throw new CtxfoldError("E_OUTPUT_IS_INPUT", `refusing to write ${what} ${file}: it is ${inputName} (the same file), which writing would destroy`);
  }
}

const sameOptions = (a: Omit<JobOptions, "file">, b: Omit<JobOptions, "file">) =>
  JSON.stringify([a.budget, a.format, a.mode, a.preset ?? null, a.offloadDir ?? null, a.redactOffload ?? false]) ===
  JSON.stringify([b.budget, b.format, b.mode, b.preset ?? null, b.offloadDir ?? null, b.redactOffload ?? false]);

const kStartOver = "rerun without --resume to start over";

/**
 * The checkpoint at `file` if this batch can resume from it: E_BAD_INPUT when there is none,
 * E_CHECKPOINT_MISMATCH when it is of another version, input or options, or the input file's
 * size or mtime changed since (its lines done are compared as runBatch reads past them).
 */
async function checkpointToResume(file: string, input: string, jobKey: Omit<JobOptions, "file">, now: InputFile): Promise<Checkpoint> {
  if (!existsSync(file)) throw new CtxfoldError("E_BAD_INPUT", `no checkpoint to resume from (${file})`);
  let cp: Partial<Checkpoint> | undefined;
  try {
    cp = JSON.parse(await readFile(file, "utf8")) as Partial<Checkpoint>;
  } catch {
    // reported below
  }
  if (cp?.ctxfold !== "checkpoint") throw new CtxfoldError("E_BAD_INPUT", `${file} is not a ctxfold checkpoint`);
  if (cp.version !== kCheckpointVersion) {
    throw new CtxfoldError("E_CHECKPOINT_MISMATCH", `${file} is a version ${String(cp.version)} checkpoint; this ctxfold resumes only from version ${kCheckpointVersion}, which records what the input was: ${kStartOver}`);
  }
  const checkpoint = cp as Checkpoint;
  if (typeof checkpoint.inputFile?.doneSha256 !== "string") throw new CtxfoldError("E_BAD_INPUT", `${file} is not a ctxfold checkpoint (it records no input)`);
  if (checkpoint.input !== input || !sameOptions(checkpoint.options, jobKey)) {
    throw new CtxfoldError("E_CHECKPOINT_MISMATCH", `${file} was written for ${checkpoint.input} with ${JSON.stringify(checkpoint.options)}; rerun with the same input and options, or without --resume`);
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

function inputChanged(input: string, checkpoint: string, what: string): CtxfoldError {
  return new CtxfoldError("E_CHECKPOINT_MISMATCH", `${input === "-" ? "stdin" : input} changed since ${checkpoint} was written (${what}): ${kStartOver}`);
}

/** Runs the batch; resolves with its summary (interrupted or not), rejects on fatal errors. */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const started = performance.now();
  const job: JobOptions = {
    budget: options.budget, format: options.format, mode: options.mode, file: options.input === "-" ? "stdin" : options.input,
    ...(options.preset ? { preset: options.preset } : {}), ...(options.offloadDir ? { offloadDir: options.offloadDir } : {}),
    ...(options.redactOffload ? { redactOffload: true } : {}),
  };
  const { file: _file, ...jobKey } = job; // eslint-disable-line @typescript-eslint/no-unused-vars
  const toFile = options.output !== "-";
  const checkpointPath = toFile ? `${options.output}.checkpoint.json` : undefined;
  const errorsPath = toFile ? `${options.output}.errors.jsonl` : undefined;
  if (toFile) refuseToOverwriteInput(options, [[options.output, "the output"], [errorsPath!, "the errors file"], [checkpointPath!, "the checkpoint"]]);

  const inputFile = inputFileOf(options.input === "-" ? undefined : statSync(options.input));
  const totalBytes = inputFile.size;

  // Resume: the checkpoint must be this run's, over the same input; output and errors are cut
  // back to what it covers once its lines done are read and found the same.
  let resumed: Checkpoint | undefined;
  if (options.resume) {
    if (!checkpointPath) throw new CtxfoldError("E_BAD_INPUT", "--resume needs -o FILE (a checkpoint sits beside the output file)");
    resumed = await checkpointToResume(checkpointPath, options.input, jobKey, inputFile);
  }

  const raw: Readable = options.input === "-" ? options.stdin ?? process.stdin : createReadStream(options.input, { highWaterMark: 1 << 20 });
  let readBytes = 0;
  /** SHA-256 of the input's lines done (those skipped on resume, then every chunk written). */
  const done = createHash("sha256");
  let input: AsyncIterable<Buffer> = gunzipIfGzip(counting(raw, (n) => (readBytes += n)), job.file);
  let out: Sink;
  let errBytes = resumed?.errBytes ?? 0;
  let errSink: Sink | undefined;
  try {
    if (resumed) {
      input = await skipLines(input, resumed.lines, done);
      if (done.copy().digest("hex") !== resumed.inputFile.doneSha256) {
        throw inputChanged(options.input, checkpointPath!, `its first ${resumed.lines} lines are not the ones compacted`);
      }
    } else if (checkpointPath && existsSync(checkpointPath)) {
      await rm(checkpointPath);
    }
    out = toFile ? await fileSink(options.output, resumed?.outBytes ?? 0) : streamSink(options.stdout ?? process.stdout, "stdout");
    if (errorsPath) {
      if (resumed) {
        if (existsSync(errorsPath)) await writingTo(errorsPath, truncate(errorsPath, errBytes));
        errSink = await fileSink(errorsPath, errBytes);
      } else if (existsSync(errorsPath)) {
        await rm(errorsPath);
      }
    }
  } catch (err) {
    raw.destroy();
    throw err;
  }

  const inProcess = options.workers <= 1 || (totalBytes !== undefined && totalBytes < (options.inProcessBelow ?? kDefaultInProcessBelow));
  const workers = inProcess ? 0 : options.workers;
  const heapMb = options.workerHeapMb ?? kDefaultWorkerHeapMb;
  const pool = inProcess ? undefined : new Piscina({
    filename: workerFile(), minThreads: workers, maxThreads: workers, idleTimeout: 60_000,
    workerData: { coreModule: getCoreModule() },
    ...(heapMb > 0 ? { resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: kWorkerYoungHeapMb } } : {}),
  });

  const summary: BatchSummary = {
    ...(resumed ? structuredClone(resumed.stats) : emptyStats()), lines: resumed?.lines ?? 0, chunks: 0, seconds: 0, workers,
    interrupted: false, resumedAfterLine: resumed?.lines ?? 0, retried: 0, crashed: 0, peakRssMB: 0,
    ...(errorsPath ? { errorsFile: errorsPath } : {}), ...(checkpointPath ? { checkpoint: checkpointPath } : {}),
  };
  let stopping = false;
  const removeInterrupt = options.onInterrupt?.(() => {
    stopping = true;
  });

  // Output bytes in the file so far, resumed ones included.
  let outBytes = resumed?.outBytes ?? 0;
  const saveCheckpoint = () => {
    if (!checkpointPath) return;
    const stats = emptyStats();
    addStats(stats, summary);
    const cp: Checkpoint = {
      ctxfold: "checkpoint", version: kCheckpointVersion, input: options.input, inputFile: { ...inputFile, doneSha256: done.copy().digest("hex") },
      options: jobKey, lines: summary.lines, outBytes, errBytes, stats,
    };
    try {
      writeFileAtomic(kNodeFsOps, checkpointPath, Buffer.from(JSON.stringify(cp)), false);
    } catch (err) {
      throw outputWriteError(checkpointPath, (err as Error).cause ?? err); // the OS error, not the store's wording
    }
  };

  const oomHint = (err: unknown) => ((err as { code?: unknown } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY" ? ` (raise --max-worker-heap-mb, now ${heapMb})` : "");
  // A worker that dies outside a task (while starting, or idle) stops the batch: Piscina may not
  // replace it (tasks then wait forever), and a worker that cannot start will not start on retry.
  let poolFailure: CtxfoldError | undefined;
  pool?.on("error", (err: unknown) => {
    if (poolFailure) return;
    poolFailure = new CtxfoldError("E_WORKER_CRASH", `a worker died outside a chunk: ${err instanceof Error ? err.message : String(err)}${oomHint(err)}`);
    void pool.destroy().catch(() => undefined); // rejects the chunks in flight
  });

  const runChunk = async (bytes: Uint8Array, firstLine: number, chunk: number): Promise<ChunkResult> => {
    if (!pool) return compactChunk(bytes, firstLine, job);
    let lastError: unknown;
    for (let attempt = 0; attempt < 2; attempt++) {
      const copy = bytes.slice();
      const task: WorkerTask = { bytes: copy, firstLine, options: job, chunk, attempt };
      let reply: WorkerReply;
      try {
        reply = (await pool.run(task, { transferList: [copy.buffer as ArrayBuffer] })) as WorkerReply;
      } catch (err) {
        // Only a worker's death rejects a task (the worker returns its errors).
        if (poolFailure) throw poolFailure;
        lastError = err;
        if (attempt === 0) summary.retried++;
        continue;
      }
      if (!(reply instanceof Uint8Array)) throw CtxfoldError.fromWire(reply);
      const { out: o, meta } = unpack<Omit<ChunkResult, "out">>(reply);
      return { out: o, ...meta };
    }
    summary.crashed++;
    return passThrough(bytes, firstLine, `worker died compacting this chunk twice: ${lastError instanceof Error ? lastError.message : String(lastError)}${oomHint(lastError)}`);
  };

  const inFlight = new Map<number, { bytes: Uint8Array; result: Promise<ChunkResult> }>();
  const limit = pool ? 2 * workers : 1;
  let next = 0; // the next chunk to write
  let issued = 0;
  let failure: unknown;

  /** Writes a chunk's result; `bytes` are the chunk's input lines, now done. */
  const writeResult = async (bytes: Uint8Array, r: ChunkResult) => {
    if (options.strict && r.errors.length > 0) {
      const e = r.errors[0];
      throw new CtxfoldError(e.code as never, `${e.reason} (--strict: stopped; ${summary.lines} lines before it were written)`, { path: `${job.file}:${e.line}${e.path ? `: ${e.path}` : ""}` });
    }
    await out.write(r.out);
    if (r.errors.length > 0) {
      if (errorsPath) {
        errSink ??= await fileSink(errorsPath, 0);
        const text = Buffer.from(r.errors.map((e) => JSON.stringify(e) + "\n").join(""), "utf8");
        await errSink.write(text);
        errBytes += text.length;
      } else for (const e of r.errors) options.onError?.(e);
    }
    addStats(summary, r.stats);
    summary.lines += r.lines;
    summary.chunks++;
    outBytes += r.out.length;
    done.update(bytes);
    saveCheckpoint();
    // Test hook: CTXFOLD_TEST_CHUNK_DELAY_MS slows writing, so an interrupt lands mid-run.
    const delay = Number(process.env.CTXFOLD_TEST_CHUNK_DELAY_MS);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    options.onProgress?.({ runs: summary.runs, readBytes, ...(totalBytes !== undefined ? { totalBytes } : {}), elapsedMs: performance.now() - started });
  };

  /** Writes the oldest chunk in flight once it is done (output stays in input order). */
  const writeNext = async () => {
    const { bytes, result } = inFlight.get(next)!;
    inFlight.delete(next);
    next++;
    await writeResult(bytes, await result);
  };

  try {
    for await (const { bytes, firstLine } of chunksOf(input, options.chunkBytes ?? (Number(process.env.CTXFOLD_CHUNK_BYTES) || kDefaultChunkBytes), (resumed?.lines ?? 0) + 1)) {
      if (stopping) break;
      const result = runChunk(bytes, firstLine, issued);
      result.catch(() => undefined); // awaited in order by writeNext
      inFlight.set(issued++, { bytes, result });
      if (inFlight.size >= limit) await writeNext();
    }
    while (inFlight.size > 0) await writeNext();
  } catch (err) {
    failure = err;
  } finally {
    removeInterrupt?.();
    raw.destroy();
    if (!poolFailure) await pool?.destroy();
    await out.close();
    await errSink?.close();
  }
  if (failure) {
    if (checkpointPath && existsSync(checkpointPath) && options.strict) await rm(checkpointPath);
    throw failure;
  }
  summary.interrupted = stopping;
  if (!stopping && checkpointPath && existsSync(checkpointPath)) await rm(checkpointPath);
  summary.seconds = (performance.now() - started) / 1000;
  summary.peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
  return summary;
}
