/**
 * The batch's outputs: opened (a resume's cut back to what its checkpoint covers), each chunk's
 * result written to them in the order it is handed over, and what they hold kept in step (the
 * hashes and byte counts of the input's lines done and the bytes written, the summary's counts)
 * for the checkpoint that lets a resume continue them. The engine (engine.ts) drives the batch
 * and decides what is written when.
 */
import { createHash, type Hash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { rm, truncate } from "node:fs/promises";
import type { Readable } from "node:stream";
import { CtxfoldError, type CtxfoldErrorCode } from "../errors.js";
import { inputChanged, kCheckpointVersion, skipLines, writeCheckpoint, writtenAsRecorded, type Checkpoint, type InputFile, type JobKey } from "./checkpoint.js";
import type { LongLine } from "./chunks.js";
import type { BatchOptions, BatchSummary } from "./batch-options.js";
import { gunzipIfGzip } from "./input.js";
import { addStats, emptyStats, type ChunkResult, type JobOptions } from "./job.js";
import { fileSink, streamSink, writingTo, type Sink } from "./output.js";

/** The files beside the output (none when it is stdout). */
export interface BatchFiles {
  checkpoint: string;
  errors: string;
}

/** What the batch is, read from its options before anything is opened. */
export interface BatchPlan {
  /** What each chunk is compacted with. */
  job: JobOptions;
  /** The job as a checkpoint records it (without the input's name). */
  jobKey: JobKey;
  files: BatchFiles | undefined;
  /** The input file's size and mtime as the batch starts (none for stdin). */
  inputFile: InputFile;
  /** The checkpoint a resume continues from. */
  resumed: Checkpoint | undefined;
  /** A line longer than this, bytes, is written through as it is read (BatchOptions.maxLineBytes). */
  maxLineBytes: number;
}

/** The batch's input and outputs, opened; a resume's lines done already read past. */
export interface OpenedBatch {
  /** The input as read (destroyed when the batch ends). */
  raw: Readable;
  /** The input's lines not done yet, decompressed. */
  input: AsyncIterable<Buffer>;
  /** For gzip data, the compressed bytes its decompressor has taken (see gunzipIfGzip). */
  gzip: { bytesIn?: () => number };
  /** SHA-256 of the input's lines done (those skipped on resume, then every chunk written). */
  done: Hash;
  /** SHA-256 of the output's and the errors file's bytes written (a resume's checked and kept). */
  outHash: Hash;
  errHash: Hash;
  out: Sink;
  /** The errors file, when a resume continues one (otherwise opened at the first error record). */
  errSink: Sink | undefined;
}

const kNewline = new Uint8Array([0x0a]);
/**
 * How often the checkpoint is rewritten, at most (ms): an atomic rewrite per chunk cost ~10% of
 * a batch of small runs on a slow filesystem; a resume redoes at most this much work.
 */
const kCheckpointEveryMs = 1000;

/**
 * Opens the input (past a resume's lines done, which must hash as the checkpoint says) and the
 * outputs: the output cut back to what the checkpoint covers, or created; the errors file cut
 * back likewise, or removed with the checkpoint of an earlier run. A resume's outputs must begin
 * with the bytes the checkpoint says were written (writtenAsRecorded), checked before either is cut.
 */
export async function openBatch(options: BatchOptions, name: string, files: BatchFiles | undefined, resumed: Checkpoint | undefined): Promise<OpenedBatch> {
  const raw: Readable = options.input === "-" ? (options.stdin ?? process.stdin) : createReadStream(options.input, { highWaterMark: 1 << 20 });
  const gzip: { bytesIn?: () => number } = {};
  const done = createHash("sha256");
  let input: AsyncIterable<Buffer> = gunzipIfGzip(raw, name, gzip);
  try {
    if (resumed) {
      input = await skipLines(input, resumed.lines, done);
      if (done.copy().digest("hex") !== resumed.inputFile.doneSha256) {
        throw inputChanged(options.input, files!.checkpoint, `its first ${resumed.lines} lines are not the ones compacted`);
      }
    } else if (files && existsSync(files.checkpoint)) {
      await rm(files.checkpoint);
    }
    const outHash = resumed ? await writtenAsRecorded(options.output, resumed.outBytes, resumed.outSha256, files!.checkpoint) : createHash("sha256");
    const errHash = resumed ? await writtenAsRecorded(files!.errors, resumed.errBytes, resumed.errSha256, files!.checkpoint) : createHash("sha256");
    const out = files ? await fileSink(options.output, resumed?.outBytes ?? 0) : streamSink(options.stdout ?? process.stdout, "stdout");
    let errSink: Sink | undefined;
    if (files) {
      if (resumed) {
        if (existsSync(files.errors)) await writingTo(files.errors, truncate(files.errors, resumed.errBytes));
        errSink = await fileSink(files.errors, resumed.errBytes);
      } else if (existsSync(files.errors)) {
        await rm(files.errors);
      }
    }
    return { raw, input, gzip, done, outHash, errHash, out, errSink };
  } catch (err) {
    raw.destroy();
    throw err;
  }
}

/**
 * Writes the batch's results to its opened outputs and keeps the tallies of what they hold: the
 * summary's counts, and the hashes and byte counts a checkpoint records.
 */
export class BatchWriter {
  /** The input's lines done and the output written, hashed (a line over the limit swaps in its copies once it is whole). */
  private done: Hash;
  private outHash: Hash;
  private readonly errHash: Hash;
  private readonly out: Sink;
  private errSink: Sink | undefined;
  /** Output and errors-file bytes written so far, resumed ones included. */
  private outBytes: number;
  private errBytes: number;
  /** When the checkpoint was written: after the first chunk, then at most every kCheckpointEveryMs, and when the run stops. */
  private savedAt = -Infinity;
  /** Results recorded since the checkpoint was written: a run stopped before its first chunk was written still leaves one to resume from. */
  private unsaved = true;
  /** Input bytes taken by the chunker (decompressed), a resume's lines done included. */
  private pulledBytes: number;
  private readonly gzip: OpenedBatch["gzip"];

  /**
   * @param summary the batch's summary, whose counts each result written adds to
   * @param started when the batch started (performance.now()), for its progress
   * @param stopping whether the run is to stop (a line over the limit is then cut short)
   */
  constructor(
    private readonly options: BatchOptions,
    private readonly plan: BatchPlan,
    opened: OpenedBatch,
    private readonly summary: BatchSummary,
    private readonly started: number,
    private readonly stopping: () => boolean,
  ) {
    this.done = opened.done;
    this.outHash = opened.outHash;
    this.errHash = opened.errHash;
    this.out = opened.out;
    this.errSink = opened.errSink;
    this.gzip = opened.gzip;
    this.outBytes = plan.resumed?.outBytes ?? 0;
    this.errBytes = plan.resumed?.errBytes ?? 0;
    this.pulledBytes = plan.resumed?.stats.bytesIn ?? 0;
  }

  /** Counts `bytes` of input the chunker took (see decompressedSize). */
  pulled(bytes: number): void {
    this.pulledBytes += bytes;
  }

  /** Writes a chunk's result; `bytes` are the chunk's input lines, now done. */
  async writeResult(bytes: Uint8Array, r: ChunkResult): Promise<void> {
    if (this.options.strict && r.errors.length > 0) {
      const e = r.errors[0];
      throw this.strictStop(e.code as never, e.reason, `${e.line}${e.path ? `: ${e.path}` : ""}`);
    }
    await this.out.write(r.out);
    this.outBytes += r.out.length;
    this.outHash.update(r.out);
    this.done.update(bytes);
    await this.record(r);
  }

  /**
   * Writes a line over the line limit through as it is read, never held whole, with its
   * E_TOO_LARGE record; false when a stop cut it short (the checkpoint ends before it, so a
   * resume cuts off what of it was written and writes it again).
   */
  async writeLongLine(long: LongLine, line: number): Promise<boolean> {
    const limit = `over --max-line-mb ${this.plan.maxLineBytes / 2 ** 20}: written through unparsed (raise --max-line-mb to compact it)`;
    if (this.options.strict) throw this.strictStop("E_TOO_LARGE", `a line ${limit}`, String(line));
    const lineDone = this.done.copy();
    const lineOut = this.outHash.copy();
    let length = 0;
    for await (const block of long.blocks) {
      if (this.stopping()) return false;
      await this.out.write(block);
      lineDone.update(block);
      lineOut.update(block);
      length += block.length;
    }
    await this.out.write(kNewline);
    lineOut.update(kNewline);
    if (long.newline) lineDone.update(kNewline);
    [this.done, this.outHash] = [lineDone, lineOut];
    this.outBytes += length + 1;
    const stats = { ...emptyStats(), runs: 1, errors: 1, bytesIn: length + 1, bytesOut: length + 1 };
    await this.record({ errors: [{ line, code: "E_TOO_LARGE", reason: `a line of ${(length / 2 ** 20).toFixed(1)} MB, ${limit}` }], stats, lines: 1 });
    return true;
  }

  /** Writes the checkpoint of all written so far, unless it already says so (or the output is stdout). */
  saveCheckpoint(): void {
    const files = this.plan.files;
    if (!files || !this.unsaved) return;
    const stats = emptyStats();
    addStats(stats, this.summary);
    writeCheckpoint(files.checkpoint, {
      ctxfold: "checkpoint",
      version: kCheckpointVersion,
      input: this.options.input,
      inputFile: { ...this.plan.inputFile, doneSha256: this.done.copy().digest("hex") },
      options: this.plan.jobKey,
      lines: this.summary.lines,
      outBytes: this.outBytes,
      errBytes: this.errBytes,
      outSha256: this.outHash.copy().digest("hex"),
      errSha256: this.errHash.copy().digest("hex"),
      stats,
    });
    this.savedAt = performance.now();
    this.unsaved = false;
  }

  /** Closes the output, then the errors file. */
  async close(): Promise<void> {
    await this.out.close();
    await this.errSink?.close();
  }

  /** Records a result written: its error records, its stats, the checkpoint when due, progress. */
  private async record(r: Omit<ChunkResult, "out">): Promise<void> {
    if (r.errors.length > 0) await this.writeErrors(r.errors);
    addStats(this.summary, r.stats);
    this.summary.lines += r.lines;
    this.summary.chunks++;
    this.unsaved = true;
    if (performance.now() - this.savedAt >= kCheckpointEveryMs) this.saveCheckpoint();
    const delayMs = this.options.testHooks?.chunkDelayMs ?? 0;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    this.reportProgress();
  }

  /** Appends error records to the errors file (opened at the first), or hands them to onError when the output is stdout. */
  private async writeErrors(errors: ChunkResult["errors"]): Promise<void> {
    const files = this.plan.files;
    if (!files) {
      for (const e of errors) this.options.onError?.(e);
      return;
    }
    this.errSink ??= await fileSink(files.errors, 0);
    const text = Buffer.from(errors.map((e) => JSON.stringify(e) + "\n").join(""), "utf8");
    await this.errSink.write(text);
    this.errHash.update(text);
    this.errBytes += text.length;
  }

  /** Tells onProgress the runs written, the share of the input written when its size is known, and the time taken. */
  private reportProgress(): void {
    const totalBytes = this.plan.inputFile.size;
    this.options.onProgress?.({
      runs: this.summary.runs,
      elapsedMs: performance.now() - this.started,
      ...(totalBytes ? { doneFraction: Math.min(1, this.summary.bytesIn / this.decompressedSize(totalBytes)) } : {}),
    });
  }

  /**
   * The input's size decompressed: for a .gz, `size` times how much the input taken so far
   * expanded (the chunker's bytes against the compressed bytes they came from).
   */
  private decompressedSize(size: number): number {
    return size * (this.gzip.bytesIn ? this.pulledBytes / Math.max(1, this.gzip.bytesIn()) : 1);
  }

  /** The error a batch under --strict stops with: `code` and `reason`, at `where` (a line, and a path in it) of the input. */
  private strictStop(code: CtxfoldErrorCode, reason: string, where: string): CtxfoldError {
    return new CtxfoldError(code, `${reason} (--strict: stopped; ${this.summary.lines} lines before it were written)`, {
      path: `${this.plan.job.file}:${where}`,
    });
  }
}
