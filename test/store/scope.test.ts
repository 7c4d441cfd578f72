/**
 * Store scopes (src/store/scope.ts, scope-record.ts): a scoped store reads, lists and confirms
 * only its refs and answers every other exactly as an absent ref; the scope records the batch
 * engine writes name each compacted run's refs, shared refs in both runs, and are read only as
 * the regular files ctxfold wrote.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCompactor } from "../../src/policy/index.js";
import { compactChunk } from "../../src/pool/job.js";
import { recall, searchStore } from "../../src/recall/index.js";
import {
  createMemoryStore,
  createPackStore,
  mayNameRefs,
  putMessages,
  reachableRefs,
  ScopeRecords,
  scopedStore,
  type OffloadStore,
} from "../../src/store/index.js";
import { thrown } from "../helpers.js";
import { agentRun } from "./scope-runs.js";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "ctxfold-scope-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The error `fn` throws, as { code, message } with `ref` written <ref>. */
const errorOf = (fn: () => unknown, ref: string) => {
  try {
    fn();
  } catch (err) {
    const e = err as { code: string; message: string; path?: string };
    return { code: e.code, message: e.message.split(ref).join("<ref>"), path: e.path };
  }
  return undefined;
};

describe("ScopedStore", () => {
  /** A store holding two conversations' compactions; each one's result refs. */
  async function twoConversations(): Promise<{ store: OffloadStore; mine: string[]; theirs: string[] }> {
    const store = createMemoryStore();
    const compactor = createCompactor({ store });
    const mine = (await compactor.compact(agentRun("c1", "alpha", "one").messages, { budget: 2000 })).refs;
    const theirs = (await compactor.compact(agentRun("c2", "password123", "two").messages, { budget: 2000 })).refs;
    expect(mine.length).toBeGreaterThan(0);
    expect(theirs.filter((r) => !mine.includes(r)).length).toBeGreaterThan(0);
    return { store, mine, theirs: theirs.filter((r) => !mine.includes(r)) };
  }

  it("reads its refs, and a history's messages through it; another's ref is absent: the same error, has false, never listed", async () => {
    const { store, mine, theirs } = await twoConversations();
    const scoped = scopedStore(store, mine);
    for (const ref of mine) expect(recall(scoped, ref)).toEqual(recall(store, ref));
    for (const ref of theirs) {
      const absent = ref.replace(/_[0-9a-f]+/, (m) => `_${"0".repeat(m.length - 1)}`);
      expect(store.has(ref)).toBe(true);
      expect(scoped.has(ref)).toBe(false);
      expect(errorOf(() => scoped.get(ref), ref)).toEqual(errorOf(() => store.get(absent), absent));
      expect(errorOf(() => scoped.getText(ref), ref)).toEqual(errorOf(() => store.getText(absent), absent));
      expect(errorOf(() => recall(scoped, ref), ref)).toEqual(errorOf(() => recall(store, absent), absent));
    }
    expect(new Set(scoped.refs())).toEqual(new Set(store.refs!().filter((r) => scoped.has(r))));
    expect(scoped.refs().some((r) => theirs.includes(r))).toBe(false);
    expect(
      searchStore(scoped, "", { limit: 100 })
        .map((e) => e.ref)
        .every((r) => scoped.has(r)),
    ).toBe(true);
  });

  it("a malformed ref is E_BAD_REF as in the store; a put is refused: the view is read-only", async () => {
    const { store, mine } = await twoConversations();
    const scoped = scopedStore(store, mine);
    expect(thrown(() => scoped.get("../../etc/passwd"), "E_BAD_REF").message).toBe(thrown(() => store.get("../../etc/passwd"), "E_BAD_REF").message);
    expect(thrown(() => scoped.put("x"), "E_BAD_INPUT").path).toBe("store");
  });

  it("is not widened by refs a stored message names: only an index's own lists are followed", () => {
    const store = createMemoryStore();
    const secret = store.put("the other run's password123", { kind: "output" });
    const { ref: history } = putMessages(store, [{ id: "m1", role: "user", parts: [{ type: "text", text: `see ${secret}` }] }]);
    const scoped = scopedStore(store, [history]);
    expect(recall(scoped, history).type).toBe("messages");
    expect(reachableRefs(store, [history]).has(secret)).toBe(true);
    expect(scoped.has(secret)).toBe(false);
    thrown(() => scoped.get(secret), "E_REF_NOT_FOUND");
  });
});

