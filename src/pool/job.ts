/**
 * The batch engine's unit of work, shared by the in-process path and the Piscina workers: a
 * chunk of whole JSONL lines in, the compacted lines (in order, in each run's own format) plus
 * error records and stats out. Pure apart from the offload store it writes to.
 */
import * as path from "node:path";
import type { Format } from "../adapters/index.js";
import { asCtxfoldError, CtxfoldError } from "../errors.js";
import { type Compactor, createCompactor } from "../policy/index.js";
import type { ConfigFileSettings } from "../policy/config-file.js";
import { createMemoryStore, createPackStore, mayNameRefs, runScopeRefs, writeScopeRecord, type ContentAddressedStore, type RunScope } from "../store/index.js";
import type { PresetName } from "../steps/config.js";
import { encodingIndex } from "../tokens/weights-table.js";
import { byteRunTokens } from "./byte-fit.js";
import { isBlankLine, linesOf } from "./input.js";
import { scanJson } from "./json-scan.js";
import { lineOf, nestsDeeperThan, parseLine, runIdOf, runOfLine, wireOf } from "./jsonl.js";

export interface JobOptions {
  budget: number;
  /** The input's format, or "auto" to detect it per run. */
  format: Format | "auto";
  mode: "tiered" | "legacy";
  /** The step compactor's preset for stage 3's step compaction. @default none: the step compactor's defaults */
  preset?: PresetName;
  /**
   * Compactor settings besides these (a config file's, readConfigFile: JSON values only, so it
   * crosses to worker threads and queue workers as it is). @default none: the defaults
   */
  config?: ConfigFileSettings;
  /** Where removed and shortened originals go (a pack store). @default none: kept in memory (tests, --dry runs) */
  offloadDir?: string;
  /** The input's name in error records. */
  file: string;
  /**
   * Redact secrets in what goes to the offload store too (the compactor's redactOffload): the
   * stored originals are then the redacted texts. @default false
   */
  redactOffload?: boolean;
}

/** A line that could not be compacted: it was written through unchanged. */
export interface ErrorRecord {
  line: number;
  id?: string;
  code: string;
  reason: string;
  path?: string;
}

export interface ChunkStats {
  runs: number;
  /** Runs a compaction changed. */
  compacted: number;
  /** Runs within the soft threshold, written through byte-identical. */
  fit: number;
  /** Runs whose critical messages alone exceed the budget (written compacted as far as possible). */
  infeasible: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  tiers: { normal: number; pressure: number; critical: number };
  /** Bytes the offload store took under new refs (bytes it held already, from this batch or an earlier one, count nothing). */
  offloadedBytes: number;
  bytesIn: number;
  bytesOut: number;
}

export interface ChunkResult {
  out: Uint8Array;
  errors: ErrorRecord[];
  stats: ChunkStats;
  /** Input lines this chunk held. */
  lines: number;
}

export const emptyStats = (): ChunkStats => ({
  runs: 0,
  compacted: 0,
  fit: 0,
  infeasible: 0,
  errors: 0,
  tokensIn: 0,
  tokensOut: 0,
  tiers: { normal: 0, pressure: 0, critical: 0 },
  offloadedBytes: 0,
  bytesIn: 0,
  bytesOut: 0,
});

export function addStats(into: ChunkStats, s: ChunkStats): void {
  for (const k of ["runs", "compacted", "fit", "infeasible", "errors", "tokensIn", "tokensOut", "offloadedBytes", "bytesIn", "bytesOut"] as const)
    into[k] += s[k];
  for (const t of ["normal", "pressure", "critical"] as const) into.tiers[t] += s.tiers[t];
}

/** One compactor per distinct options in this thread (its memo and measurements carry across chunks), with its store. */
const kCompactors = new Map<string, { compactor: Compactor; store: ContentAddressedStore }>();

function compactorFor(options: JobOptions): { compactor: Compactor; store: ContentAddressedStore } {
  const key = JSON.stringify([options.mode, options.preset ?? null, options.offloadDir ?? null, options.redactOffload ?? false, options.config ?? null]);
  let hit = kCompactors.get(key);
  if (!hit) {
    const store = options.offloadDir ? createPackStore({ dir: options.offloadDir }) : createMemoryStore();
    hit = {
      compactor: createCompactor({
        ...options.config,
        store,
        mode: options.mode,
        redactOffload: options.redactOffload ?? false,
        ...(options.preset ? { stepPreset: options.preset } : {}),
      }),
      store,
    };
    kCompactors.set(key, hit);
  }
  return hit;
}

