/**
 * The structural scan of a JSONL line in place: its tokens (a tape of kinds, byte ranges and
 * skips) and the token estimate of each string value, from the UTF-8 bytes, with no JSON.parse
 * and no JS string built. The batch engine reads a run's size from it before deciding to parse
 * the run at all (byte-fit.ts). The WASM kernel (assembly/json-scan.ts) or its TypeScript twin
 * (json-scan.reference.ts, `backend: "ts"`).
 *
 * Strict by construction: a text is scanned only if a strict UTF-8 decode and JSON.parse would
 * both accept it, and then a string value's estimates are the estimator's for the very text
 * JSON.parse would give (escapes, surrogate pairs and lone surrogate escapes decoded to the
 * same UTF-16 units), so a decision made from the tape is the one the parse path makes. Anything
 * else, and texts nested deeper than `maxDepth` or with more than `maxTokens` tokens, is not
 * scanned, with the reason.
 */
import { coreFor, type Backend } from "../core/backend.js";
import { align16 } from "../core/core-instance.js";
import { ENCODING_COUNT, WEIGHT_TABLE } from "../tokens/weights-table.js";
import { kScanReasons, scanJsonReference, type ScanResult } from "./json-scan.reference.js";

export { kEscaped, kToken, type JsonTape, type ScanReason, type ScanResult } from "./json-scan.reference.js";

export interface ScanOptions {
  /** @default "auto" (WASM, or the TypeScript twin where WebAssembly is unavailable) */
  backend?: Backend | "auto";
  /** @default 64 */
  maxDepth?: number;
  /** @default 1 << 18 */
  maxTokens?: number;
}

/**
 * Scans one JSON text (see the module comment). On the core, the tape and estimates are views
 * of its memory, valid until its next call: read them before anything else uses the core.
 */
export function scanJson(bytes: Uint8Array, options: ScanOptions = {}): ScanResult {
  const maxDepth = options.maxDepth ?? 64;
  const maxTokens = Math.min(options.maxTokens ?? 1 << 18, bytes.length + 1);
  const core = coreFor(options.backend);
  if (!core) return scanJsonReference(bytes, maxTokens, maxDepth);
  const weights = core.weightTablePtr(WEIGHT_TABLE);
  const tape = align16(bytes.length);
  const estimates = align16(tape + maxTokens * 16);
  const scratch = align16(estimates + maxTokens * ENCODING_COUNT * 8);
  const stack = align16(scratch + bytes.length * 2 + 128);
  const status = align16(stack + maxDepth * 4);
  const a = core.arena(status + 4);
  a.u8.set(bytes, a.base);
  const count = core.run("scanJson", (e) =>
    e.scanJson(a.base, bytes.length, weights, a.base + tape, maxTokens, a.base + estimates, a.base + scratch, a.base + stack, maxDepth, a.base + status),
  );
  // Views read before the arena is released: a release may drop the instance, never these bytes.
  const result: ScanResult =
    count === 0
      ? { reason: kScanReasons[a.u32[(a.base + status) >>> 2] as keyof typeof kScanReasons] }
      : {
          tape: {
            count,
            words: new Uint32Array(a.u8.buffer, a.base + tape, count * 4),
            estimates: new Float64Array(a.u8.buffer, a.base + estimates, count * ENCODING_COUNT),
          },
        };
  core.releaseArena();
  return result;
}
