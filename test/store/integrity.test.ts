/**
 * What the offload stores do when the directory they read is not what they wrote: bytes changed
 * on disk (a flipped byte in a pack, a shifted index offset, an edited per-file output) are
 * caught by the hash the ref names, on every read, in the stores and in `ctxfold show`; links and
 * other non-regular files in the directory are refused, never followed; what the stores create is
 * private to the user; and a flush cut short by a full disk leaves no index entry naming wrong bytes.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { contentAddress } from "../../src/core/content-address.js";
import { hashBytes } from "../../src/core/hash.js";
import { ContentAddressedStore, createFsStore, createMemoryStore, createPackStore, type FsOps } from "../../src/store/index.js";
import { createRng, tempDirs, thrown } from "../helpers.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

const tmp = tempDirs("ctxfold-integrity-");
const freshDir = tmp.fresh;

/** The one pack (and its index) in `dir`. */
function packOf(dir: string): { pack: string; idx: string } {
  const packs = fs.readdirSync(dir).filter((f) => f.endsWith(".bin"));
  expect(packs).toHaveLength(1);
  return { pack: path.join(dir, packs[0]), idx: path.join(dir, packs[0].replace(/\.bin$/, ".idx")) };
}

/** The index lines of `idx`, by entry name: [offset, length]. */
function indexOf(idx: string): Map<string, [number, number]> {
  const lines = fs
    .readFileSync(idx, "utf8")
    .split("\n")
    .filter((l) => l.endsWith("]"));
  return new Map(lines.map((l) => JSON.parse(l) as [string, number, number]).map(([n, o, len]) => [n, [o, len]]));
}

const nameOf = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);

function flipByte(file: string, at: number): void {
  const bytes = fs.readFileSync(file);
  bytes[at] ^= 0x01;
  fs.writeFileSync(file, bytes);
}

/** Three outputs in one flushed pack; the middle one is the one the tests damage. */
function packed(dir: string) {
  const store = createPackStore({ dir });
  const refs = ["first output\n", "the second output, damaged in the tests\n", "third output\n"].map((s) => store.put(s));
  store.flush();
  return { store, refs };
}