/** Lines longer than this are not scanned for the byte path (its scratch is twice the line). */
const kByteScanMaxBytes = 16 << 20;
/**
 * Bytes per estimated token past which a line is taken not to fit without scanning it: real runs
 * measure 3.4-5.6 (the dev corpus), so a longer line would only pay for a scan the parse path
 * repeats. A guess about speed only: a line that does fit still fits through the parse path.
 */
const kMaxBytesPerToken = 12;

/**
 * The run's estimated tokens from its bytes when the byte path vouches for them (byte-fit.ts),
 * or undefined: the parse path then decides, as it does when the scan itself fails (the core
 * cannot grow its memory, say): the byte path only ever saves work.
 */
function byteTokens(raw: Uint8Array, options: JobOptions, compactor: Compactor): number | undefined {
  if (options.format !== "auto" && options.format !== "openai-chat") return undefined;
  if (raw.length > Math.min(kByteScanMaxBytes, kMaxBytesPerToken * compactor.settings.softRatio * options.budget)) return undefined;
  try {
    const { tape } = scanJson(raw);
    return tape && byteRunTokens(tape, raw, options.format, encodingIndex(compactor.counter.encoding));
  } catch {
    return undefined;
  }
}

/** A worker parses runs of at most 1/kRunsPerWorkerHeap of its heap cap (compactChunk). */
const kRunsPerWorkerHeap = 4;

function tooLargeRun(bytes: number, heapMb: number): CtxfoldError {
  const mb = (n: number) => (n / 2 ** 20).toFixed(1);
  return new CtxfoldError(
    "E_TOO_LARGE",
    `a run of ${mb(bytes)} MB is over a quarter of a worker's heap (raise --max-worker-heap-mb, now ${heapMb}, to ${Math.ceil((bytes * kRunsPerWorkerHeap) / 2 ** 20)} or more, or compact it with --workers 1)`,
  );
}

/**
 * A run nested deeper than this (arrays and objects) is written through with E_TOO_LARGE before
 * it is parsed. Reading and rendering a run recurse per level (JSON.stringify among them), so some
 * depth overflows the stack, and where depends on the thread's stack: ~4,100 levels on the main
 * thread, ~20,000 in a worker (4 MB). A limit of its own, well under both, gives a run one verdict
 * in-process and in the pool; real runs nest under 20.
 */
export const kMaxRunDepth = 1000;

function tooDeepRun(): CtxfoldError {
  return new CtxfoldError("E_TOO_LARGE", `the run nests arrays and objects more than ${kMaxRunDepth} levels deep: not compacted (written through unchanged)`);
}

const kEncoder = new TextEncoder();
const kNewline = new Uint8Array([0x0a]);

/**
 * Compacts every line of `bytes` (whole lines; the last may lack its newline) whose first line
 * is number `firstLine` of the input. A line that is not JSON, not a run, or that the compactor
 * rejects or fails on for any reason (a failure that is no CtxfoldError becomes E_INTERNAL; a
 * run nested more than kMaxRunDepth levels deep gets E_TOO_LARGE before it is parsed, on either
 * thread alike) is written through byte for byte with an error record, so one run never costs
 * the batch or the rest of its chunk; a run within the soft
 * threshold is written through byte for byte too (nothing to do, and its bytes stay the
 * caller's); every other run is written as the compacted messages in its own format, the
 * line's other fields kept in their order.
 *
 * In a worker whose heap is capped at `workerHeapMb`, a run whose line is more than a quarter of
 * the cap (kRunsPerWorkerHeap) is written through with an E_TOO_LARGE record naming the flag,
 * before it is parsed: its parse alone could need more than the cap in one allocation, which
 * Node cannot recover from in a worker (it aborts the whole process, not the worker).
 *
 * With an offload dir, each compacted run's scope (the refs its output reaches: its id, or its
 * file and line when it has none) goes into a scope record in the dir once the store is flushed
 * (store/scope-record.ts), before the output naming the refs is written: a reader confined to
 * the run then finds them.
 *
 * Throws only E_STORE_WRITE (a put, the closing flush of the offload store or the scope record
 * failed: a full or unwritable offload dir fails every run alike, and output whose refs do not
 * resolve must not be written) and what fails outside any run.
 */
