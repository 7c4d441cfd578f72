import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { generateRun } from "../../src/gen/run.js";
import { Session, type CompactionBlock, type Loop, type Message } from "../../src/model/schema.js";
import { FsSessionStore, sessionDirName, type SessionFsOps } from "../../src/block/fs-session-store.js";
import { MemorySessionStore, type SessionStore } from "../../src/block/store.js";
import { tempDirs, thrown } from "../helpers.js";

const tmp = tempDirs("ctxfold-sessions-");
const freshDir = tmp.fresh;

function block(loop: Loop, at = "2025-01-02T03:04:05.000Z"): CompactionBlock {
  const summary: Message = { id: `sum-${String(loop.id)}`, role: "user", parts: [{ type: "text", text: `summary of loop ${String(loop.id)}` }], meta: {} };
  return { keepFirst: { startTurn: 0, endTurn: 1 }, keepCompacted: { range: { startTurn: 2, endTurn: 3 }, messages: [summary] }, createdAt: at };
}

/** A generated run cut into `count` loops; ids alternate number / string; every other loop has a block. */
function makeSession(id: string, seed: number, count = 4): Session {
  const { messages } = generateRun({ seed, steps: 6 });
  const size = Math.ceil(messages.length / count);
  const loops: Loop[] = [];
  for (let i = 0; i < count; i++) {
    const loop: Loop = {
      id: i % 2 === 0 ? i : `loop-${i}`,
      messages: messages.slice(i * size, (i + 1) * size).map((m) => ({ ...m, turn: { loop: i, index: m.turn?.index ?? 0 } })),
    };
    if (i % 2 === 1) loop.compaction = block(loop);
    loops.push(loop);
  }
  return { id, loops };
}

const loopIds = (s: Session) => s.loops.map((l) => l.id);

const kStores: [string, () => SessionStore][] = [
  ["memory", () => new MemorySessionStore()],
  ["fs", () => new FsSessionStore({ dir: freshDir() })],
];

