/**
 * A shard's result as it lies in the work dir, sealed by the worker and opened by the producer:
 *
 *   ctxfold-result 1 SHARD SHA256 MAC\n BODY
 *
 * BODY is packResult's bytes, SHA256 their hash, and MAC an HMAC-SHA256 of the shard id and that
 * hash under the batch's result key: a random key the producer keeps in Redis for its work dir and
 * hands to workers in each job. The producer uses a result only when all three hold, so a file in
 * the work dir that is damaged, misfiled under another shard's name, or written by anyone without
 * the key (a writer of the shared dir who cannot read Redis) is refused, naming the file
 * (E_CORRUPT), and never becomes output. Whoever can read Redis holds the key, as the workers do:
 * against them the seal proves nothing (docs/batch.md, "Trust").
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../core/content-address.js";
import { CtxfoldError } from "../errors.js";
import { kShardIdPattern, type ShardMeta } from "./shard.js";

const kMagic = "ctxfold-result 1";
/** The header's length at most: the magic, a 32-digit shard id and two 64-digit hashes. */
const kMaxHeader = 256;
const kHexPattern = /^[0-9a-f]{64}$/;

/** A new batch's result key: 32 random bytes, hex. */
export const newResultKey = (): string => randomBytes(32).toString("hex");

/** Whether `key` has a result key's shape (64 hex digits). */
export const isResultKey = (key: unknown): key is string => typeof key === "string" && kHexPattern.test(key);

const macOf = (key: string, shard: string, bodyHash: string): Buffer =>
  createHmac("sha256", Buffer.from(key, "hex")).update(`${kMagic}\n${shard}\n${bodyHash}`).digest();

/** The sealed bytes of `body` (packResult's) as the result of `shard`. */
export function sealResult(shard: string, key: string, body: Uint8Array): Uint8Array {
  const hash = sha256Hex(body);
  return Buffer.concat([Buffer.from(`${kMagic} ${shard} ${hash} ${macOf(key, shard, hash).toString("hex")}\n`), body]);
}

/**
 * The output and meta of `bytes`, read from `file` as the result of `shard` under `key`; E_CORRUPT
 * naming the file and what does not hold otherwise.
 */
export function openResult(file: string, shard: string, key: string, bytes: Uint8Array): { out: Uint8Array; meta: ShardMeta } {
  const refuse = (why: string) => new CtxfoldError("E_CORRUPT", `${file}: ${why}; refused (remove it and rerun with --resume)`);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const eol = buf.subarray(0, kMaxHeader).indexOf(0x0a);
  const fields = eol < 0 ? [] : buf.subarray(0, eol).toString("latin1").split(" ");
  if (
    fields.length !== 5 ||
    `${fields[0]} ${fields[1]}` !== kMagic ||
    !kShardIdPattern.test(fields[2]) ||
    !kHexPattern.test(fields[3]) ||
    !kHexPattern.test(fields[4])
  ) {
    throw refuse(`not a shard result (no "${kMagic}" header line)`);
  }
  const [, , named, hash, mac] = fields;
  if (named !== shard) throw refuse(`the result of shard ${named}, not of ${shard}`);
  const body = buf.subarray(eol + 1);
  if (sha256Hex(body) !== hash) throw refuse("its bytes do not match their SHA-256 (damaged)");
  if (!timingSafeEqual(macOf(key, shard, hash), Buffer.from(mac, "hex")))
    throw refuse("not sealed with this batch's result key (not written by one of its workers)");
  return unpackBody(body, refuse);
}

/** packResult's bytes taken apart (out ‖ JSON meta ‖ uint32 length), every length checked. */
function unpackBody(body: Buffer, refuse: (why: string) => CtxfoldError): { out: Uint8Array; meta: ShardMeta } {
  const n = body.length >= 4 ? body.readUInt32LE(body.length - 4) : -1;
  if (n < 0 || n > body.length - 4) throw refuse("its body is cut short");
  const at = body.length - 4 - n;
  let meta: ShardMeta;
  try {
    meta = JSON.parse(body.subarray(at, at + n).toString("utf8")) as ShardMeta;
  } catch {
    throw refuse("its meta is not JSON");
  }
  if (typeof meta !== "object" || meta === null || !Array.isArray(meta.errors) || typeof meta.stats !== "object" || !Number.isInteger(meta.lines))
    throw refuse("its meta lacks errors, stats or lines");
  return { out: body.subarray(0, at), meta };
}