export async function compactChunk(bytes: Uint8Array, firstLine: number, options: JobOptions, workerHeapMb = 0): Promise<ChunkResult> {
  const maxRunBytes = workerHeapMb > 0 ? (workerHeapMb * 2 ** 20) / kRunsPerWorkerHeap : Infinity;
  const { compactor, store } = compactorFor(options);
  const offloadedBefore = store.savedBytes;
  const stats = emptyStats();
  const errors: ErrorRecord[] = [];
  const pieces: Uint8Array[] = [];
  const scopes: RunScope[] = [];
  let lines = 0;
  for (const { raw, index } of linesOf(bytes)) {
    lines++;
    const lineNo = firstLine + index;
    stats.bytesIn += raw.length + 1;
    const through = () => {
      pieces.push(raw, kNewline);
      stats.bytesOut += raw.length + 1;
    };
    if (isBlankLine(raw)) {
      through(); // a blank line stays, so line numbers keep meaning the same in the output
      continue;
    }
    stats.runs++;
    let id: string | undefined;
    try {
      // A run the byte path measures within the soft threshold is written through unparsed,
      // counted as the parse path would count it.
      const fits = byteTokens(raw, options, compactor);
      if (fits !== undefined && compactor.tier(fits, options.budget) === "normal") {
        stats.tokensIn += fits;
        stats.tokensOut += fits;
        stats.tiers.normal++;
        stats.fit++;
        through();
        continue;
      }
      if (raw.length > maxRunBytes) throw tooLargeRun(raw.length, workerHeapMb);
      if (nestsDeeperThan(raw, kMaxRunDepth)) throw tooDeepRun();
      const value = parseLine(raw);
      id = runIdOf(value);
      const run = runOfLine(value, lineNo);
      const r = await compactor.compact(wireOf(run), { budget: options.budget, ...(options.format === "auto" ? {} : { format: options.format }) });
      // Rendered before any count, so a run that fails here counts as an error only.
      const json = r.tier === "normal" ? undefined : JSON.stringify(lineOf(r.messages, run.envelope));
      const encoded = json === undefined ? undefined : kEncoder.encode(json);
      stats.tokensIn += r.tokensBefore;
      stats.tokensOut += r.tokensAfter;
      stats.tiers[r.tier]++;
      if (r.status === "budget_infeasible") stats.infeasible++;
      if (!encoded) {
        stats.fit++;
        through();
        continue;
      }
      stats.compacted++;
      if (options.offloadDir) {
        const input = mayNameRefs(raw, store.prefix) ? JSON.stringify(value) : "";
        scopes.push({ ...runSelector(id, options.file, lineNo), refs: runScopeRefs(store, json!, input) });
      }
      pieces.push(encoded, kNewline);
      stats.bytesOut += encoded.length + 1;
    } catch (thrown) {
      const err = asCtxfoldError(thrown);
      if (err.code === "E_STORE_WRITE") throw err; // see the doc comment: fatal, not the run's fault
      stats.errors++;
      errors.push({ line: lineNo, ...(id !== undefined ? { id } : {}), code: err.code, reason: err.message, ...(err.path ? { path: err.path } : {}) });
      through();
    }
  }
  // Every ref in this chunk's output resolves on disk before the output is written.
  store.flush();
  if (options.offloadDir) writeScopeRecord(options.offloadDir, store.prefix, scopes);
  stats.offloadedBytes = store.savedBytes - offloadedBefore;
  return { out: Buffer.concat(pieces), errors, stats, lines };
}

/** How a run's scope names it: its id, or its input file (absolute; `-` for stdin) and line. */
function runSelector(id: string | undefined, file: string, line: number): { run: string } | { file: string; line: number } {
  return id !== undefined ? { run: id } : { file: file === "stdin" ? "-" : path.resolve(file), line };
}

/** out ‖ JSON(meta) ‖ uint32 length of the JSON, in one fresh buffer (transferable). */
export function pack(out: Uint8Array, meta: unknown): Uint8Array {
  const json = Buffer.from(JSON.stringify(meta), "utf8");
  const packed = new Uint8Array(out.length + json.length + 4);
  packed.set(out, 0);
  packed.set(json, out.length);
  new DataView(packed.buffer).setUint32(out.length + json.length, json.length, true);
  return packed;
}

export function unpack<M>(packed: Uint8Array): { out: Uint8Array; meta: M } {
  const n = new DataView(packed.buffer, packed.byteOffset, packed.byteLength).getUint32(packed.length - 4, true);
  const at = packed.length - 4 - n;
  return { out: packed.subarray(0, at), meta: JSON.parse(Buffer.from(packed.buffer, packed.byteOffset + at, n).toString("utf8")) as M };
}