describe.each(kStores)("%s session store", (_, make) => {
  it("round-trips a generated session, loops and blocks in chain order", () => {
    const store = make();
    const session = makeSession("s1", 1);
    expect(session.loops.reduce((n, l) => n + l.messages.length, 0)).toBeGreaterThan(8);
    store.save(session);
    const { session: loaded, warnings } = store.load("s1");
    expect(warnings).toEqual([]);
    expect(loaded).toEqual(Session.parse(session));
    expect(loopIds(loaded)).toEqual([0, "loop-1", 2, "loop-3"]);
    expect(loaded.loops[1].compaction).toEqual(session.loops[1].compaction);
    expect(loaded.loops[0].compaction).toBeUndefined();
    expect(store.has("s1")).toBe(true);
    expect(store.has("s2")).toBe(false);
  });

  it("save replaces the whole session: dropped loops and blocks are gone", () => {
    const store = make();
    const session = makeSession("s", 2);
    store.save(session);
    const smaller: Session = {
      id: "s",
      loops: [
        { ...session.loops[2], compaction: block(session.loops[2]) },
        { id: session.loops[1].id, messages: session.loops[1].messages },
      ],
    };
    store.save(smaller);
    const loaded = store.load("s").session;
    expect(loopIds(loaded)).toEqual([2, "loop-1"]);
    expect(loaded.loops[0].compaction).toEqual(block(session.loops[2]));
    expect(loaded.loops[1].compaction).toBeUndefined();
  });

  it("saveLoop appends a new loop and replaces an existing one in place, overlay included", () => {
    const store = make();
    const session = makeSession("s", 3);
    store.save(session);
    const extra: Loop = { id: 99, messages: session.loops[0].messages.slice(0, 2) };
    store.saveLoop("s", extra);
    expect(loopIds(store.load("s").session)).toEqual([0, "loop-1", 2, "loop-3", 99]);
    // Replace loop-1 (had a block) with fewer messages and no block: same position, overlay cleared.
    const replaced: Loop = { id: "loop-1", messages: session.loops[1].messages.slice(0, 1) };
    store.saveLoop("s", replaced);
    const loaded = store.load("s").session;
    expect(loopIds(loaded)).toEqual([0, "loop-1", 2, "loop-3", 99]);
    expect(loaded.loops[1]).toEqual(Session.parse({ id: "s", loops: [replaced] }).loops[0]);
    expect(loaded.loops[4].messages).toEqual(extra.messages);
    // Number 2 and string "2" are different loops.
    store.saveLoop("s", { id: "2", messages: [] });
    expect(loopIds(store.load("s").session)).toEqual([0, "loop-1", 2, "loop-3", 99, "2"]);
  });

  it("saveBlock sets and clears one loop's overlay and nothing else", () => {
    const store = make();
    const session = makeSession("s", 4);
    store.save(session);
    const b = block(session.loops[0], "2025-06-01T00:00:00.000Z");
    store.saveBlock("s", 0, b);
    let loaded = store.load("s").session;
    expect(loaded.loops[0].compaction).toEqual(b);
    expect(loaded.loops[0].messages).toEqual(session.loops[0].messages);
    expect(loaded.loops[1].compaction).toEqual(session.loops[1].compaction);
    store.saveBlock("s", "loop-1", undefined);
    loaded = store.load("s").session;
    expect(loaded.loops[1].compaction).toBeUndefined();
    expect(loaded.loops[1].messages).toEqual(session.loops[1].messages);
    expect(loaded.loops[0].compaction).toEqual(b);
    // Clearing twice is fine; an unknown loop is bad input; a bad block names its field.
    store.saveBlock("s", "loop-1", undefined);
    expect(thrown(() => store.saveBlock("s", "nope", b), "E_BAD_INPUT").path).toBe("loopId");
    expect(thrown(() => store.saveBlock("s", "0", b), "E_BAD_INPUT").message).toContain('"0"');
    expect(thrown(() => store.saveBlock("s", 0, { ...b, keepFirst: { startTurn: 3, endTurn: 1 } }), "E_BAD_INPUT").path).toBe("block.keepFirst.endTurn");
  });

  it("copies in and out: callers cannot change what is stored", () => {
    const store = make();
    const session = makeSession("s", 5);
    const expected = Session.parse(structuredClone(session));
    store.save(session);
    session.loops[0].messages[0].parts.push({ type: "text", text: "mutated after save" });
    session.loops.pop();
    const first = store.load("s").session;
    expect(first).toEqual(expected);
    first.loops[1].compaction!.createdAt = "mutated";
    first.loops[0].messages.length = 0;
    const loop = structuredClone(expected.loops[0]);
    store.saveLoop("s", loop);
    loop.messages.length = 0;
    const b = block(expected.loops[2]);
    store.saveBlock("s", 2, b);
    b.keepCompacted!.messages[0].parts = [];
    const second = store.load("s").session;
    expect(second.loops[0]).toEqual(expected.loops[0]);
    expect(second.loops[1]).toEqual(expected.loops[1]);
    expect(second.loops[2].compaction).toEqual(block(expected.loops[2]));
  });

  it("reports unknown sessions, lists and deletes", () => {
    const store = make();
    expect(store.list()).toEqual([]);
    thrown(() => store.load("ghost"), "E_SESSION_NOT_FOUND");
    thrown(() => store.saveLoop("ghost", { id: 1, messages: [] }), "E_SESSION_NOT_FOUND");
    thrown(() => store.saveBlock("ghost", 1, undefined), "E_SESSION_NOT_FOUND");
    expect(store.has("ghost")).toBe(false);
    store.save({ id: "b", loops: [] });
    store.save({ id: "a", loops: [{ id: 1, messages: [] }] });
    expect(store.list()).toEqual(["a", "b"]);
    store.delete("b");
    store.delete("ghost");
    expect(store.list()).toEqual(["a"]);
    expect(store.has("b")).toBe(false);
    thrown(() => store.load("b"), "E_SESSION_NOT_FOUND");
    expect(store.load("a").session).toEqual({ id: "a", loops: [{ id: 1, messages: [] }] });
  });

  it("rejects invalid sessions before storing anything", () => {
    const store = make();
    const dup = thrown(
      () =>
        store.save({
          id: "d",
          loops: [
            { id: 1, messages: [] },
            { id: 1, messages: [] },
          ],
        }),
      "E_BAD_INPUT",
    );
    expect(dup.path).toBe("session.loops[1].id");
    const bad = thrown(
      () => store.save({ id: "d", loops: [{ id: 1, messages: [{ id: "m", role: "robot", parts: [] }] }] } as unknown as Session),
      "E_BAD_INPUT",
    );
    expect(bad.path).toBe("session.loops[0].messages[0].role");
    expect(store.has("d")).toBe(false);
    thrown(() => store.load(42 as unknown as string), "E_BAD_INPUT");
  });
});

