import { CtxfoldError, notStringError, tooLargeError } from "../errors.js";
import { kDefaultBatchBytes, kDefaultHashSeed, kMaxRetainedMemoryBytes, kMaxWasmMemoryBytes, kWasmPageBytes } from "../constants.js";
import { getCoreModule, kCoreAbiVersion } from "./load-core.js";

/** What core.wasm exports (assembly/index.ts). Pointers and lengths are byte offsets. */
export interface CoreExports {
  memory: WebAssembly.Memory;
  heapBase(): number;
  abiVersion(): number;
  hashBytes(ptr: number, len: number, seed: bigint): bigint;
  hashBatch(data: number, offsets: number, n: number, seed: bigint, out: number): number;
  estimateBatch(data: number, offsets: number, n: number, weights: number, out: number): number;
  measureBatch(data: number, offsets: number, n: number, seed: bigint, weights: number, outHash: number, outEst: number): number;
  featureBatch(data: number, offsets: number, n: number, out: number): number;
  featureCount(): number;
  buildTurnMap(turns: number, n: number, outStart: number, outEnd: number, outTurn: number): number;
  groupCategories(steps: number, n: number, flags: number, outStart: number, outCount: number, outFailures: number, outStatus: number): number;
  termLinesScratch(m: number): number;
  termLines(
    data: number,
    offsets: number,
    n: number,
    terms: number,
    termOffsets: number,
    flags: number,
    m: number,
    scratch: number,
    out: number,
    ends: number,
    found: number,
  ): number;
  scanJson(
    data: number,
    len: number,
    weights: number,
    outTape: number,
    max: number,
    outEstimates: number,
    scratch: number,
    stack: number,
    maxDepth: number,
    outStatus: number,
  ): number;
  specificTermSpans(data: number, offsets: number, n: number, out: number, ends: number, nonAscii: number, table: number, slots: number): number;
}

/**
 * Weight rows the estimator kernel reads, and estimates it writes per string: one per encoding it
 * is calibrated for (assembly/estimate-tokens.ts ENCODINGS). Fixed by the ABI, like the kernels'
 * signatures; which encoding each row stands for is the caller's business (src/tokens).
 */
export const kEstimateRows = 2;

/** Kernel E_* codes (assembly/errors.ts) to host error codes. */
const kKernelErrors: Record<number, [CtxfoldError["code"], string]> = {
  [-1]: ["E_BAD_INPUT", "negative batch length"],
  [-2]: ["E_BAD_TURN_ID", "turn index below -1 (use -1 for a message without a turn id)"],
  [-3]: ["E_BAD_CATEGORY", "category out of range 0..127"],
  [-4]: ["E_KERNEL", "offsets table not monotonic"],
  [-5]: ["E_BAD_INPUT", "a term shorter than 2 UTF-8 bytes"],
};

/** A batch of strings as the kernels see it: UTF-16LE code units back to back, u32 byte offsets. */
export interface StringBatch {
  offsets: number;
  data: number;
  /** Items in this call. */
  count: number;
  /** First item's index in the caller's array. */
  first: number;
}

/** `n` rounded up to a multiple of 16: where kernel hosts lay out the next region of an arena. */
export const align16 = (n: number) => (n + 15) & ~15;

/** The release instantiation: no JS glue at all; an abort (only asserts in debug builds) traps. */
function instantiatePlain(module: WebAssembly.Module): CoreExports {
  const instance = new WebAssembly.Instance(module, {
    env: {
      abort: () => {
        throw new WebAssembly.RuntimeError("core.wasm aborted");
      },
    },
  });
  return instance.exports as unknown as CoreExports;
}

/** Below this mean length (UTF-16 units) a batch's strings are concatenated and written at once. */
const kConcatBelowUnits = 1024;

/**
 * Short strings are concatenated and written this many UTF-16 units at a time: a Buffer write
 * per string costs ~50–80 ns of binding overhead, while writing a concatenation walks its
 * pieces at well under 1 ns per unit, up to about this length. Past ~128K units the walk of one
 * concatenation slowed ~6× (Node 20: 1000 strings of 200 B in 221 µs as one, 65 µs written
 * one by one). Not done: making V8 flatten the concatenation first by using it as a property
 * key. That pays only where the same content comes again (its internalized copy is then found,
 * as in a benchmark that hashes one batch over and over); on new content, as a batch meets it,
 * it cost 1.5–4× (fresh strings each batch), and an in-process batch of 32 MB of real runs
 * ran 3% faster and peaked 15% lower without it (docs/batch.md).
 */
