import { hash as cryptoHash } from "node:crypto";
import xxhash from "xxhash-wasm";
import { contentAddress, legacyContentAddress } from "../src/core/content-address.js";
import { getCore, type CoreInstance } from "../src/core/core-instance.js";
import { encodeText } from "../src/store/offload.js";
import { hashStringReference } from "../src/core/reference/xxh64.js";
import type { Case } from "./lib.js";
import { batchOf, kSizes, mixedText, totalBytes } from "./inputs.js";

/** Strings per batch in the small-string case. */
export const kBatch = 1000;

/** xxhash-wasm's 64-bit hash of a string. */
type H64 = Awaited<ReturnType<typeof xxhash>>["h64"];

/**
 * Hashing from JS strings: ctxfold (WASM and its TS twin) against xxhash-wasm and node:crypto;
 * and naming stored content as a store's put does (the text's bytes, then their address): by its
 * content address (SHA-256 cut to 128 bits, what stores name by now) against the XXH64 name
 * stores gave before. Small sizes are a batch of kBatch strings, larger ones one text.
 */
export async function hashCases(): Promise<Case[]> {
  const { h64 } = await xxhash();
  const core = getCore();
  const cases: Case[] = [];
  for (const size of kSizes) {
    const group = `hash ${size.label}`;
    if (size.bytes <= 200) {
      const texts = batchOf(kBatch, size.bytes, 17);
      cases.push(...batchHashing(group, texts, h64, core), ...batchNaming(group, texts));
    } else {
      const text = mixedText(size.bytes, 29);
      cases.push(...textHashing(group, text, h64, core), ...textNaming(group, text));
    }
  }
  return cases;
}

/** Hashing a batch of small strings: in one WASM call, one call each, the TS twin, xxhash-wasm, node:crypto. */
function batchHashing(group: string, texts: string[], h64: H64, core: CoreInstance): Case[] {
  const bytes = totalBytes(texts);
  return [
    { group, name: "ctxfold wasm (batched)", bytes, items: kBatch, fn: () => core.hashStrings(texts) },
    {
      group,
      name: "ctxfold wasm (one call each)",
      bytes,
      items: kBatch,
      fn: () => {
        for (const t of texts) core.hashStrings([t]);
      },
    },
    {
      group,
      name: "ctxfold ts twin",
      bytes,
      items: kBatch,
      fn: () => {
        for (const t of texts) hashStringReference(t);
      },
    },
    {
      group,
      name: "xxhash-wasm h64",
      bytes,
      items: kBatch,
      fn: () => {
        for (const t of texts) h64(t);
      },
    },
    {
      group,
      name: "node:crypto sha1",
      bytes,
      items: kBatch,
      fn: () => {
        for (const t of texts) cryptoHash("sha1", t);
      },
    },
  ];
}

/** Naming each small string as a store would: its content address, and the XXH64 name of before. */
function batchNaming(group: string, texts: string[]): Case[] {
  const bytes = totalBytes(texts);
  return [
    {
      group,
      name: "ctxfold content address (store name)",
      bytes,
      items: kBatch,
      fn: () => {
        for (const t of texts) contentAddress(encodeText(t));
      },
    },
    {
      group,
      name: "xxh64 store name (before)",
      bytes,
      items: kBatch,
      fn: () => {
        for (const t of texts) legacyContentAddress(encodeText(t));
      },
    },
  ];
}

/** Hashing one large text: WASM (also on its pure-ASCII twin), the TS twin, xxhash-wasm, node:crypto. */
function textHashing(group: string, text: string, h64: H64, core: CoreInstance): Case[] {
  const bytes = Buffer.byteLength(text);
  // The same size as pure ASCII: the Latin-1 view, one byte per unit through xxh64.
  const ascii = text.replace(/[^\x00-\x7f]/g, "?");
  return [
    { group, name: "ctxfold wasm", bytes, fn: () => core.hashStrings([text]) },
    { group, name: "ctxfold wasm, ASCII text", bytes: ascii.length, fn: () => core.hashStrings([ascii]) },
    { group, name: "ctxfold ts twin", bytes, fn: () => hashStringReference(text) },
    { group, name: "xxhash-wasm h64", bytes, fn: () => h64(text) },
    { group, name: "node:crypto sha1", bytes, fn: () => cryptoHash("sha1", text) },
  ];
}

/** Naming one large text as a store would: its content address, and the XXH64 name of before. */
function textNaming(group: string, text: string): Case[] {
  const bytes = Buffer.byteLength(text);
  return [
    { group, name: "ctxfold content address (store name)", bytes, fn: () => contentAddress(encodeText(text)) },
    { group, name: "xxh64 store name (before)", bytes, fn: () => legacyContentAddress(encodeText(text)) },
  ];
}