/** Every file under dir, as path relative to dir → bytes. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), fs.readFileSync(p).toString("hex"));
    }
  };
  walk(dir);
  return out;
}

function osError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated`), { code });
}

describe("FsSessionStore files", () => {
  it("lays a session out as a manifest, loop files and block files", () => {
    const dir = freshDir();
    const store = new FsSessionStore({ dir });
    store.save(makeSession("layout", 6));
    const sdir = store.sessionDir("layout");
    expect(path.dirname(sdir)).toBe(path.resolve(dir));
    expect(path.basename(sdir)).toMatch(/^layout-[0-9a-f]{16}$/);
    const files = [...snapshot(dir).keys()].map((f) => path.relative(path.basename(sdir), f).split(path.sep).join("/")).sort();
    expect(files).toEqual(["blocks/1.json", "blocks/3.json", "loops/0.json", "loops/1.json", "loops/2.json", "loops/3.json", "session.json"]);
    const manifest = JSON.parse(fs.readFileSync(path.join(sdir, "session.json"), "utf8"));
    expect(manifest).toEqual({ version: 1, id: "layout", loops: [0, "loop-1", 2, "loop-3"], keys: [0, 1, 2, 3], nextKey: 4 });
    const loopFile = JSON.parse(fs.readFileSync(path.join(sdir, "loops", "1.json"), "utf8"));
    expect(Object.keys(loopFile)).toEqual(["id", "messages"]);
    expect(loopFile.id).toBe("loop-1");
  });

  it("is byte-stable: re-saving a loaded session writes identical bytes; keys survive chain changes", () => {
    const dir = freshDir();
    new FsSessionStore({ dir }).save(makeSession("stable", 7));
    const before = snapshot(dir);
    const other = new FsSessionStore({ dir });
    other.save(other.load("stable").session);
    expect(snapshot(dir)).toEqual(before);
    // Dropping the first loop and appending one keeps every other loop's file name and bytes.
    const s = other.load("stable").session;
    other.save({ id: "stable", loops: [...s.loops.slice(1), { id: "new", messages: s.loops[0].messages }] });
    const after = snapshot(dir);
    for (const [f, bytes] of before) {
      if (f.endsWith(`${path.sep}0.json`)) expect(after.has(f), f).toBe(false);
      else if (!f.endsWith("session.json")) expect(after.get(f), f).toBe(bytes);
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(other.sessionDir("stable"), "session.json"), "utf8"));
    expect(manifest.keys).toEqual([1, 2, 3, 4]);
    expect(manifest.nextKey).toBe(5);
  });

  it("two store instances on one directory see each other's writes", () => {
    const dir = freshDir();
    const a = new FsSessionStore({ dir });
    const b = new FsSessionStore({ dir });
    const session = makeSession("shared", 8);
    a.save(session);
    expect(b.has("shared")).toBe(true);
    expect(b.load("shared").session).toEqual(Session.parse(session));
    b.saveLoop("shared", { id: "from-b", messages: [] });
    b.saveBlock("shared", 0, block(session.loops[0]));
    const seen = a.load("shared").session;
    expect(loopIds(seen)).toEqual([0, "loop-1", 2, "loop-3", "from-b"]);
    expect(seen.loops[0].compaction).toEqual(block(session.loops[0]));
    a.delete("shared");
    expect(b.has("shared")).toBe(false);
    expect(b.list()).toEqual([]);
  });

  it("keeps hostile session ids inside its directory", () => {
    const parent = freshDir();
    const dir = path.join(parent, "store");
    const store = new FsSessionStore({ dir });
    const ids = ["../../etc", "a/b", "..", ".", "", "/abs/path", "C:\\Windows\\x", "a\u0000b", "-rf", "é/\ud800", "x".repeat(300)];
    ids.forEach((id, i) => store.save({ id, loops: [{ id: i, messages: [] }] }));
    // Nothing outside dir: parent holds only dir, and every session directory is a direct child.
    expect(fs.readdirSync(parent)).toEqual(["store"]);
    const children = fs.readdirSync(dir);
    expect(children).toHaveLength(ids.length);
    for (const name of children) {
      expect(name).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{0,39}-[0-9a-f]{16}$/);
    }
    expect(sessionDirName("../../etc")).toMatch(/^______etc-[0-9a-f]{16}$/);
    expect(sessionDirName("a/b")).not.toBe(sessionDirName("a_b"));
    ids.forEach((id, i) => expect(store.load(id).session).toEqual({ id, loops: [{ id: i, messages: [] }] }));
    expect(store.list()).toEqual([...ids].sort());
    store.delete("../../etc");
    expect(store.has("../../etc")).toBe(false);
    expect(fs.readdirSync(parent)).toEqual(["store"]);
    expect(fs.readdirSync(dir)).toHaveLength(ids.length - 1);
  });

  it("loads a loop without its overlay when the block file is corrupt, with a warning naming it", () => {
    const dir = freshDir();
    const store = new FsSessionStore({ dir, now: () => "2025-03-04T05:06:07.000Z" });
    const session = makeSession("cb", 9);
    store.save(session);
    const blockFile = path.join(store.sessionDir("cb"), "blocks", "1.json");
    fs.writeFileSync(blockFile, '{"keepFirst":{"startTurn":0,');
    const badShape = path.join(store.sessionDir("cb"), "blocks", "3.json");
    fs.writeFileSync(badShape, JSON.stringify({ createdAt: 5 }));
    const { session: loaded, warnings } = store.load("cb");
    expect(loaded.loops[1].compaction).toBeUndefined();
    expect(loaded.loops[3].compaction).toBeUndefined();
    expect(loaded.loops[1].messages).toEqual(session.loops[1].messages);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ type: "session_overlay_corrupt", at: "2025-03-04T05:06:07.000Z", sessionId: "cb", path: blockFile });
    expect((warnings[0] as { reason: string }).reason).toMatch(/not JSON/);
    expect(warnings[1]).toMatchObject({ type: "session_overlay_corrupt", path: badShape });
    expect((warnings[1] as { reason: string }).reason).toMatch(/createdAt/);
    // Setting the block again repairs it.
    store.saveBlock("cb", "loop-1", block(session.loops[1]));
    expect(store.load("cb").session.loops[1].compaction).toEqual(block(session.loops[1]));
  });

  it("throws E_SESSION_CORRUPT naming the file for a corrupt or missing loop file or manifest", () => {
    const dir = freshDir();
    const store = new FsSessionStore({ dir });
    store.save(makeSession("cl", 10));
    const sdir = store.sessionDir("cl");
    const loopFile = path.join(sdir, "loops", "2.json");
    const original = fs.readFileSync(loopFile);

    fs.writeFileSync(loopFile, original.subarray(0, original.length >> 1));
    let err = thrown(() => store.load("cl"), "E_SESSION_CORRUPT");
    expect(err.path).toBe(loopFile);
    expect(err.message).toContain(loopFile);
    expect(err.message).toMatch(/not JSON/);

    fs.writeFileSync(loopFile, JSON.stringify({ id: "loop-1", messages: [] }));
    expect(thrown(() => store.load("cl"), "E_SESSION_CORRUPT").message).toMatch(/holds loop "loop-1", session.json expects 2/);

    fs.writeFileSync(loopFile, Buffer.from([0x7b, 0xff, 0x7d]));
    expect(thrown(() => store.load("cl"), "E_SESSION_CORRUPT").message).toMatch(/not UTF-8/);

    fs.unlinkSync(loopFile);
    err = thrown(() => store.load("cl"), "E_SESSION_CORRUPT");
    expect(err.path).toBe(loopFile);
    expect(err.message).toMatch(/missing/);

    fs.writeFileSync(loopFile, original);
    expect(store.load("cl").session.loops).toHaveLength(4);

    const manifest = path.join(sdir, "session.json");
    fs.writeFileSync(manifest, JSON.stringify({ version: 1, id: "cl", loops: [0, 0], keys: [0, 1], nextKey: 2 }));
    err = thrown(() => store.load("cl"), "E_SESSION_CORRUPT");
    expect(err.path).toBe(manifest);
    expect(err.message).toMatch(/duplicate loop id/);
    // A save must not hand out keys an unreadable manifest may still reference.
    thrown(() => store.save(makeSession("cl", 10)), "E_SESSION_CORRUPT");
    thrown(() => store.list(), "E_SESSION_CORRUPT");

    fs.unlinkSync(manifest);
    expect(thrown(() => store.load("cl"), "E_SESSION_CORRUPT").path).toBe(manifest);
    expect(store.has("cl")).toBe(false);
    expect(store.list()).toEqual([]);
    store.delete("cl");
    expect(fs.readdirSync(dir)).toEqual([]);
    thrown(() => store.load("cl"), "E_SESSION_NOT_FOUND");
  });

  it("fails a write with E_STORE_WRITE naming the file, leaving no partial file and the old session loadable", () => {
    const dir = freshDir();
    const session = makeSession("wf", 11);
    new FsSessionStore({ dir }).save(session);
    const before = snapshot(dir);
    const failing = (match: (file: string) => boolean, op: "write" | "rename"): Partial<SessionFsOps> =>
      op === "write"
        ? {
            writeFileSync: (file, data, options) => {
              if (match(file)) {
                fs.writeFileSync(file, data.subarray(0, data.length >> 1), options); // a torn write, then the error
                throw osError("ENOSPC");
              }
              fs.writeFileSync(file, data, options);
            },
          }
        : {
            renameSync: (from, to) => {
              if (match(to)) throw osError("EXDEV");
              fs.renameSync(from, to);
            },
          };
    const changed: Session = { id: "wf", loops: session.loops.map((l) => ({ ...l, messages: l.messages.slice(1) })) };
    for (const [target, op] of [
      ["loops", "write"],
      ["blocks", "write"],
      ["session.json", "rename"],
      ["loops", "rename"],
    ] as const) {
      const sdir = new FsSessionStore({ dir }).sessionDir("wf");
      const match = (file: string) => path.relative(sdir, file).startsWith(target) || path.basename(file).startsWith(`.${target}`);
      const store = new FsSessionStore({ dir, fs: failing(match, op) });
      const err = thrown(() => store.save(changed), "E_STORE_WRITE");
      expect(err.message).toMatch(op === "write" ? /ENOSPC/ : /EXDEV/);
      const named = /cannot write (.*): /.exec(err.message)![1];
      expect(path.relative(sdir, named).startsWith(target), named).toBe(true);
      expect(path.basename(named).startsWith(".")).toBe(false);
      // No temp file left anywhere; the manifest was not reached, so the old session loads whole.
      const files = [...snapshot(dir).keys()];
      expect(
        files.filter((f) => path.basename(f).startsWith(".")),
        target,
      ).toEqual([]);
      expect(snapshot(dir).get([...before.keys()].find((f) => f.endsWith("session.json"))!)).toBe(
        before.get([...before.keys()].find((f) => f.endsWith("session.json"))!),
      );
      const reloaded = new FsSessionStore({ dir }).load("wf").session;
      expect(loopIds(reloaded)).toEqual(loopIds(session));
    }
    // saveLoop of a new loop: a failing manifest write leaves the chain as it was.
    const store = new FsSessionStore({ dir, fs: failing((f) => path.basename(f).startsWith(".session.json"), "write") });
    thrown(() => store.saveLoop("wf", { id: "late", messages: [] }), "E_STORE_WRITE");
    expect(loopIds(new FsSessionStore({ dir }).load("wf").session)).toEqual(loopIds(session));
  });

  it("rejects values JSON cannot hold before writing anything", () => {
    const dir = freshDir();
    const store = new FsSessionStore({ dir });
    const session = makeSession("j", 12);
    store.save(session);
    const before = snapshot(dir);
    const bad: Session = { id: "j", loops: [session.loops[0], { id: "x", messages: [{ id: "m", role: "user", parts: [], meta: { n: 1n } }] }] };
    expect(thrown(() => store.save(bad), "E_BAD_INPUT").path).toBe("session.loops[1]");
    expect(snapshot(dir)).toEqual(before);
  });
});
