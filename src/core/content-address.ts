/**
 * The names stored content goes under (offload stores, `ctxfold show`, recall): a ref is a promise
 * that its bytes are the ones removed, so the name must be a hash nobody can make two different
 * contents share. SHA-256 (node:crypto, hardware-accelerated where the CPU has SHA extensions)
 * cut to its first 128 bits: 2^64 work for the cheapest collision, against minutes on one core
 * for the 64-bit XXH64 names stores wrote before. XXH64 (hash.ts) stays the hash of memo keys,
 * cache keys and ids, where a collision costs a cache miss, not another run's content.
 *
 * Stores written with XXH64 names (16 hex digits) are still read, verified by XXH64 as they were
 * written (legacyContentAddress); nothing new is named that way.
 */
import * as crypto from "node:crypto";
import { hashBytes, hashToHex } from "./hash.js";

/** Hex digits of a content address: 128 bits. */
export const kContentAddressDigits = 32;
/** Hex digits of the XXH64 names stores wrote before (still read, never written). */
export const kLegacyAddressDigits = 16;

// crypto.hash (Node 20.12+) hashes in one call, without a Hash object: ~2x faster on short inputs.
const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: "hex") => string }).hash;

/** SHA-256 of `bytes`, 64 lower-case hex digits. */
export function sha256Hex(bytes: Uint8Array): string {
  return oneShot ? oneShot("sha256", bytes, "hex") : crypto.createHash("sha256").update(bytes).digest("hex");
}

/** The content address of `bytes`: SHA-256 cut to 128 bits, as 32 lower-case hex digits. */
export function contentAddress(bytes: Uint8Array): string {
  return sha256Hex(bytes).slice(0, kContentAddressDigits);
}

/** The address stores wrote before: XXH64 (seed 0) as 16 lower-case hex digits. Only for reading those stores. */
export function legacyContentAddress(bytes: Uint8Array): string {
  return hashToHex(hashBytes(bytes));
}