const kConcatUnits = 64 * 1024;

/**
 * Writes `s` as UTF-16LE at `at` and returns the bytes written. Buffer#ucs2Write is what
 * Buffer#write(s, at, "utf16le") calls after parsing its arguments; where a Node release lacks
 * it, the documented call is used.
 */
const ucs2Write = (Buffer.prototype as unknown as { ucs2Write?: (s: string, at: number) => number }).ucs2Write;
const writeUtf16: (b: Buffer, s: string, at: number) => number =
  typeof ucs2Write === "function" ? (b, s, at) => ucs2Write.call(b, s, at) : (b, s, at) => b.write(s, at, "utf16le");

/**
 * One instance of core.wasm on this thread, with its arena. Not re-entrant: a thread uses one
 * CoreInstance at a time, which is why getCore() hands out a per-thread singleton.
 *
 * Memory layout: [static data | weight table | arena ...]. The arena is scratch for one call:
 * every wrapper lays its inputs and outputs out from `arenaBase` and reads the results back
 * before it returns. Views over memory are rebuilt whenever the buffer changed (growth).
 *
 * The estimator's weight table comes from the caller (the host is the bottom layer and knows no
 * encodings): estimateStrings and measureStrings take it, and it is copied into linear memory
 * when the instance first sees that table object, or after a re-instantiation; later calls with
 * the same object only compare it by identity, so a table must not be changed once handed
 * over. Its shape is not passed alongside: the feature count is the kernel's own
 * (`featureCount()`, what it counts), the row count is the ABI's (kEstimateRows), and a table
 * that is not kEstimateRows rows of that many weights is rejected (E_BAD_INPUT at `weights`), so
 * a mismatch with the kernel fails at the first estimate instead of reading past the table.
 */
export class CoreInstance {
  #exports!: CoreExports;
  #buffer!: ArrayBuffer;
  #u8!: Uint8Array;
  #u32!: Uint32Array;
  #i32!: Int32Array;
  #f64!: Float64Array;
  #u64!: BigUint64Array;
  #bytes!: Buffer;
  /** Where the weight table goes, and the table now there (undefined: none yet). */
  #weightsAt = 0;
  #weights: Float64Array | undefined;
  #featureCount = 0;
  #arenaBase = 0;
  #live = false;
  /** Instances created so far (1 + re-instantiations after traps or memory release). */
  instantiations = 0;

  /**
   * @param module a compiled core (default: this thread's cached core.wasm)
   * @param instantiate how to instantiate it (default: plain WebAssembly.Instance; the debug
   *   build goes through @assemblyscript/loader, see debug-core.ts)
   */
  constructor(
    private readonly module: WebAssembly.Module = getCoreModule(),
    private readonly instantiate: (module: WebAssembly.Module) => CoreExports = instantiatePlain,
  ) {}

  get exports(): CoreExports {
    if (!this.#live) this.#instantiate();
    return this.#exports;
  }

  /** First arena byte of the live instance (instantiating it first if needed). */
  #arena(): number {
    if (!this.#live) this.#instantiate();
    return this.#arenaBase;
  }

  #instantiate(): void {
    const exports = this.instantiate(this.module);
    const abi = exports.abiVersion();
    if (abi !== kCoreAbiVersion) {
      throw new CtxfoldError("E_WASM_ABI", `core.wasm speaks ABI ${abi}, this host ${kCoreAbiVersion}; rebuild with \`npm run build\``);
    }
    this.#exports = exports;
    this.#weightsAt = align16(exports.heapBase());
    this.#weights = undefined;
    this.#featureCount = exports.featureCount();
    this.#arenaBase = this.#weightsAt;
    this.#live = true;
    this.instantiations++;
    this.#ensure(0);
  }

