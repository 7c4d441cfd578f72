import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../src/model/schema.js";
import { kDefaultSearchLimit, searchStore } from "../../src/recall/index.js";
import { createFsStore, createMemoryStore, createPackStore, putMessages, type OffloadStore } from "../../src/store/index.js";
import { thrown } from "../helpers.js";

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "ctxfold-search-"));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const user = (id: string, text: string): Message => ({ id, role: "user", parts: [{ type: "text", text }] });

describe("searchStore", () => {
  it("ranks by distinct terms matched, then by occurrences, then store order; leaves out what matches nothing", () => {
    const store = createMemoryStore();
    const both = store.put("\n  Traceback: KeyError in parser.py\nraise KeyError(key)\n", { kind: "shell", ext: "log" });
    const once = store.put("parser.py:12: def parse(text):", { kind: "read", ext: "py" });
    const many = store.put("parser.py parser.py parser.py", { kind: "read", ext: "py" });
    store.put("nothing relevant here", { kind: "output" });
    const found = searchStore(store, "KEYERROR parser.py");
    expect(found.map((e) => e.ref)).toEqual([both, many, once]);
    expect(found[0]).toEqual({
      ref: both,
      kind: "shell",
      size: store.get(both).length,
      firstLine: "Traceback: KeyError in parser.py",
      match: "Traceback: KeyError in parser.py",
      terms: 2,
    });
    expect(found[2]).toMatchObject({ terms: 1, firstLine: "parser.py:12: def parse(text):" });
  });

  it("matches the ref too: a kind, or the start of a hash", () => {
    const store = createMemoryStore();
    const shell = store.put("exit 0", { kind: "shell", ext: "log" });
    store.put("exit 0\n", { kind: "read" });
    expect(searchStore(store, "shell").map((e) => e.ref)).toEqual([shell]);
    const hash = shell.split("_").pop()!.slice(0, 8);
    expect(searchStore(store, hash).map((e) => e.ref)).toEqual([shell]);
    expect(searchStore(store, "shell")[0]).not.toHaveProperty("match");
  });

  it("an empty query lists every entry in store order; limit bounds the answer (20 by default)", () => {
    const store = createMemoryStore();
    const refs = Array.from({ length: 30 }, (_, i) => store.put(`output ${i}`));
    expect(searchStore(store, "").map((e) => e.ref)).toEqual(refs.slice(0, kDefaultSearchLimit));
    expect(searchStore(store, "  ", { limit: 30 }).map((e) => e.ref)).toEqual(refs);
    expect(searchStore(store, "output", { limit: 3 })).toHaveLength(3);
  });

  it("shows a stored message by its role and text, a history by how many messages it names", () => {
    const store = createMemoryStore();
    const { ref, refs } = putMessages(store, [user("m1", "\nplease fix the flaky test\nthanks"), user("m2", "and the docs")]);
    const found = searchStore(store, "flaky");
    expect(found).toEqual([
      {
        ref: refs[0],
        kind: "message",
        size: store.get(refs[0]).length,
        firstLine: "user: please fix the flaky test",
        match: "please fix the flaky test",
        terms: 1,
      },
    ]);
    // JSON keys every message shares do not match; a history matches by its ref.
    expect(searchStore(store, "parts")).toEqual([]);
    expect(searchStore(store, "history")).toMatchObject([{ ref, kind: "history", firstLine: "2 messages" }]);
  });

  it("searches every layout: per-file stores and packs", () => {
    const dir = path.join(root, "layouts");
    const perFile = createFsStore({ dir });
    const a = perFile.put("alpha in a file");
    const pack = createPackStore({ dir });
    const b = pack.put("alpha in a pack");
    pack.flush();
    expect(
      searchStore(createPackStore({ dir }), "alpha")
        .map((e) => e.ref)
        .sort(),
    ).toEqual([a, b].sort());
    expect(searchStore(perFile, "alpha").map((e) => e.ref)).toEqual([a]);
  });

  it("reads through verified reads: a tampered entry fails the search with E_CORRUPT naming its file", () => {
    const dir = path.join(root, "tampered");
    const store = createFsStore({ dir });
    store.put("fine");
    const ref = store.put("will be changed");
    fs.writeFileSync(store.pathOf(ref), "was changed!!!!");
    const err = thrown(() => searchStore(createFsStore({ dir }), "changed"), "E_CORRUPT");
    expect(err.message).toContain(store.pathOf(ref));
  });

  it("bad input: typed errors naming it", () => {
    const store = createMemoryStore();
    expect(thrown(() => searchStore(store, 7 as unknown as string), "E_BAD_INPUT").path).toBe("query");
    for (const limit of [0, -1, 2.5, "3"]) expect(thrown(() => searchStore(store, "x", { limit: limit as number }), "E_BAD_INPUT").path).toBe("limit");
    const unlisted: OffloadStore = { prefix: "p", put: () => "p/x", get: () => new Uint8Array(), getText: () => "", has: () => false, flush: () => {} };
    expect(thrown(() => searchStore(unlisted, "x"), "E_BAD_INPUT").path).toBe("store");
  });
});
