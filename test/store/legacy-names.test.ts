/**
 * Stores written before content was named by SHA-256 carry 16-hex-digit XXH64 names. They are
 * written here as they were (the `hash` option set to XXH64 makes exactly those names; the pack
 * index lines and the file layout did not change), and read by stores, `ctxfold show`, recall and
 * search with the default naming: every read verified by XXH64, as before.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { hashBytes } from "../../src/core/hash.js";
import { recall, searchStore } from "../../src/recall/index.js";
import { createFsStore, createPackStore, parseRef, refPattern, type OffloadStore } from "../../src/store/index.js";
import { tempDirs, thrown } from "../helpers.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const tmp = tempDirs("ctxfold-legacy-");

/** What stores wrote before: XXH64 (seed 0) names. */
const xxh64 = (bytes: Uint8Array) => hashBytes(bytes);
const kTexts = ["abc", "a tool output of before\n", JSON.stringify({ role: "tool", content: "ls -la\ntotal 0\n" })];

/** A directory in the layout of before, of either store; the refs it holds. */
function writeOld(layout: "fs" | "pack"): { dir: string; refs: string[] } {
  const dir = tmp.fresh();
  const store: OffloadStore = layout === "fs" ? createFsStore({ dir, hash: xxh64 }) : createPackStore({ dir, hash: xxh64 });
  const refs = kTexts.map((t, i) => store.put(t, { kind: i === 2 ? "message" : "read", ext: i === 2 ? "json" : "txt" }));
  store.flush();
  return { dir, refs };
}

describe.each(["fs", "pack"] as const)("a store directory written with the XXH64 names of before (%s layout)", (layout) => {
  it("has 16-hex-digit names, and default stores of both kinds read every ref back verified", () => {
    const { dir, refs } = writeOld(layout);
    expect(refs[0]).toBe("workspace/outputs/read_44bc2cf5ad770999.txt"); // xxh64("abc"), the xxHash reference vector
    for (const ref of refs) expect(ref).toMatch(/_[0-9a-f]{16}\.[a-z]+$/);
    const readers: OffloadStore[] = layout === "fs" ? [createFsStore({ dir }), createPackStore({ dir })] : [createPackStore({ dir })];
    for (const reader of readers) {
      refs.forEach((ref, i) => {
        expect(reader.has(ref)).toBe(true);
        expect(reader.getText(ref)).toBe(kTexts[i]);
      });
    }
  });

  it("a changed byte under an old name is E_CORRUPT: old names are verified by XXH64", () => {
    const { dir, refs } = writeOld(layout);
    const file = layout === "fs" ? path.join(dir, path.posix.basename(refs[1])) : path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith(".bin"))!);
    const bytes = fs.readFileSync(file);
    const at = layout === "fs" ? 0 : bytes.indexOf("a tool output");
    bytes[at] ^= 0x20;
    fs.writeFileSync(file, bytes);
    const store = layout === "fs" ? createFsStore({ dir }) : createPackStore({ dir });
    expect(thrown(() => store.getText(refs[1]), "E_CORRUPT").message).toMatch(/not to [0-9a-f]{16} as the name says/);
    expect(store.getText(refs[0])).toBe("abc");
  });

  it("new puts beside them get 32-digit names; refs, recall, search and `ctxfold show` take both", () => {
    const { dir, refs } = writeOld(layout);
    const store = createPackStore({ dir });
    const fresh = store.put("a tool output of now\n", { kind: "read" });
    store.flush();
    expect(fresh).toMatch(/_[0-9a-f]{32}\.txt$/);
    expect(store.refs().sort()).toEqual([...refs, fresh].sort());
    for (const ref of [...refs, fresh]) {
      expect(parseRef(ref)?.name).toBe(path.posix.basename(ref));
      expect(`see ${ref} and more`.match(refPattern("workspace/outputs"))?.[0]).toBe(ref);
    }
    expect(recall(createPackStore({ dir }), refs[1])).toMatchObject({ text: kTexts[1] });
    expect(recall(createPackStore({ dir }), path.posix.basename(refs[0]))).toMatchObject({ text: "abc" });
    expect(
      searchStore(createPackStore({ dir }), "before now")
        .map((e) => e.ref)
        .sort(),
    ).toEqual([refs[1], fresh].sort());
    for (const ref of [refs[1], fresh]) {
      const r = spawnSync(process.execPath, [kCli, "show", ref, "--offload-dir", dir]);
      expect(r.stderr.toString()).toBe("");
      expect(r.status).toBe(0);
      expect(r.stdout.toString()).toBe(createPackStore({ dir }).getText(ref));
    }
  });
});
