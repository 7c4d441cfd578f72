import { describe, expect, it } from "vitest";
import xxhash from "xxhash-wasm";
import { getCore, CoreInstance } from "../../src/core/core-instance.js";
import { hashStringReference, stringHashView, xxh64Reference } from "../../src/core/reference/xxh64.js";
import { hashText, hashTexts, hashToHex } from "../../src/core/hash.js";
import { contentAddress, kContentAddressDigits, kLegacyAddressDigits, legacyContentAddress } from "../../src/core/content-address.js";
import { CtxfoldError } from "../../src/errors.js";
import { createRng, randomTricky } from "../helpers.js";

const { h64Raw } = await xxhash();
const ascii = (s: string) => new TextEncoder().encode(s);

describe("xxh64 known answers", () => {
  // Vectors of the xxHash reference implementation (XXH64 over the given bytes).
  const vectors: [string, bigint, bigint][] = [
    ["", 0n, 0xef46db3751d8e999n],
    ["a", 0n, 0xd24ec4f1a98c6e5bn],
    ["abc", 0n, 0x44bc2cf5ad770999n],
    ["message digest", 0n, 0x066ed728fceeb3ben],
    ["abcdefghijklmnopqrstuvwxyz", 0n, 0xcfe1f278fa89835cn],
    ["12345678901234567890123456789012345678901234567890123456789012345678901234567890", 0n, 0xe04a477f19ee145dn],
  ];
  it.each(vectors)("xxh64(%j, %d)", (input, seed, expected) => {
    expect(getCore().hashBytes(ascii(input), seed)).toBe(expected);
    expect(xxh64Reference(ascii(input), seed)).toBe(expected);
    expect(h64Raw(ascii(input), seed)).toBe(expected);
  });

  it("agrees with xxhash-wasm over the same UTF-16LE bytes, every length 0..300 and seeds", () => {
    const r = createRng(7);
    for (let len = 0; len <= 300; len++) {
      const bytes = new Uint8Array(len).map(() => r.int(256));
      for (const seed of [0n, 1n, 0xffffffffffffffffn, 0x9e3779b185ebca87n]) {
        expect(getCore().hashBytes(bytes, seed)).toBe(h64Raw(bytes, seed));
      }
    }
  });
});

describe("string hashing: the UTF-16LE byte view", () => {
  it("hashes a Latin-1 string as xxh64 of its bytes, any other as xxh64 of its UTF-16LE units, domain-separated", () => {
    for (const s of ["", "a", "héllo", "日本語", "😀 family 👨‍👩‍👧", "x".repeat(100_000)]) {
      const v = stringHashView(s);
      expect(hashText(s)).toBe(h64Raw(v.bytes, v.domain));
    }
  });

  it("keeps lone surrogates apart (UTF-8 would fold them all into U+FFFD)", () => {
    const hs = hashTexts(["\ud800", "\udc00", "\ufffd", "\ud800\udc00", "a\ud800", "a\udbff"]);
    expect(new Set(hs).size).toBe(6);
    expect(hashText("\ud800")).toBe(hashStringReference("\ud800"));
  });

  it("differential: WASM equals the TypeScript twin on 10,000 seeded inputs", () => {
    const r = createRng(20261123);
    const texts: string[] = [];
    for (let i = 0; i < 10_000; i++) texts.push(randomTricky(r, i % 100 === 0 ? 2000 : 120));
    texts.push("", "a".repeat(70_000), randomTricky(createRng(1), 140_000));
    const wasm = getCore().hashStrings(texts);
    const ts = hashTexts(texts, { backend: "ts" });
    for (let i = 0; i < texts.length; i++) {
      if (wasm[i] !== ts[i]) expect.fail(`texts[${i}] (length ${texts[i].length}): wasm ${wasm[i]} ts ${ts[i]}`);
    }
  });

  it("batches across calls without changing results", () => {
    const r = createRng(3);
    // 5 MB in total forces several arena batches; one 3 MB string gets a batch of its own.
    const texts = Array.from({ length: 2000 }, () => randomTricky(r, 1500));
    texts.splice(700, 0, "z".repeat(1_500_000));
    const batched = getCore().hashStrings(texts);
    for (const i of [0, 699, 700, 701, 1999, 2000]) expect(batched[i]).toBe(getCore().hashStrings([texts[i]])[0]);
  });

  it("formats hashes as 16 hex digits", () => {
    expect(hashToHex(0xef46db3751d8e999n)).toBe("ef46db3751d8e999");
    expect(hashToHex(1n)).toBe("0000000000000001");
  });
});