function osError(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated, ${syscall}`), { code, syscall });
}

function randomBytes(seed: number, n: number): Uint8Array {
  const r = createRng(seed);
  return Uint8Array.from({ length: n }, () => r.int(256));
}

const posixOnly = process.platform === "win32" ? it.skip : it;

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [kCli, ...args], { cwd: tmp.root() });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe("verified reads", () => {
  it("a flipped byte in a pack: E_CORRUPT naming the pack, the offset and the length, never the bytes", () => {
    const dir = freshDir();
    const { store, refs } = packed(dir);
    const { pack, idx } = packOf(dir);
    const [offset, length] = indexOf(idx).get(nameOf(refs[1]))!;
    flipByte(pack, offset + 4);
    for (const reader of [store, createPackStore({ dir })]) {
      const err = thrown(() => reader.get(refs[1]), "E_CORRUPT");
      expect(err.message).toContain(pack);
      expect(err.message).toContain(`offset ${offset}`);
      expect(err.message).toContain(`length ${length}`);
      expect(err.message).not.toContain("second");
      thrown(() => reader.getText(refs[1]), "E_CORRUPT");
      // The other entries of the pack still read.
      expect(reader.getText(refs[0])).toBe("first output\n");
      expect(reader.getText(refs[2])).toBe("third output\n");
    }
  });

  it("an index offset shifted by one: E_CORRUPT naming the pack and the shifted offset", () => {
    const dir = freshDir();
    const { refs } = packed(dir);
    const { pack, idx } = packOf(dir);
    const name = nameOf(refs[0]);
    const text = fs.readFileSync(idx, "utf8");
    const [offset, length] = indexOf(idx).get(name)!;
    fs.writeFileSync(idx, text.replace(JSON.stringify([name, offset, length]), JSON.stringify([name, offset + 1, length])));
    const err = thrown(() => createPackStore({ dir }).get(refs[0]), "E_CORRUPT");
    expect(err.message).toContain(pack);
    expect(err.message).toContain(`offset ${offset + 1}`);
  });

  it("an index entry past the end of its pack is E_CORRUPT too (the pack was cut short)", () => {
    const dir = freshDir();
    const { refs } = packed(dir);
    const { pack } = packOf(dir);
    fs.truncateSync(pack, fs.statSync(pack).size - 3);
    const err = thrown(() => createPackStore({ dir }).get(refs[2]), "E_CORRUPT");
    expect(err.message).toContain(pack);
  });

  it("an index line that is JSON but no entry (a name and two counts): E_CORRUPT naming the index and the line; a line cut short is skipped", () => {
    const dir = freshDir();
    const { refs } = packed(dir);
    const { idx } = packOf(dir);
    const text = fs.readFileSync(idx, "utf8");
    for (const [bad, line] of [
      ["42", 2],
      ['["x", -1, 3]', 2],
      ['{"name": "x"}', 2],
      ['["x", 1.5, 3]', 2],
    ] as const) {
      const lines = text.split("\n");
      lines.splice(1, 0, bad);
      fs.writeFileSync(idx, lines.join("\n"));
      const err = thrown(() => createPackStore({ dir }).get(refs[0]), "E_CORRUPT");
      expect(err.message).toContain(`${idx}:${line}`);
      thrown(() => createPackStore({ dir }).refs(), "E_CORRUPT");
    }
    fs.writeFileSync(idx, `${text}["cut short", 12`);
    expect(createPackStore({ dir }).getText(refs[1])).toBe("the second output, damaged in the tests\n");
  });

  it("an edited per-file output: E_CORRUPT naming the file, in the fs store and in a pack store reading that layout", () => {
    const dir = freshDir();
    const store = createFsStore({ dir });
    const ref = store.put("a per-file output");
    fs.writeFileSync(store.pathOf(ref), "a per-file outpuT");
    for (const reader of [store, createFsStore({ dir }), createPackStore({ dir })]) {
      expect(thrown(() => reader.get(ref), "E_CORRUPT").message).toContain(store.pathOf(ref));
      thrown(() => reader.getText(ref), "E_CORRUPT");
    }
  });

  it("a collision variant (-1) carries the hash of its chain's name and is checked against it", () => {
    const dir = freshDir();
    // Five-byte inputs all collide; everything else hashes as usual.
    const hash = (bytes: Uint8Array) => (bytes.length === 5 ? 42n : hashBytes(bytes));
    const store = createFsStore({ dir, hash });
    const alpha = store.put("alpha");
    const gamma = store.put("gamma");
    expect(gamma).toBe("workspace/outputs/output_000000000000002a-1.txt");
    fs.writeFileSync(store.pathOf(gamma), "gamma!"); // six bytes: no longer hashes to 2a
    expect(thrown(() => createFsStore({ dir, hash }).get(gamma), "E_CORRUPT").message).toContain(store.pathOf(gamma));
    expect(createFsStore({ dir, hash }).getText(alpha)).toBe("alpha");
    fs.writeFileSync(store.pathOf(gamma), "gammA"); // five bytes: a collision is no corruption
    expect(createFsStore({ dir, hash }).getText(gamma)).toBe("gammA");
  });

  it("put over a corrupt entry throws E_CORRUPT naming the file; it never moves on to -1 as if the bytes collided", () => {
    const fsDir = freshDir();
    const files = createFsStore({ dir: fsDir });
    const ref = files.put("stored once");
    fs.writeFileSync(files.pathOf(ref), "stored twice");
    for (const writer of [files, createFsStore({ dir: fsDir })]) {
      expect(thrown(() => writer.put("stored once"), "E_CORRUPT").message).toContain(files.pathOf(ref));
    }
    expect(fs.readdirSync(fsDir)).toEqual([nameOf(ref)]);

    const packDir = freshDir();
    const { refs } = packed(packDir);
    const { pack, idx } = packOf(packDir);
    flipByte(pack, indexOf(idx).get(nameOf(refs[1]))![0]);
    const writer = createPackStore({ dir: packDir });
    expect(thrown(() => writer.put("the second output, damaged in the tests\n"), "E_CORRUPT").message).toContain(pack);
    writer.flush();
    expect(fs.readFileSync(idx, "utf8").split("\n").filter(Boolean)).toHaveLength(3);
    expect(fs.readdirSync(packDir).filter((f) => f.endsWith(".idx"))).toHaveLength(1);
  });

  it("the pack store's digest shortcut: only verified bytes get a digest, and reads never answer from it", () => {
    const dir = freshDir();
    const { refs } = packed(dir);
    const { pack, idx } = packOf(dir);
    const store = createPackStore({ dir });
    expect(store.put("first output\n")).toBe(refs[0]); // read, verified, digest kept
    flipByte(pack, indexOf(idx).get(nameOf(refs[0]))![0]);
    thrown(() => store.get(refs[0]), "E_CORRUPT");
    // Damaged before any put compared it: no digest, so the put reads, and refuses.
    flipByte(pack, indexOf(idx).get(nameOf(refs[2]))![0]);
    thrown(() => store.put("third output\n"), "E_CORRUPT");
  });

  it("checks in the shared base class, so every store gets it", () => {
    class Lying extends ContentAddressedStore {
      protected load(): Uint8Array {
        return new TextEncoder().encode("not what was stored");
      }
      protected save(): boolean {
        return true;
      }
      protected exists(): boolean {
        return true;
      }
      protected names(): string[] {
        return [];
      }
    }
    // A name of now (SHA-256) and one of before (XXH64): each is checked by the hash that made it.
    for (const ref of ["workspace/outputs/output_ba7816bf8f01cfea414140de5dae2223.txt", "workspace/outputs/output_44bc2cf5ad770999.txt"]) {
      expect(thrown(() => new Lying().get(ref), "E_CORRUPT").message).toContain(ref);
      thrown(() => new Lying().getText(ref), "E_CORRUPT");
    }
    thrown(() => new Lying().put("abc"), "E_CORRUPT");
  });

  it("ctxfold show on a corrupt entry: exit 1, E_CORRUPT and the file named, nothing on stdout", () => {
    const packDir = freshDir();
    const { refs } = packed(packDir);
    const { pack, idx } = packOf(packDir);
    flipByte(pack, indexOf(idx).get(nameOf(refs[1]))![0]);
    const fromPack = cli(["show", refs[1], "--offload-dir", packDir]);
    expect(fromPack.code).toBe(1);
    expect(fromPack.stderr).toContain("E_CORRUPT");
    expect(fromPack.stderr).toContain(pack);
    expect(fromPack.stdout).toBe("");
    expect(cli(["show", refs[0], "--offload-dir", packDir])).toMatchObject({ code: 0, stdout: "first output\n" });

    const fsDir = freshDir();
    const store = createFsStore({ dir: fsDir });
    const ref = store.put("plain file output");
    fs.writeFileSync(store.pathOf(ref), "plain file outpuT");
    const fromFile = cli(["show", ref, "--offload-dir", fsDir]);
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toContain("E_CORRUPT");
    expect(fromFile.stderr).toContain(store.pathOf(ref));
    expect(fromFile.stdout).toBe("");
  });
});

describe("only regular files are read", () => {
  /** A file outside the store whose bytes hash to the name of the link made to it: only the refusal stops the read. */
  function outsideFile(content: string): { file: string; name: string } {
    const file = path.join(freshDir(), "outside-secret.txt");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    return { file, name: nameOf(createMemoryStore().put(content)) };
  }

  posixOnly("a symlink named like a ref: E_CORRUPT naming the link, in the fs store, the pack store and put", () => {
    const { file, name } = outsideFile("a secret outside the store\n");
    const dir = freshDir();
    fs.mkdirSync(dir);
    fs.symlinkSync(file, path.join(dir, name));
    const ref = `workspace/outputs/${name}`;
    for (const store of [createFsStore({ dir }), createPackStore({ dir })]) {
      const err = thrown(() => store.get(ref), "E_CORRUPT");
      expect(err.message).toContain(path.join(dir, name));
      expect(err.message).toMatch(/symbolic link/);
      expect(err.message).not.toContain("secret");
      thrown(() => store.getText(ref), "E_CORRUPT");
    }
    thrown(() => createFsStore({ dir }).put("a secret outside the store\n"), "E_CORRUPT");
    // The link was neither followed nor replaced.
    expect(fs.lstatSync(path.join(dir, name)).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe("a secret outside the store\n");
  });

  posixOnly("a symlinked pack or index is refused, naming it", () => {
    const real = freshDir();
    const { refs } = packed(real);
    const { pack, idx } = packOf(real);
    for (const linked of ["bin", "idx"] as const) {
      const dir = freshDir();
      fs.mkdirSync(dir);
      for (const [from, ext] of [
        [pack, "bin"],
        [idx, "idx"],
      ] as const) {
        const to = path.join(dir, path.basename(from));
        if (ext === linked) fs.symlinkSync(from, to);
        else fs.copyFileSync(from, to);
      }
      const err = thrown(() => createPackStore({ dir }).get(refs[0]), "E_CORRUPT");
      expect(err.message).toContain(path.join(dir, path.basename(linked === "bin" ? pack : idx)));
    }
  });

  posixOnly("a FIFO or a directory named like a ref is refused at once (no read that blocks)", () => {
    const dir = freshDir();
    fs.mkdirSync(dir);
    const fifo = "output_0123456789abcdef.txt";
    expect(spawnSync("mkfifo", [path.join(dir, fifo)]).status).toBe(0);
    fs.mkdirSync(path.join(dir, "output_fedcba9876543210.txt"));
    for (const name of [fifo, "output_fedcba9876543210.txt"]) {
      for (const store of [createFsStore({ dir }), createPackStore({ dir })]) {
        const err = thrown(() => store.get(`workspace/outputs/${name}`), "E_CORRUPT");
        expect(err.message).toContain(path.join(dir, name));
        expect(err.message).toMatch(/not a regular file/);
      }
    }
  });

  posixOnly("ctxfold show on a symlink: exit 1 naming it, the target never printed", () => {
    const { file, name } = outsideFile("printed only if the link is followed\n");
    const dir = freshDir();
    fs.mkdirSync(dir);
    fs.symlinkSync(file, path.join(dir, name));
    const r = cli(["show", `workspace/outputs/${name}`, "--offload-dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(path.join(dir, name));
    expect(r.stderr).toContain("E_CORRUPT");
    expect(r.stdout).toBe("");
  });

  posixOnly("the offload directory itself may be a symlink the user chose", () => {
    const real = freshDir();
    const link = `${freshDir()}-link`;
    fs.mkdirSync(real);
    fs.symlinkSync(real, link);
    const files = createFsStore({ dir: link });
    const ref = files.put("through the user's link");
    const packs = createPackStore({ dir: link });
    const packedRef = packs.put("packed through the user's link");
    packs.flush();
    for (const store of [createFsStore({ dir: link }), createPackStore({ dir: link })]) expect(store.getText(ref)).toBe("through the user's link");
    expect(createPackStore({ dir: link }).getText(packedRef)).toBe("packed through the user's link");
    expect(cli(["show", packedRef, "--offload-dir", link])).toMatchObject({ code: 0, stdout: "packed through the user's link" });
  });

  posixOnly("store files are created 0600 and store directories 0700", () => {
    const mode = (p: string) => fs.statSync(p).mode & 0o777;
    const top = freshDir();
    const dir = path.join(top, "deep", "er");
    const ref = createFsStore({ dir }).put("private output");
    expect(mode(path.join(dir, nameOf(ref)))).toBe(0o600);
    for (const d of [top, path.join(top, "deep"), dir]) expect(mode(d)).toBe(0o700);
    const packDir = path.join(freshDir(), "packs");
    packed(packDir);
    const { pack, idx } = packOf(packDir);
    expect([mode(pack), mode(idx), mode(packDir), mode(path.dirname(packDir))]).toEqual([0o600, 0o600, 0o700, 0o700]);
  });
});

describe("a flush retried after a partial write", () => {
  /** Every ref resolves to its exact bytes in `store` and in a fresh store on `dir`. */
  function expectAll(dir: string, store: ReturnType<typeof createPackStore>, expected: Map<string, Uint8Array>): void {
    for (const reader of [store, createPackStore({ dir })]) {
      for (const [ref, bytes] of expected) expect(Buffer.compare(reader.get(ref), bytes), ref).toBe(0);
    }
  }

  /** Every complete line of every index in `dir` names bytes that hash to the name (a line cut short is skipped by readers). */
  function expectEveryLineHolds(dir: string): void {
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".idx"))) {
      const pack = fs.readFileSync(path.join(dir, f.replace(/\.idx$/, ".bin")));
      for (const [name, [offset, length]] of indexOf(path.join(dir, f))) {
        expect(`_${contentAddress(pack.subarray(offset, offset + length))}.`, `${f}: ${name}`).toBe(name.slice(name.indexOf("_"), name.indexOf(".") + 1));
      }
    }
  }

  /**
   * A pack store whose `failAt`-th write of the next flush (1: the pack, 2: the index) writes half
   * its bytes and throws ENOSPC; `failTruncate` makes the rollback fail too.
   */
  function fullDisk(dir: string, options: { failTruncate?: boolean } = {}) {
    let writes = 0;
    let failAt = 0;
    const writeSync: FsOps["writeSync"] = (fd, buffer, offset, length, position) => {
      if (++writes === failAt) {
        fs.writeSync(fd, buffer, offset, length >> 1, position);
        throw osError("ENOSPC", "write");
      }
      return fs.writeSync(fd, buffer, offset, length, position);
    };
    const ftruncateSync: FsOps["ftruncateSync"] = (fd, length) => {
      if (options.failTruncate) throw osError("EIO", "ftruncate");
      fs.ftruncateSync(fd, length);
    };
    const store = createPackStore({ dir, fs: { writeSync, ftruncateSync } });
    return { store, failNextFlushAt: (n: number) => ((writes = 0), (failAt = n)) };
  }

  for (const [which, failAt] of [
    ["pack", 1],
    ["index", 2],
  ] as const) {
    it(`ENOSPC halfway through the ${which}: E_STORE_WRITE naming the file and ENOSPC, nothing pending lost, and after the retry every ref resolves`, () => {
      const dir = freshDir();
      const { store, failNextFlushAt } = fullDisk(dir);
      const expected = new Map<string, Uint8Array>();
      const put = (bytes: Uint8Array) => expected.set(store.put(bytes, { ext: "bin" }), bytes);
      put(randomBytes(1, 3000));
      store.flush();
      put(randomBytes(2, 5000));
      put(randomBytes(3, 700));
      failNextFlushAt(failAt);
      const err = thrown(() => store.flush(), "E_STORE_WRITE");
      const { pack, idx } = packOf(dir);
      expect(err.message).toContain(which === "pack" ? pack : idx);
      expect(err.message).toContain("ENOSPC");
      expect((err.cause as NodeJS.ErrnoException).code).toBe("ENOSPC");
      // Cut back at once (the process may never retry): on disk only what the first flush wrote.
      expect(fs.statSync(pack).size).toBe(3000);
      expect(indexOf(idx).size).toBe(1);
      expect(fs.readFileSync(idx, "utf8").endsWith("]\n")).toBe(true);
      expectAll(dir, store, new Map([...expected].slice(0, 1)));
      for (const [ref, bytes] of expected) expect(Buffer.compare(store.get(ref), bytes)).toBe(0); // pending kept
      put(randomBytes(4, 1234)); // a put between the failure and the retry
      store.flush();
      expectAll(dir, store, expected);
      // Rolled back, not appended after the partial bytes: the pack holds each entry once.
      expect(fs.statSync(pack).size).toBe([...expected.values()].reduce((n, b) => n + b.length, 0));
      expect(indexOf(idx).size).toBe(4);
      expect(fs.readFileSync(idx, "utf8").split("\n")).toHaveLength(5);
      expectEveryLineHolds(dir);
    });

    it(`ENOSPC halfway through the ${which} and a rollback that fails too: the retry goes to a new pack, and no index entry names wrong bytes`, () => {
      const dir = freshDir();
      const { store, failNextFlushAt } = fullDisk(dir, { failTruncate: true });
      const expected = new Map<string, Uint8Array>();
      const put = (bytes: Uint8Array) => expected.set(store.put(bytes, { ext: "bin" }), bytes);
      put(randomBytes(5, 2000));
      store.flush();
      put(randomBytes(6, 4000));
      put(randomBytes(7, 300));
      failNextFlushAt(failAt);
      expect(thrown(() => store.flush(), "E_STORE_WRITE").message).toContain("ENOSPC");
      put(randomBytes(8, 999));
      store.flush();
      expect(fs.readdirSync(dir).filter((f) => f.endsWith(".bin"))).toHaveLength(2);
      expectAll(dir, store, expected);
      expectEveryLineHolds(dir);
    });
  }
});
