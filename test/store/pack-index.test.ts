import { describe, expect, it } from "vitest";
import { PackIndex, type PackEntry } from "../../src/store/pack-index.js";
import { createRng } from "../helpers.js";

const hexOf = (r: ReturnType<typeof createRng>, n: number) => Array.from({ length: n }, () => "0123456789abcdef"[r.int(16)]).join("");
/** A name of now (32 digits) or, one time in four, of before (16). */
const hexEither = (r: ReturnType<typeof createRng>) => hexOf(r, r.int(4) === 0 ? 16 : 32);

describe("PackIndex", () => {
  it("finds what it holds by name, and nothing else", () => {
    const index = new PackIndex();
    const e: PackEntry = { pack: "pack-1-0-aa.bin", offset: 5_000_000_000, length: 12 };
    expect(index.set("read_0123456789abcdef.py", e)).toBe(true);
    expect(index.get("read_0123456789abcdef.py")).toEqual(e);
    expect(index.has("read_0123456789abcdef.py")).toBe(true);
    // The same hash under another kind, extension or collision number is another entry.
    for (const other of ["shell_0123456789abcdef.py", "read_0123456789abcdef.txt", "read_0123456789abcdef-1.py", "read_0123456789abcdee.py"]) {
      expect(index.has(other)).toBe(false);
      expect(index.get(other)).toBeUndefined();
    }
    expect(index.size).toBe(1);
  });

  it("holds 32-digit names whole: names differing in any digit, or a 16-digit name equal to their low digits, are other entries", () => {
    const index = new PackIndex();
    const hash = "0123456789abcdeffedcba9876543210";
    const e: PackEntry = { pack: "p.bin", offset: 0, length: 1 };
    expect(index.set(`read_${hash}.txt`, e)).toBe(true);
    expect(index.get(`read_${hash}.txt`)).toEqual(e);
    for (let at = 0; at < 32; at++) {
      const other = hash.slice(0, at) + (hash[at] === "0" ? "1" : "0") + hash.slice(at + 1);
      expect(index.has(`read_${other}.txt`), other).toBe(false);
    }
    expect(index.has(`read_${hash.slice(16)}.txt`)).toBe(false);
    expect(index.has(`read_${"0".repeat(16)}${hash.slice(16)}.txt`)).toBe(false);
    index.set(`read_${hash.slice(16)}.txt`, { ...e, offset: 1 });
    expect(index.get(`read_${hash.slice(16)}.txt`)).toEqual({ ...e, offset: 1 });
    expect([...index.names()]).toEqual([`read_${hash}.txt`, `read_${hash.slice(16)}.txt`]);
  });

  it("keeps the first entry of a name, as a reader of the index lines does", () => {
    const index = new PackIndex();
    index.set("output_00000000000000ff.txt", { pack: "a.bin", offset: 0, length: 3 });
    index.set("output_00000000000000ff.txt", { pack: "b.bin", offset: 9, length: 4 });
    expect(index.get("output_00000000000000ff.txt")).toEqual({ pack: "a.bin", offset: 0, length: 3 });
    expect(index.size).toBe(1);
  });

  it("refuses names a store never makes", () => {
    const index = new PackIndex();
    for (const bad of [
      "",
      "output_123.txt",
      "Output_0123456789abcdef.txt",
      "x/output_0123456789abcdef.txt",
      "output_0123456789abcdef",
      "../output_0123456789abcdef.txt",
    ]) {
      expect(index.set(bad, { pack: "a.bin", offset: 0, length: 1 })).toBe(false);
      expect(index.has(bad)).toBe(false);
    }
    expect(index.size).toBe(0);
  });

  it("answers as a Map would over many names, shapes, packs and collision chains, and lists its names as a Map does", () => {
    const r = createRng(7);
    const index = new PackIndex();
    const map = new Map<string, PackEntry>();
    const kinds = ["read", "shell", "output", "search", "list", "page", "my_kind-1"];
    const exts = ["txt", "py", "json", "log"];
    const hashes: string[] = [];
    for (let i = 0; i < 30_000; i++) {
      // Reuse hashes often, so shapes sharing a hash (and its table cluster) are exercised.
      const hash = hashes.length > 0 && r.int(3) === 0 ? hashes[r.int(hashes.length)] : hexEither(r);
      hashes.push(hash);
      const n = r.int(5);
      const name = `${kinds[r.int(kinds.length)]}_${hash}${n > 2 ? `-${n - 2}` : ""}.${exts[r.int(exts.length)]}`;
      const entry = { pack: `pack-${r.int(4)}.bin`, offset: r.int(1 << 30) * 8, length: r.int(1 << 20) };
      index.set(name, entry);
      if (!map.has(name)) map.set(name, entry);
    }
    expect(index.size).toBe(map.size);
    for (const [name, entry] of map) expect(index.get(name)).toEqual(entry);
    // names() gives every name back whole, in the order first set (kinds with _ and - included).
    expect([...index.names()]).toEqual([...map.keys()]);
    for (let i = 0; i < 2_000; i++) {
      const name = `read_${hexEither(r)}.txt`;
      expect(index.has(name)).toBe(map.has(name));
    }
  });
});