describe("bad input", () => {
  it("rejects non-string content with a code and the index", () => {
    let err: unknown;
    try {
      hashTexts(["ok", 42 as unknown as string]);
    } catch (e) {
      err = e;
    }
    expect(CtxfoldError.isInstance(err)).toBe(true);
    expect((err as CtxfoldError).code).toBe("E_NOT_STRING");
    expect((err as CtxfoldError).message).toBe("texts[1]: expected a string, got number");
  });

  it("rejects non-bytes in hashBytes", () => {
    expect(() => getCore().hashBytes("x" as unknown as Uint8Array)).toThrowError(/expected a Uint8Array/);
  });

  it("short last blocks flush with the end of linear memory take the scalar path and agree", () => {
    const core = new CoreInstance();
    const r = createRng(77);
    for (let k = 0; k < 200; k++) {
      const s = randomTricky(r, 80);
      const units = s.length;
      core.hashStrings(["warm"]);
      const e = core.exports;
      const memEnd = e.memory.buffer.byteLength;
      const data = (memEnd - units * 2) & ~7; // the string ends 0..6 bytes before the end of memory
      const offsets = memEnd - 4096; // scratch at the end of memory, clear of static data and weights
      const out = memEnd - 2048;
      new Uint32Array(e.memory.buffer, offsets, 2).set([0, units * 2]);
      Buffer.from(e.memory.buffer).write(s, data, "utf16le");
      core.run("probe", (x) => x.hashBatch(data, offsets, 1, 0n, out));
      expect(new BigUint64Array(e.memory.buffer, out, 1)[0]).toBe(hashStringReference(s));
    }
  });

  it("an empty batch gives an empty result", () => {
    expect(hashTexts([])).toEqual(new BigUint64Array(0));
  });

  it("hashes a 100 MB string and hands the memory back afterwards", () => {
    const core = new CoreInstance();
    const big = "ab".repeat(50_000_000);
    const h = core.hashStrings([big])[0];
    expect(h).toBe(h64Raw(Buffer.from(big, "latin1"), 0n));
    expect(core.exports.memory.buffer.byteLength).toBeLessThan(64 * 1024 * 1024);
  });

  it("a trap discards the instance, surfaces as E_WASM_TRAP, and the next call runs on a fresh one", () => {
    const core = new CoreInstance();
    expect(core.hashStrings(["x"])[0]).toBe(hashText("x"));
    expect(core.instantiations).toBe(1);
    let err: unknown;
    try {
      core.run("probe", (e) => Number(e.hashBytes(0xffff_fff0, 64, 0n))); // out of bounds: traps
    } catch (e) {
      err = e;
    }
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_WASM_TRAP");
    expect(core.hashStrings(["x"])[0]).toBe(hashText("x"));
    expect(core.instantiations).toBe(2);
  });
});

describe("content address", () => {
  it("is SHA-256 cut to 128 bits, 32 lower-case hex digits (FIPS 180-2 vectors); the address of before is XXH64's 16", () => {
    const vectors: [string, string][] = [
      ["", "e3b0c44298fc1c149afbf4c8996fb924"],
      ["abc", "ba7816bf8f01cfea414140de5dae2223"],
      ["abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039"],
    ];
    for (const [input, expected] of vectors) {
      expect(contentAddress(ascii(input))).toBe(expected);
      expect(contentAddress(ascii(input))).toHaveLength(kContentAddressDigits);
    }
    expect(legacyContentAddress(ascii("abc"))).toBe("44bc2cf5ad770999");
    expect(legacyContentAddress(ascii("abc"))).toHaveLength(kLegacyAddressDigits);
  });
});