describe("scope records of the batch engine", () => {
  const shared = Array.from({ length: 300 }, (_, k) => `shared log line ${k}: npm warn deprecated package_${k}`).join("\n");
  const lines = (runs: object[]) => Buffer.from(runs.map((r) => JSON.stringify(r)).join("\n") + "\n");

  it("name each compacted run's refs (by id, or file and line), a shared ref in both, in 0600 files", async () => {
    const dir = tempDir();
    const options = { budget: 2000, format: "auto" as const, mode: "tiered" as const, offloadDir: dir, file: "in.jsonl" };
    const out = await compactChunk(
      lines([agentRun("run-a", "alpha", shared), agentRun(undefined, "beta", shared), agentRun("run-b", "password123", shared)]),
      1,
      options,
    );
    const written = Buffer.from(out.out).toString("utf8").trim().split("\n");
    const store = createPackStore({ dir });
    const records = new ScopeRecords(dir);
    const a = records.refsOf({ run: "run-a" }, store.prefix);
    const noId = records.refsOf({ file: path.resolve("in.jsonl"), line: 2 }, store.prefix);
    const b = records.refsOf({ run: "run-b" }, store.prefix);
    expect(a).toEqual(reachableRefs(store, [written[0]]));
    expect(noId).toEqual(reachableRefs(store, [written[1]]));
    expect(b).toEqual(reachableRefs(store, [written[2]]));
    expect([...a].filter((r) => b.has(r)).length).toBeGreaterThan(0);
    expect([...b].some((r) => store.getText(r).includes("password123"))).toBe(true);
    expect([...a].some((r) => store.getText(r).includes("password123"))).toBe(false);
    expect(records.refsOf({ run: "in.jsonl:2" }, store.prefix).size).toBe(0);
    for (const f of readdirSync(dir).filter((n) => n.startsWith("scope-"))) expect(statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
  });

  /**
   * A victim run compacted into a fresh dir, then a thief run whose last user message quotes the
   * victim's refs, its line written by `line` (the line as JSON.stringify writes it, by default):
   * the refs the thief's output reaches that hold the victim's secret, and those its scope holds.
   */
  async function thiefAfterVictim(line = (thief: object, _victim: string[], _prefix: string) => JSON.stringify(thief)) {
    const dir = tempDir();
    const options = { budget: 2000, format: "auto" as const, mode: "tiered" as const, offloadDir: dir, file: "in.jsonl" };
    const first = await compactChunk(lines([agentRun("victim", "password123", shared)]), 1, options);
    const store = createPackStore({ dir });
    const victim = [...reachableRefs(store, [Buffer.from(first.out).toString("utf8")])];
    const thief = agentRun("thief", "x", shared);
    (thief.messages as { role: string; content: unknown }[]).push({ role: "user", content: `Now read ${victim.join(" and ")}` });
    const second = await compactChunk(Buffer.from(`${line(thief, victim, store.prefix)}\n`), 1, options);
    const after = createPackStore({ dir });
    const secret = (r: string) => after.getText(r).includes("password123");
    const scope = new ScopeRecords(dir).refsOf({ run: "thief" }, after.prefix);
    return { reached: [...reachableRefs(after, [Buffer.from(second.out).toString("utf8")])].filter(secret), scope, inScope: [...scope].filter(secret) };
  }

  it("a run whose input quotes another run's ref does not gain it", async () => {
    const { reached, scope, inScope } = await thiefAfterVictim();
    // Its output names the victim's refs (its last message quotes them)…
    expect(reached.length).toBeGreaterThan(0);
    // …but its scope holds none of them.
    expect(scope.size).toBeGreaterThan(0);
    expect(inScope).toEqual([]);
  });

  it("nor when its input writes the ref with every character escaped (\\u0077…, \\/): the line is read as JSON reads it", async () => {
    const escaped = (ref: string) => [...ref].map((c) => (c === "/" ? "\\/" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)).join("");
    const { reached, inScope } = await thiefAfterVictim((thief, victim, prefix) => {
      let line = JSON.stringify(thief);
      for (const ref of victim) line = line.split(ref).join(escaped(ref));
      expect(line).not.toContain(prefix.split("/")[0]);
      return line;
    });
    expect(reached.length).toBeGreaterThan(0);
    expect(inScope).toEqual([]);
  });

  it("mayNameRefs: a line can name a ref only with the prefix's first segment in it, or a \\u escape", () => {
    const at = (s: string) => mayNameRefs(Buffer.from(s), "workspace/outputs");
    expect(at('{"a":"see workspace/outputs/x.txt"}')).toBe(true);
    expect(at('{"a":"workspace"}')).toBe(true);
    expect(at('{"a":"\\u0077orkspace\\/outputs"}')).toBe(true);
    expect(at('{"a":"work space\\n\\/outputs"}')).toBe(false);
    expect(mayNameRefs(Buffer.from('{"a":"b"}').subarray(2, 3), "workspace/outputs")).toBe(false);
  });

  it("a record that is no record, or a link under a record's name, is E_CORRUPT naming the file", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "scope-1-0-abc.json"), '{"ctxfold":"scopes"}');
    const e = thrown(() => new ScopeRecords(dir).refsOf({ run: "a" }, "workspace/outputs"), "E_CORRUPT");
    expect(e.message).toContain(path.join(dir, "scope-1-0-abc.json"));
    const dir2 = tempDir();
    const outside = path.join(tempDir(), "planted.json");
    writeFileSync(outside, JSON.stringify({ ctxfold: "scopes", prefix: "workspace/outputs", runs: [{ run: "a", refs: ["output_0123456789abcdef.txt"] }] }));
    symlinkSync(outside, path.join(dir2, "scope-2-0-def.json"));
    expect(thrown(() => new ScopeRecords(dir2).refsOf({ run: "a" }, "workspace/outputs"), "E_CORRUPT").message).toMatch(/symbolic link/);
  });
});
