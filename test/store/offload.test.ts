import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { contentAddress, sha256Hex } from "../../src/core/content-address.js";
import {
  createFsStore,
  createMemoryStore,
  createPackStore,
  encodeText,
  StoreView,
  storeRefs,
  type FsOps,
  type OffloadHint,
  type OffloadStore,
  type OffloadStoreOptions,
} from "../../src/store/index.js";
import { createRng, randomTricky, tempDirs, thrown } from "../helpers.js";

const kRefPattern = /^workspace\/outputs\/[a-z0-9_-]{1,16}_[0-9a-f]{32}(-[0-9]+)?\.[a-z0-9_-]{1,10}$/;
/** SHA-256("abc") cut to 128 bits (the FIPS 180-2 vector ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad). */
const kAbc = "ba7816bf8f01cfea414140de5dae2223";
const utf8 = (s: string) => new TextEncoder().encode(s);

const tmp = tempDirs("ctxfold-store-");
const freshDir = tmp.fresh;

function osError(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated, ${syscall}`), { code, syscall });
}

function randomBytes(seed: number, n: number): Uint8Array {
  const r = createRng(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = r.int(256);
  return out;
}

const kStores: [string, (options?: OffloadStoreOptions) => OffloadStore][] = [
  ["memory", (options) => createMemoryStore(options)],
  ["fs", (options) => createFsStore({ dir: freshDir(), ...options })],
  ["pack (buffered)", (options) => createPackStore({ dir: freshDir(), ...options })],
  ["pack (flushed after every put)", (options) => flushing(createPackStore({ dir: freshDir(), ...options }))],
];

/** A pack store whose every put reaches its pack at once, so lookups go to disk (and to its digests). */
function flushing(store: ReturnType<typeof createPackStore>): OffloadStore {
  return {
    prefix: store.prefix,
    put: (data, hint) => {
      const ref = store.put(data, hint);
      store.flush();
      return ref;
    },
    get: (ref) => store.get(ref),
    getText: (ref) => store.getText(ref),
    has: (ref) => store.has(ref),
    flush: () => store.flush(),
  };
}

describe.each(kStores)("%s store", (_, make) => {
  it("names refs prefix/kind_<SHA-256 cut to 128 bits>.ext, with the prefix option", () => {
    const store = make();
    expect(store.prefix).toBe("workspace/outputs");
    expect(store.put("abc")).toBe(`workspace/outputs/output_${kAbc}.txt`);
    const text = "def main():\n    pass\n";
    expect(store.put(text, { kind: "read", ext: "py" })).toBe(`workspace/outputs/read_${contentAddress(utf8(text))}.py`);
    const other = make({ prefix: "runs/7/out/" });
    expect(other.prefix).toBe("runs/7/out");
    expect(other.put("abc", { kind: "shell", ext: "log" })).toBe(`runs/7/out/shell_${kAbc}.log`);
    expect(thrown(() => make({ prefix: "/" }), "E_BAD_INPUT").message).toMatch(/prefix/);
  });

  it("put is idempotent: same bytes and hint, same ref; a string and its UTF-8 bytes are the same content", () => {
    const store = make();
    const ref = store.put("some tool output", { kind: "search", ext: "json" });
    expect(store.put("some tool output", { kind: "search", ext: "json" })).toBe(ref);
    expect(store.put(utf8("some tool output"), { kind: "search", ext: "json" })).toBe(ref);
    expect(store.put(Buffer.from("some tool output"), { kind: "search", ext: "json" })).toBe(ref);
    expect(store.put("some tool output", { kind: "page", ext: "json" })).not.toBe(ref);
    expect(store.has(ref)).toBe(true);
    expect(store.getText(ref)).toBe("some tool output");
  });

  it("get returns exactly the stored bytes (seeded random binary, empty to 1 MB), as a copy", () => {
    const store = make();
    for (const [i, n] of [0, 1, 7, 31, 32, 255, 4096, 65537, 1 << 20].entries()) {
      const bytes = randomBytes(100 + i, n);
      const ref = store.put(bytes, { ext: "bin" });
      expect(ref).toBe(`workspace/outputs/output_${contentAddress(bytes)}.bin`);
      const back = store.get(ref);
      expect(back).toBeInstanceOf(Uint8Array);
      expect(Buffer.compare(back, bytes)).toBe(0);
      if (n > 0) {
        back[0] ^= 0xff;
        expect(store.get(ref)[0]).toBe(bytes[0]);
      }
    }
    // The store copied what it was given: the caller may reuse its array.
    const reused = utf8("before");
    const ref = store.put(reused);
    reused.fill(0x21);
    expect(store.getText(ref)).toBe("before");
  });

  it("getText(put(s)) === s for emoji, CJK, a BOM and lone surrogates", () => {
    const store = make();
    const samples = [
      "",
      "plain ascii",
      "\uFEFFstarts with a BOM",
      "emoji 👍🏽 family 👨‍👩‍👧 flag 🇯🇵",
      "漢字かなカナ 한국어 中文",
      "\uD800",
      "\uDFFF",
      "a\uDC00b",
      "\uDBFF\uDBFF\uDFFF", // a lone high, then a pair
      "x\uDE00\uD83D", // low then high: two lone surrogates, not a pair
      "\uD83D\uDE00\uD83D",
    ];
    const r = createRng(5);
    for (let i = 0; i < 200; i++) samples.push(randomTricky(r, i % 20 === 0 ? 5000 : 120));
    const refs = new Set<string>();
    for (const s of samples) {
      const ref = store.put(s);
      refs.add(ref);
      expect(store.getText(ref)).toBe(s);
      expect(Buffer.compare(store.get(ref), encodeText(s))).toBe(0);
    }
    expect(refs.size).toBe(new Set(samples).size);
    // Well-formed text is stored as plain UTF-8; a lone surrogate as its WTF-8 sequence, so two
    // strings that UTF-8 would fold into the same U+FFFD keep apart.
    expect(store.get(store.put("héllo 👍"))).toEqual(utf8("héllo 👍"));
    expect([...store.get(store.put("a\uD800"))]).toEqual([0x61, 0xed, 0xa0, 0x80]);
    expect(store.put("\uD800")).not.toBe(store.put("\uDFFF"));
    expect(store.put("\uD800")).not.toBe(store.put("\uFFFD"));
  });

  it("a forced hash collision gets -1, -2, …; each ref resolves to its own bytes; put stays idempotent", () => {
    const store = make({ hash: () => 42n });
    const a = store.put("first");
    const b = store.put("second");
    const c = store.put("third");
    expect([a, b, c]).toEqual([
      "workspace/outputs/output_000000000000002a.txt",
      "workspace/outputs/output_000000000000002a-1.txt",
      "workspace/outputs/output_000000000000002a-2.txt",
    ]);
    expect([store.getText(a), store.getText(b), store.getText(c)]).toEqual(["first", "second", "third"]);
    expect(store.put("second")).toBe(b);
    expect(store.put("third")).toBe(c);
    // A hash returning more than 64 bits is cut to 64, never a longer name.
    expect(make({ hash: () => (1n << 70n) + 5n }).put("x")).toBe("workspace/outputs/output_0000000000000005.txt");
  });

  it("sanitises kind and ext: lower-case [a-z0-9_-] only, capped, default when empty", () => {
    const store = make();
    const stem = (ref: string) => path.posix.basename(ref).replace(/_[0-9a-f]{32}(-\d+)?\./, " .");
    const cases: [unknown, unknown, string][] = [
      ["../../etc", "../../passwd", "etc .passwd"],
      ["a/b", "tar.gz", "ab .targz"],
      ["..\\..\\Windows", "C:\\x", "windows .cx"],
      ["Ünïcödé☃", "日本", "ncd .txt"],
      ["...", "/", "output .txt"],
      ["", "", "output .txt"],
      [42, null, "output .txt"],
      ["READ", "JSON", "read .json"],
      ["x".repeat(40), "y".repeat(40), `${"x".repeat(16)} .${"y".repeat(10)}`],
      ["we\u0000ird\nkind", "e\u0000xt", "weirdkind .ext"],
    ];
    for (const [i, [kind, ext, expected]] of cases.entries()) {
      const ref = store.put(`payload ${i}`, { kind, ext } as { kind?: string; ext?: string });
      expect(ref).toMatch(kRefPattern);
      expect(stem(ref)).toBe(expected);
      expect(store.getText(ref)).toBe(`payload ${i}`);
    }
  });

  it("rejects refs it cannot have made with E_BAD_REF (the ref in the message); has() says false", () => {
    const store = make();
    const good = store.put("abc");
    const name = path.posix.basename(good);
    const bad = [
      "../x",
      "/etc/passwd",
      "workspace/outputs/../../../etc/passwd",
      `workspace/outputs/../outputs/${name}`,
      `workspace/outputs/sub/${name}`,
      `other/prefix/${name}`,
      `workspace/outputs${name}`,
      `/workspace/outputs/${name}`,
      `workspace/outputs/${name}/`,
      `workspace/outputs/${name.toUpperCase()}`,
      "workspace/outputs/output_44bc2cf5ad77099.txt", // 15 hex digits
      `workspace/outputs/output_${kAbc.slice(1)}.txt`, // 31
      `workspace/outputs/output_${kAbc}0.txt`, // 33
      "workspace/outputs/output_44bc2cf5ad770999ab.txt", // 18
      "workspace/outputs/output_44bc2cf5ad770999.tar.gz",
      "workspace/outputs/output_44bc2cf5ad770999",
      "workspace/outputs/_44bc2cf5ad770999.txt",
      `workspace/outputs/.${name}.tmp-1-abcdef`,
      "workspace/outputs/output_44bc2cf5ad770999.txt\0",
      "",
    ];
    for (const ref of bad) {
      expect(thrown(() => store.get(ref), "E_BAD_REF").message).toContain(JSON.stringify(ref));
      thrown(() => store.getText(ref), "E_BAD_REF");
      expect(store.has(ref)).toBe(false);
    }
    for (const value of [42, null, undefined, { ref: good }]) {
      thrown(() => store.get(value as never), "E_BAD_REF");
      expect(store.has(value as never)).toBe(false);
    }
    expect(store.getText(good)).toBe("abc");
  });

  it("a well-formed ref that is not stored throws E_REF_NOT_FOUND", () => {
    const store = make();
    const ref = "workspace/outputs/read_0123456789abcdef.txt";
    expect(store.has(ref)).toBe(false);
    expect(thrown(() => store.get(ref), "E_REF_NOT_FOUND").message).toContain(ref);
    thrown(() => store.getText(ref), "E_REF_NOT_FOUND");
    const stored = store.put("x", { hint: 1 } as never);
    thrown(() => store.get(stored.replace(".txt", "-1.txt")), "E_REF_NOT_FOUND");
  });

  it("put rejects what is neither a string nor bytes", () => {
    const store = make();
    for (const value of [null, 42, [1, 2], new ArrayBuffer(4), { length: 0 }]) {
      thrown(() => store.put(value as never), "E_NOT_BYTES");
    }
  });
});

describe("MemoryOffloadStore", () => {
  it("counts the bytes it holds and lists its refs in the order stored", () => {
    const store = createMemoryStore({ prefix: "mem" });
    expect(store.size).toBe(0);
    const a = store.put("héllo"); // 6 bytes
    const b = store.put(new Uint8Array(10), { kind: "list", ext: "bin" });
    store.put("héllo");
    expect(store.size).toBe(16);
    expect(store.refs()).toEqual([a, b]);
  });
});

describe("PackOffloadStore", () => {
  it("a repeated put is proved equal by a read, then by the digest of what was read; collisions still chain", () => {
    const dir = freshDir();
    const hash = () => 9n;
    const first = createPackStore({ dir, hash });
    const a = first.put("alpha");
    first.flush();
    const second = createPackStore({ dir, hash });
    for (let i = 0; i < 3; i++) expect(second.put("alpha")).toBe(a); // read once, then digest
    const b = second.put("beta"); // collides with alpha on disk: compared against the digest
    expect(b).toBe("workspace/outputs/output_0000000000000009-1.txt");
    second.flush();
    expect(second.put("beta")).toBe(b);
    expect(second.put("alpha")).toBe(a);
    expect(second.put("gamma")).toBe("workspace/outputs/output_0000000000000009-2.txt");
    second.flush();
    const third = createPackStore({ dir, hash });
    expect([third.getText(a), third.getText(b), third.getText("workspace/outputs/output_0000000000000009-2.txt")]).toEqual(["alpha", "beta", "gamma"]);
  });

  it("two writers of one directory, both buffered: the later to claim a name for other bytes takes the next one; equal bytes share it", () => {
    const dir = freshDir();
    const hash = () => 3n;
    const [a, b] = [createPackStore({ dir, hash }), createPackStore({ dir, hash })];
    const alpha = a.put("alpha");
    const beta = b.put("beta"); // a has flushed nothing: its claim is what b meets
    expect([alpha, beta]).toEqual(["workspace/outputs/output_0000000000000003.txt", "workspace/outputs/output_0000000000000003-1.txt"]);
    expect(a.put("gamma")).toBe("workspace/outputs/output_0000000000000003-2.txt");
    // Equal bytes under a name another writer claimed: the same ref, and b keeps its own copy (a may never flush).
    expect(b.put("alpha")).toBe(alpha);
    b.flush();
    expect(createPackStore({ dir, hash }).getText(alpha)).toBe("alpha");
    a.flush();
    const reader = createPackStore({ dir, hash });
    expect([alpha, beta, "workspace/outputs/output_0000000000000003-2.txt"].map((r) => reader.getText(r))).toEqual(["alpha", "beta", "gamma"]);
  });

  it("a collision with bytes in a pack it let go of takes the next name: its own claim remembers them", () => {
    const dir = freshDir();
    const hash = () => 11n;
    const store = createPackStore({ dir, hash, packEntries: 1 });
    const alpha = store.put("alpha");
    store.flush(); // the pack is full: its index is let go of
    const beta = store.put("beta");
    expect(beta).toBe(alpha.replace(".txt", "-1.txt"));
    expect(store.put("alpha")).toBe(alpha); // stored again under its own name
    store.flush();
    const reader = createPackStore({ dir, hash });
    expect([reader.getText(alpha), reader.getText(beta)]).toEqual(["alpha", "beta"]);
  });

  it("the claim log: malformed and cut-short lines are skipped; a claim that cannot be appended is E_STORE_WRITE and stores nothing", () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { recursive: true });
    const name = `output_${contentAddress(utf8("x"))}.txt`;
    fs.writeFileSync(
      path.join(dir, "claims.log"),
      `\n${name} short\nnot a claim at all\n${name} ${"a".repeat(64)} 0123456789abcdef extra\n${name} ${"b".repeat(64)}`,
    );
    const store = createPackStore({ dir });
    expect(store.put("x")).toBe(`workspace/outputs/${name}`);
    store.flush();
    expect(createPackStore({ dir }).getText(`workspace/outputs/${name}`)).toBe("x");
    const full = createPackStore({ dir: freshDir(), fs: { writeSync: (_fd, _b, _o, length) => length - 1 } });
    const err = thrown(() => full.put("y"), "E_STORE_WRITE");
    expect(err.message).toContain("claims.log");
    expect(full.has(createMemoryStore().put("y"))).toBe(false);
  });

  it("a claim stands for its bytes by their whole SHA-256: another writer's claim of the name for other bytes that share its 128 bits makes the put take the next name", () => {
    // Two contents that collide in a name's 128 bits share that content address, so a claim that
    // carried it would call them equal. The other writer's claim below is what its put of such
    // bytes writes: the name they share, the whole digest of its own bytes.
    const dir = freshDir();
    fs.mkdirSync(dir, { recursive: true });
    const name = `output_${contentAddress(utf8("alpha"))}.txt`;
    const theirs = sha256Hex(utf8("colliding bytes"));
    fs.writeFileSync(path.join(dir, "claims.log"), `\n${name} ${theirs} 0123456789abcdef\n`);
    const store = createPackStore({ dir });
    expect(store.put("alpha")).toBe(`workspace/outputs/${name.replace(".txt", "-1.txt")}`);
    store.flush();
    expect(createPackStore({ dir }).getText(`workspace/outputs/${name.replace(".txt", "-1.txt")}`)).toBe("alpha");
    // What this writer claims: the whole digest of its bytes.
    const mine = fs.readFileSync(path.join(dir, "claims.log"), "utf8").trim().split("\n").at(-1)!.split(" ");
    expect(mine[1]).toBe(sha256Hex(utf8("alpha")));
  });

  it("claims that went to disk still decide: another writer's old claim of a name for other bytes chains the put, equal bytes share the name", () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { recursive: true });
    const [alpha, beta] = [`output_${contentAddress(utf8("alpha"))}.txt`, `output_${contentAddress(utf8("beta"))}.txt`];
    // Another writer's claims, the two that matter first and then 500 more: with 16 in memory, they are in runs on disk.
    const filler = Array.from({ length: 500 }, (_, i) => `\noutput_${i.toString(16).padStart(32, "0")}.txt ${"c".repeat(64)} 0123456789abcdef`);
    const lines = [`\n${alpha} ${sha256Hex(utf8("colliding bytes"))} 0123456789abcdef`, `\n${beta} ${sha256Hex(utf8("beta"))} 0123456789abcdef`, ...filler];
    fs.writeFileSync(path.join(dir, "claims.log"), `${lines.join("")}\n`);
    const store = createPackStore({ dir, claimsInMemory: 16 });
    store.put("x"); // the first claim reads the log
    expect(store.put("alpha")).toBe(`workspace/outputs/${alpha.replace(".txt", "-1.txt")}`);
    expect(store.put("beta")).toBe(`workspace/outputs/${beta}`);
    store.flush();
    expect(fs.readdirSync(dir).filter((f) => f.startsWith("."))).toEqual([]);
  });

  it("two live writers, one keeping 4 claims in memory: equal bytes get equal names and other bytes the next, over 60 colliding puts each", () => {
    const dir = freshDir();
    const hash = () => 5n;
    const [a, b] = [createPackStore({ dir, hash }), createPackStore({ dir, hash, claimsInMemory: 4 })];
    const texts = Array.from({ length: 60 }, (_, i) => `text ${i}`);
    const refs = texts.map((t) => a.put(t));
    expect(new Set(refs).size).toBe(60);
    expect(texts.map((t) => b.put(t))).toEqual(refs);
    expect(b.put("one more")).toBe("workspace/outputs/output_0000000000000005-60.txt");
    expect(a.put("and another")).toBe("workspace/outputs/output_0000000000000005-61.txt");
    a.flush();
    b.flush();
    const reader = createPackStore({ dir, hash });
    expect(refs.map((r) => reader.getText(r))).toEqual(texts);
  });

  it("claimsInMemory must be a positive integer", () => {
    const err = thrown(() => createPackStore({ dir: freshDir(), claimsInMemory: 0 }), "E_BAD_INPUT");
    expect(err.message).toContain("claimsInMemory");
  });

  it("a claim line of before (the 128-bit content address as its digest) shares its name with equal bytes and chains other bytes", () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { recursive: true });
    const [a, b] = [`output_${contentAddress(utf8("a"))}.txt`, `output_${contentAddress(utf8("b"))}.txt`];
    // a: claimed before for equal bytes; b: claimed before for bytes whose first 128 bits differ.
    fs.writeFileSync(path.join(dir, "claims.log"), `\n${a} ${contentAddress(utf8("a"))} 0123456789abcdef\n${b} ${"0".repeat(32)} 0123456789abcdef\n`);
    const store = createPackStore({ dir });
    store.put("x"); // the first claim reads the log
    expect(store.put("a")).toBe(`workspace/outputs/${a}`);
    expect(store.put("b")).toBe(`workspace/outputs/${b.replace(".txt", "-1.txt")}`);
  });

  it("past packEntries it starts a new pack and lets go of the old index: every ref still resolves, a repeat is stored again", () => {
    const dir = freshDir();
    const store = createPackStore({ dir, packEntries: 3 });
    const texts = Array.from({ length: 10 }, (_, i) => `output ${i}`);
    const refs = texts.map((t, i) => {
      const ref = store.put(t);
      if (i % 2 === 1) store.flush();
      return ref;
    });
    store.flush();
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".bin")).length).toBe(3); // 4 + 4 entries, then 2
    refs.forEach((ref, i) => {
      expect(store.getText(ref)).toBe(texts[i]);
      expect(store.has(ref)).toBe(true);
    });
    const saved = store.savedBytes;
    expect(store.put(texts[0])).toBe(refs[0]); // let go of: stored again under its name
    expect(store.savedBytes).toBe(saved + texts[0].length);
    expect(store.put(texts[9])).toBe(refs[9]); // in the current pack: nothing stored
    expect(store.savedBytes).toBe(saved + texts[0].length);
    store.flush();
    const reader = createPackStore({ dir });
    refs.forEach((ref, i) => expect(reader.getText(ref)).toBe(texts[i]));
    expect(thrown(() => createPackStore({ dir, packEntries: 0 }), "E_BAD_INPUT").path).toBe("packEntries");
  });

  it("reads a let-go pack's index once for the names looked up again, not once a lookup, and stays right as more packs retire", () => {
    const dir = freshDir();
    let indexReads = 0;
    const openSync = (file: string, flags: number, mode?: number) => {
      if (file.endsWith(".idx") && (flags & fs.constants.O_ACCMODE) === fs.constants.O_RDONLY) indexReads++;
      return fs.openSync(file, flags, mode);
    };
    const store = createPackStore({ dir, packEntries: 2, fs: { openSync } });
    const put = (t: string) => {
      const ref = store.put(t);
      store.flush();
      return ref;
    };
    const old = [put("first"), put("second")]; // the first pack, let go of
    const current = put("third");
    const missing = `${store.prefix}/output_${"0".repeat(32)}.txt`;
    const before = indexReads;
    for (let i = 0; i < 50; i++) {
      expect(store.getText(old[i % 2])).toBe(i % 2 ? "second" : "first");
      expect(store.has(missing)).toBe(false);
      expect(store.has(current)).toBe(true);
    }
    // One index read a name (two names and the missing one), however often it is asked for.
    expect(indexReads - before).toBeLessThanOrEqual(3);
    // Another pack retires: what it holds is found, and a name it does not hold is still missing.
    const later = put("fourth");
    put("fifth");
    expect(store.getText(later)).toBe("fourth");
    expect(store.getText(current)).toBe("third");
    expect(store.has(missing)).toBe(false);
    old.forEach((ref, i) => expect(store.getText(ref)).toBe(i ? "second" : "first"));
  });

  it("savedBytes counts what its puts added: new names only, not bytes an earlier store left in the directory", () => {
    const dir = freshDir();
    const first = createPackStore({ dir });
    first.put("héllo"); // 6 bytes
    first.put("héllo");
    first.put("héllo", { kind: "read" }); // the same bytes under another name are stored again
    expect(first.savedBytes).toBe(12);
    first.flush();
    const second = createPackStore({ dir });
    second.put("héllo");
    second.put(new Uint8Array(10));
    expect(second.savedBytes).toBe(10);
  });
});

describe("flush", () => {
  /** A view that changes nothing: what it does beyond put is StoreView's. */
  class PlainView extends StoreView {
    put(data: Uint8Array | string, hint?: OffloadHint): string {
      return this.inner.put(data, hint);
    }
  }

  it("stores that write each put at once have the ref on disk before any flush", () => {
    const dir = freshDir();
    const ref = createFsStore({ dir }).put("written at once");
    expect(createFsStore({ dir }).getText(ref)).toBe("written at once");
    expect(() => createMemoryStore().flush()).not.toThrow();
  });

  it("a view forwards it: the pack store's buffered puts reach its pack, for a reader opened afterwards", () => {
    const dir = freshDir();
    const view = new PlainView(createPackStore({ dir }));
    const ref = view.put("buffered");
    expect(view.getText(ref)).toBe("buffered"); // the instance sees its own puts
    expect(createPackStore({ dir }).has(ref)).toBe(false);
    view.flush();
    expect(createPackStore({ dir }).getText(ref)).toBe("buffered");
  });
});

describe("FsOffloadStore", () => {
  const list = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

  it("writes one file per ref holding exactly the bytes, creating the directory on first put", () => {
    const dir = path.join(freshDir(), "deep", "er");
    const store = createFsStore({ dir });
    expect(store.dir).toBe(dir);
    expect(fs.existsSync(dir)).toBe(false);
    const bytes = randomBytes(9, 3000);
    const ref = store.put(bytes, { kind: "read", ext: "bin" });
    expect(store.pathOf(ref)).toBe(path.join(dir, path.posix.basename(ref)));
    expect(Buffer.compare(fs.readFileSync(store.pathOf(ref)), bytes)).toBe(0);
    store.put(bytes, { kind: "read", ext: "bin" });
    store.put("text");
    expect(list(dir)).toHaveLength(2); // no temp files, no duplicates
    thrown(() => store.pathOf("../x"), "E_BAD_REF");
  });

  it("defaults dir to path.resolve(prefix), so a ref is also the file's path", () => {
    expect(createFsStore().dir).toBe(path.resolve("workspace/outputs"));
    const prefix = path.join(freshDir(), "workspace", "outputs");
    const store = createFsStore({ prefix });
    const ref = store.put('{"ok":true}', { kind: "output", ext: "json" });
    expect(fs.readFileSync(ref, "utf8")).toBe('{"ok":true}');
  });

  it("a second store on the same directory resolves the first's refs and continues its collision chains", () => {
    const dir = freshDir();
    const hash = () => 7n;
    const first = createFsStore({ dir, hash });
    const a = first.put("alpha");
    const b = first.put("beta");
    const bin = first.put(randomBytes(3, 5000), { ext: "bin" });
    const second = createFsStore({ dir, hash });
    expect(second.has(a) && second.has(b) && second.has(bin)).toBe(true);
    expect(second.getText(a)).toBe("alpha");
    expect(second.getText(b)).toBe("beta");
    expect(Buffer.compare(second.get(bin), randomBytes(3, 5000))).toBe(0);
    expect(second.put("beta")).toBe(b);
    expect(second.put("gamma")).toBe("workspace/outputs/output_0000000000000007-2.txt");
    expect(first.getText(second.put("gamma"))).toBe("gamma");
  });

  it("a name another writer takes between the look and the link is never replaced: put compares, then chains or shares it", () => {
    const dir = freshDir();
    const hash = () => 5n;
    const other = createFsStore({ dir, hash });
    let planted: string | undefined;
    // Another writer (another process, in effect) stores its bytes under the name at the instant this one links.
    const linkSync: FsOps["linkSync"] = (from, to) => {
      if (planted !== undefined) other.put(planted);
      planted = undefined;
      fs.linkSync(from, to);
    };
    const store = createFsStore({ dir, hash, fs: { linkSync } });
    planted = "the other writer's bytes";
    const mine = store.put("this writer's bytes");
    expect(mine).toBe("workspace/outputs/output_0000000000000005-1.txt");
    expect(store.getText("workspace/outputs/output_0000000000000005.txt")).toBe("the other writer's bytes");
    expect(store.getText(mine)).toBe("this writer's bytes");
    // Equal bytes linked first by the other writer: the same ref, nothing stored twice.
    planted = "equal bytes";
    const saved = store.savedBytes;
    expect(store.put("equal bytes")).toBe("workspace/outputs/output_0000000000000005-2.txt");
    expect(store.savedBytes).toBe(saved);
    expect(list(dir)).toEqual(["output_0000000000000005-1.txt", "output_0000000000000005-2.txt", "output_0000000000000005.txt"]);
  });

  it("on a filesystem without hard links (EPERM) the bytes are renamed into place", () => {
    const dir = freshDir();
    const store = createFsStore({
      dir,
      fs: {
        linkSync: () => {
          throw osError("EPERM", "link");
        },
      },
    });
    const ref = store.put("stored without link()");
    expect(store.getText(ref)).toBe("stored without link()");
    expect(list(dir)).toEqual([path.posix.basename(ref)]);
  });

  it("ENOSPC halfway through a write: E_STORE_WRITE naming the file and code, and no partial or temp file", () => {
    const dir = freshDir();
    let attempts = 0;
    const writeFileSync: FsOps["writeFileSync"] = (file, data, options) => {
      attempts++;
      fs.writeFileSync(file, data.subarray(0, data.length >> 1), options);
      throw osError("ENOSPC", "write");
    };
    const store = createFsStore({ dir, fs: { writeFileSync } });
    const data = randomBytes(11, 10_000);
    const ref = createMemoryStore().put(data);
    const err = thrown(() => store.put(data), "E_STORE_WRITE");
    expect(attempts).toBe(1);
    expect(err.message).toContain(store.pathOf(ref));
    expect(err.message).toContain("ENOSPC");
    expect((err.cause as NodeJS.ErrnoException).code).toBe("ENOSPC");
    expect(list(dir)).toEqual([]);
    expect(store.has(ref)).toBe(false);
    thrown(() => store.get(ref), "E_REF_NOT_FOUND");
    // Once there is room again, the same put succeeds.
    expect(createFsStore({ dir }).put(data)).toBe(ref);
  });

  it("a failed link leaves nothing at the final name and no temp file", () => {
    const dir = freshDir();
    const linkSync: FsOps["linkSync"] = () => {
      throw osError("EACCES", "link");
    };
    const store = createFsStore({ dir, fs: { linkSync } });
    const ref = createMemoryStore().put("content");
    const err = thrown(() => store.put("content"), "E_STORE_WRITE");
    expect(err.message).toContain(store.pathOf(ref));
    expect(err.message).toContain("EACCES");
    expect(fs.existsSync(store.pathOf(ref))).toBe(false);
    expect(list(dir)).toEqual([]);
  });

  it("a directory under a regular file: E_STORE_WRITE with ENOTDIR, never a read error", () => {
    const file = path.join(freshDir(), "plain-file");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "not a directory");
    const store = createFsStore({ dir: path.join(file, "outputs") });
    const err = thrown(() => store.put("x"), "E_STORE_WRITE");
    expect(err.message).toContain(path.join(file, "outputs"));
    expect(err.message).toContain("ENOTDIR");
    expect(store.has("workspace/outputs/output_0123456789abcdef.txt")).toBe(false);
    expect(fs.readFileSync(file, "utf8")).toBe("not a directory");
  });

  it("read failures other than ENOENT are E_STORE_READ; a file gone between check and read is not found", () => {
    const dir = freshDir();
    const ref = createFsStore({ dir }).put("secret");
    const denied = createFsStore({
      dir,
      fs: {
        readFileSync: () => {
          throw osError("EACCES", "open");
        },
      },
    });
    const err = thrown(() => denied.get(ref), "E_STORE_READ");
    expect(err.message).toContain(denied.pathOf(ref));
    expect(err.message).toContain("EACCES");
    thrown(() => denied.put("secret"), "E_STORE_READ");
    const vanished = createFsStore({
      dir,
      fs: {
        readFileSync: () => {
          throw osError("ENOENT", "open");
        },
      },
    });
    thrown(() => vanished.get(ref), "E_REF_NOT_FOUND");
  });
});

describe("refs(): every store lists what it holds", () => {
  it("memory, per-file and pack stores list each stored ref once, whoever stored it; temp files and other names are not refs", () => {
    const texts = ["alpha", "beta\n", "gamma ☃"];
    const memory = createMemoryStore();
    const fsDir = freshDir();
    const packDir = freshDir();
    const perFile = createFsStore({ dir: fsDir });
    const first = createPackStore({ dir: packDir });
    const refs = texts.map((t) => [memory, perFile, first].map((s) => s.put(t, { kind: "read" })));
    for (const [a, b, c] of refs) expect(new Set([a, b, c]).size).toBe(1);
    const want = refs.map(([r]) => r).sort();
    expect(memory.refs().sort()).toEqual(want);
    // What a put leaves around a per-file store's outputs (a temp file of a killed writer) is not listed.
    fs.writeFileSync(path.join(fsDir, `.${path.basename(perFile.pathOf(want[0]))}.tmp-1-abc`), "partial");
    fs.writeFileSync(path.join(fsDir, "notes.txt"), "not a store name");
    expect(perFile.refs().sort()).toEqual(want);
    expect(createFsStore({ dir: path.join(fsDir, "absent") }).refs()).toEqual([]);
    // A fresh pack store over that directory holds them too, before any other read (has() lists DIR first).
    expect(createPackStore({ dir: fsDir }).has(want[0])).toBe(true);
    // A pack store lists its buffered puts before a flush, and a later reader the flushed ones plus plain files.
    expect(first.refs().sort()).toEqual(want);
    first.flush();
    const plain = createFsStore({ dir: packDir }).put("a plain file beside the packs");
    const second = createPackStore({ dir: packDir });
    const extra = second.put("buffered in the second");
    expect(second.refs().sort()).toEqual([...want, plain, extra].sort());
  });

  it("a pack store lists entries of the packs it let go of", () => {
    const dir = freshDir();
    const store = createPackStore({ dir, packEntries: 2 });
    const refs = Array.from({ length: 5 }, (_, i) => store.put(`output ${i}`));
    store.flush();
    for (let i = 5; i < 7; i++) {
      refs.push(store.put(`output ${i}`));
      store.flush();
    }
    expect(store.refs().sort()).toEqual([...refs].sort());
  });

  it("a view lists its store's refs; storeRefs names a store that cannot list (E_BAD_INPUT)", () => {
    const inner = createMemoryStore();
    const ref = inner.put("x");
    class Counting extends StoreView {
      put(data: Uint8Array | string, hint?: OffloadHint): string {
        return this.inner.put(data, hint);
      }
    }
    expect(new Counting(inner).refs()).toEqual([ref]);
    const unlisted: OffloadStore = { prefix: "p", put: () => "p/x", get: () => new Uint8Array(), getText: () => "", has: () => false, flush: () => {} };
    expect(thrown(() => storeRefs(unlisted), "E_BAD_INPUT").path).toBe("store");
    thrown(() => new Counting(unlisted).refs(), "E_BAD_INPUT");
  });
});