  /**
   * Where `weights` sits in linear memory, copying it there (and moving the arena above it)
   * unless it is the table already in place. Instantiates first if needed.
   */
  #weightTable(weights: Float64Array): number {
    if (!this.#live) this.#instantiate();
    if (weights === this.#weights && weights !== undefined) return this.#weightsAt;
    const want = kEstimateRows * this.#featureCount;
    if (!(weights instanceof Float64Array) || weights.length !== want) {
      const got = weights instanceof Float64Array ? `a Float64Array of ${weights.length}` : weights === null ? "null" : typeof weights;
      throw new CtxfoldError(
        "E_BAD_INPUT",
        `expected the estimator's weight table, a Float64Array of ${kEstimateRows} rows of ${this.#featureCount} weights; got ${got}`,
        { path: "weights" },
      );
    }
    this.#arenaBase = align16(this.#weightsAt + weights.byteLength);
    this.#ensure(0);
    this.#f64.set(weights, this.#weightsAt >>> 3);
    this.#weights = weights;
    return this.#weightsAt;
  }

  /** Makes room for `bytes` of arena and refreshes the views if memory moved. */
  #ensure(bytes: number): void {
    const memory = this.#exports.memory;
    const need = this.#arenaBase + bytes;
    if (need > kMaxWasmMemoryBytes) {
      throw new CtxfoldError("E_WASM_MEMORY", `a batch needs ${need} bytes of linear memory, over the 4 GiB of wasm32`);
    }
    const have = memory.buffer.byteLength;
    if (need > have) {
      try {
        memory.grow(Math.ceil((need - have) / kWasmPageBytes));
      } catch (cause) {
        throw new CtxfoldError("E_WASM_MEMORY", `cannot grow linear memory to ${need} bytes`, { cause });
      }
    }
    if (this.#buffer !== memory.buffer) {
      const b = memory.buffer;
      this.#buffer = b;
      this.#u8 = new Uint8Array(b);
      this.#u32 = new Uint32Array(b);
      this.#i32 = new Int32Array(b);
      this.#f64 = new Float64Array(b);
      this.#u64 = new BigUint64Array(b);
      this.#bytes = Buffer.from(b);
    }
  }

  /**
   * Runs a kernel call on the raw exports; a trap discards the instance (the next call
   * re-instantiates from the cached module) and surfaces as E_WASM_TRAP. A negative result is a
   * kernel E_* code and throws. For callers that lay out their own batches.
   */
  run(what: string, fn: (e: CoreExports) => number): number {
    let r: number;
    try {
      r = fn(this.exports);
    } catch (cause) {
      // Whatever escapes a kernel call (a trap, an abort from a debug build's assert) leaves
      // the instance in an unknown state.
      if (!CtxfoldError.isInstance(cause)) {
        this.#live = false;
        throw new CtxfoldError("E_WASM_TRAP", `${what}: core.wasm trapped (${(cause as Error).message}); instance discarded`, { cause });
      }
      throw cause;
    }
    if (r < 0) {
      const [code, message] = kKernelErrors[r] ?? ["E_KERNEL", `kernel error ${r}`];
      throw new CtxfoldError(code, `${what}: ${message}`);
    }
    return r;
  }

  /** Gives linear memory back after a call that grew it past the retention limit. */
  #release(): void {
    if (this.#live && this.#buffer.byteLength > kMaxRetainedMemoryBytes) this.#live = false;
  }

  /**
   * Room for `bytes` of arena, for kernel hosts in their own modules: the arena's first byte and
   * views over memory, valid until the next arena() or kernel call (memory may grow). Call
   * releaseArena() when the results are read.
   */
  arena(bytes: number): { base: number; u8: Uint8Array; u32: Uint32Array } {
    const base = this.#arena();
    this.#ensure(bytes);
    return { base, u8: this.#u8, u32: this.#u32 };
  }

  /** After a call laid out through arena(): memory past the retention limit is given back. */
  releaseArena(): void {
    this.#release();
  }

  /**
   * Where `weights` sits in linear memory, copied there if it is not the table in place (for
   * raw estimateBatch calls; lay batches out after this call, as it may move the arena).
   */
  weightTablePtr(weights: Float64Array): number {
    return this.#weightTable(weights);
  }

  /** Features the estimator kernel counts per string: the stride of featureCounts. */
  get featureCount(): number {
    this.#arena();
    return this.#featureCount;
  }

  /**
   * Lays `texts` out in batches of about `kDefaultBatchBytes` (a single larger text gets a batch
   * of its own) with `outBytesPerItem` of output space, and calls `fn` per batch with the
   * output pointer. Validates every item first, so a bad item fails before any work.
   */
  forEachStringBatch(texts: readonly unknown[], outBytesPerItem: number, fn: (batch: StringBatch, out: number) => void): void {
    const n = texts.length;
    for (let i = 0; i < n; i++) {
      if (typeof texts[i] !== "string") throw notStringError(`texts[${i}]`, texts[i]);
    }
    const arena = this.#arena();
    let first = 0;
    while (first < n) {
      let units = 0;
      let end = first;
      while (end < n) {
        const len = (texts[end] as string).length;
        if (end > first && (units + len) * 2 > kDefaultBatchBytes) break;
        units += len;
        end++;
      }
      const count = end - first;
      const offsets = arena;
      const out = align16(offsets + (count + 1) * 4);
      const data = align16(out + count * outBytesPerItem);
      const dataBytes = units * 2;
      if (data + dataBytes > kMaxWasmMemoryBytes) throw tooLargeError(`texts[${first}]`, "text too large for linear memory");
      this.#ensure(data - arena + dataBytes);
      const u32 = this.#u32;
      const bytes = this.#bytes;
      let pos = 0;
      let o = offsets >>> 2;
      u32[o++] = 0;
      if (count > 1 && units < count * kConcatBelowUnits) {
        // Short strings: writes of their concatenations, kConcatUnits at most each, beat a
        // Buffer write per string, whose binding overhead dominates below ~1 KB.
        let joined = "";
        let at = 0;
        for (let i = first; i < end; i++) {
          const s = texts[i] as string;
          if (joined.length > 0 && joined.length + s.length > kConcatUnits) {
            writeUtf16(bytes, joined, data + at);
            at = pos;
            joined = "";
          }
          joined += s;
          u32[o++] = pos += s.length * 2;
        }
        if (joined.length > 0) writeUtf16(bytes, joined, data + at);
      } else {
        for (let i = first; i < end; i++) {
          const s = texts[i] as string;
          if (s.length > 0) pos += writeUtf16(bytes, s, data + pos);
          u32[o++] = pos;
        }
      }
      fn({ offsets, data, count, first }, out);
      first = end;
    }
  }

  /** Content hash of each string (hash.ts has the byte view). */
  hashStrings(texts: readonly string[], seed: bigint = kDefaultHashSeed): BigUint64Array {
    const result = new BigUint64Array(texts.length);
    this.forEachStringBatch(texts, 8, (b, out) => {
      this.run("hashStrings", (e) => e.hashBatch(b.data, b.offsets, b.count, seed, out));
      result.set(this.#u64.subarray(out >>> 3, (out >>> 3) + b.count), b.first);
    });
    this.#release();
    return result;
  }

  /** XXH64 of raw bytes (offloaded files, tool outputs kept as bytes). */
  hashBytes(bytes: Uint8Array, seed: bigint = kDefaultHashSeed): bigint {
    if (!(bytes instanceof Uint8Array)) {
      throw new CtxfoldError("E_NOT_BYTES", `expected a Uint8Array, got ${bytes === null ? "null" : typeof bytes}`, { path: "bytes" });
    }
    const arena = this.#arena();
    this.#ensure(bytes.length);
    this.#u8.set(bytes, arena);
    let h = 0n;
    this.run("hashBytes", (e) => {
      h = e.hashBytes(arena, bytes.length, seed);
      return 0;
    });
    this.#release();
    return BigInt.asUintN(64, h);
  }

  /**
   * Token estimates of each string: `out[i * kEstimateRows + k]` from row k of `weights` (the
   * estimator's weight table, see the class comment), unrounded, additive over concatenation up
   * to boundary effects.
   */
  estimateStrings(texts: readonly string[], weights: Float64Array): Float64Array {
    const table = this.#weightTable(weights);
    const result = new Float64Array(texts.length * kEstimateRows);
    this.forEachStringBatch(texts, 8 * kEstimateRows, (b, out) => {
      this.run("estimateStrings", (e) => e.estimateBatch(b.data, b.offsets, b.count, table, out));
      const at = out >>> 3;
      result.set(this.#f64.subarray(at, at + b.count * kEstimateRows), b.first * kEstimateRows);
    });
    this.#release();
    return result;
  }

  /** Hash and estimates of each string in one pass over one copy: what compaction measures. */
  measureStrings(texts: readonly string[], weights: Float64Array, seed: bigint = kDefaultHashSeed): { hashes: BigUint64Array; estimates: Float64Array } {
    const table = this.#weightTable(weights);
    const hashes = new BigUint64Array(texts.length);
    const estimates = new Float64Array(texts.length * kEstimateRows);
    this.forEachStringBatch(texts, 8 + 8 * kEstimateRows, (b, out) => {
      const outEst = out + b.count * 8;
      this.run("measureStrings", (e) => e.measureBatch(b.data, b.offsets, b.count, seed, table, out, outEst));
      hashes.set(this.#u64.subarray(out >>> 3, (out >>> 3) + b.count), b.first);
      const at = outEst >>> 3;
      estimates.set(this.#f64.subarray(at, at + b.count * kEstimateRows), b.first * kEstimateRows);
    });
    this.#release();
    return { hashes, estimates };
  }

  /** The estimator's raw feature counts per string (`featureCount` per item); for calibration. */
  featureCounts(texts: readonly string[]): Uint32Array {
    const features = this.featureCount;
    const result = new Uint32Array(texts.length * features);
    this.forEachStringBatch(texts, 4 * features, (b, out) => {
      this.run("featureCounts", (e) => e.featureBatch(b.data, b.offsets, b.count, out));
      const at = out >>> 2;
      result.set(this.#u32.subarray(at, at + b.count * features), b.first * features);
    });
    this.#release();
    return result;
  }

  /** Turn groups of messages by turn index: the kernel behind TurnMap (src/block/turn-map.ts). */
  buildTurnMap(turns: Int32Array): { start: Int32Array; end: Int32Array; turn: Int32Array } {
    const n = turns.length;
    const input = this.#arena();
    const outStart = align16(input + n * 4);
    const outEnd = align16(outStart + n * 4);
    const outTurn = align16(outEnd + n * 4);
    this.#ensure(outTurn + n * 4 - input);
    this.#i32.set(turns, input >>> 2);
    const groups = this.run("buildTurnMap", (e) => e.buildTurnMap(input, n, outStart, outEnd, outTurn));
    const i32 = this.#i32;
    return {
      start: i32.slice(outStart >>> 2, (outStart >>> 2) + groups),
      end: i32.slice(outEnd >>> 2, (outEnd >>> 2) + groups),
      turn: i32.slice(outTurn >>> 2, (outTurn >>> 2) + groups),
    };
  }

  /** Runs of same-category steps: the kernel behind groupSteps (src/steps/group-steps.ts). */
  groupCategories(steps: Uint8Array, flags: number): { start: Int32Array; count: Int32Array; failures: Int32Array; status: number } {
    const n = steps.length;
    const input = this.#arena();
    const outStart = align16(input + n);
    const outCount = align16(outStart + n * 4);
    const outFailures = align16(outCount + n * 4);
    const outStatus = align16(outFailures + n * 4);
    this.#ensure(outStatus + 16 - input);
    this.#u8.set(steps, input);
    const runs = this.run("groupCategories", (e) => e.groupCategories(input, n, flags, outStart, outCount, outFailures, outStatus));
    const i32 = this.#i32;
    return {
      start: i32.slice(outStart >>> 2, (outStart >>> 2) + runs),
      count: i32.slice(outCount >>> 2, (outCount >>> 2) + runs),
      failures: i32.slice(outFailures >>> 2, (outFailures >>> 2) + runs),
      status: i32[outStatus >>> 2],
    };
  }
}

let threadCore: CoreInstance | undefined;

/** This thread's CoreInstance, instantiated on first use from the cached module. */
export function getCore(): CoreInstance {
  threadCore ??= new CoreInstance();
  return threadCore;
}
