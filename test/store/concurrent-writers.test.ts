/**
 * Writers in separate processes storing into one directory at the same time, with content that
 * collides under the hash that names it: every ref each writer returns must read back its own
 * bytes, in the per-file store (a name is claimed by link(), never replaced) and in the pack store
 * (a name is claimed in the directory's claim log before put returns). The collisions are forced
 * with an injected weak hash, the one way to make them cheap enough for a test; the second case
 * shows two real, different messages that collide under a truncated hash of the old kind get
 * distinct names from the store's default (SHA-256) naming.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { hashBytes } from "../../src/core/hash.js";
import { createFsStore, createMemoryStore, createPackStore, encodeText, type OffloadStoreOptions } from "../../src/store/index.js";
import { tempDirs } from "../helpers.js";

const kDistStore = pathToFileURL(fileURLToPath(new URL("../../dist/src/store/index.js", import.meta.url))).href;
const kDistHash = pathToFileURL(fileURLToPath(new URL("../../dist/src/core/hash.js", import.meta.url))).href;

const tmp = tempDirs("ctxfold-concurrent-");

/** The weak hashes a writer can be given: every input the same, or XXH64 cut to 20 bits. */
const kWeakHashes = {
  constant: () => 7n,
  xxh20: (bytes: Uint8Array) => hashBytes(bytes) & 0xfffffn,
} satisfies Record<string, NonNullable<OffloadStoreOptions["hash"]>>;
type WeakHash = keyof typeof kWeakHashes;

/**
 * A writer process for a series of trials: for each, it waits for the trial's go file (so both
 * writers start together), puts each message of its list into the trial's directory (flushing a
 * pack store every few puts, as the batch engine flushes per chunk), and prints the refs as one
 * JSON line. One process per writer for all the trials: a process's start costs far more than a
 * trial, and each trial has a store and a directory of its own.
 */
const kWriter = `
import { existsSync, readFileSync } from "node:fs";
import { createFsStore, createPackStore } from ${JSON.stringify(kDistStore)};
import { hashBytes } from ${JSON.stringify(kDistHash)};
const [kind, hashName, trialsFile] = process.argv.slice(2);
const hashes = { constant: () => 7n, xxh20: (bytes) => hashBytes(bytes) & 0xfffffn };
const hash = hashes[hashName];
const nap = new Int32Array(new SharedArrayBuffer(4));
for (const { dir, messages, go } of JSON.parse(readFileSync(trialsFile, "utf8"))) {
  // pack-spill: a pack store that keeps 4 claims in memory, the older in runs on disk.
  const store = kind === "fs" ? createFsStore({ dir, hash }) : createPackStore({ dir, hash, ...(kind === "pack-spill" ? { claimsInMemory: 4 } : {}) });
  while (!existsSync(go)) Atomics.wait(nap, 0, 0, 1);
  const refs = messages.map((m, i) => {
    const ref = store.put(m, { kind: "message", ext: "json" });
    if (i % 3 === 2) store.flush();
    return ref;
  });
  store.flush();
  process.stdout.write(JSON.stringify(refs) + "\\n");
}
`;

/** pack-spill: pack stores that keep 4 claims in memory, so that most of what they meet is in runs on disk. */
type Kind = "fs" | "pack" | "pack-spill";

function writerScript(): string {
  const file = path.join(tmp.root(), "writer.mjs");
  if (!fs.existsSync(file)) fs.writeFileSync(file, kWriter);
  return file;
}

/** One trial: a fresh directory, and each writer's list of messages. */
interface Trial {
  dir: string;
  lists: string[][];
}

/** A writer process's refs, one trial's list at a time, as it prints them. */
function refLines(child: ChildProcess, name: string): () => Promise<string[]> {
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return async () => {
    const line = await lines.next();
    if (line.done) throw new Error(`${name} exited ${child.exitCode ?? child.signalCode} before its refs: ${stderr}`);
    return JSON.parse(line.value as string) as string[];
  };
}

/**
 * Runs one writer process per message list, each trial at the same time in both, into the
 * trial's directory; checks each trial's refs with `check` before the next one starts.
 */
async function writeConcurrently(kind: Kind, hash: WeakHash, trials: Trial[], check: (trial: Trial, refs: string[][]) => void): Promise<void> {
  const children = trials[0].lists.map((_, w) => {
    const plan = trials.map((t) => ({ dir: t.dir, messages: t.lists[w], go: `${t.dir}.go` }));
    const file = path.join(tmp.root(), `${path.basename(trials[0].dir)}-writer-${w}.json`);
    fs.writeFileSync(file, JSON.stringify(plan));
    return spawn(process.execPath, [writerScript(), kind, hash, file], { stdio: ["ignore", "pipe", "pipe"] });
  });
  const writers = children.map((child, w) => refLines(child, `writer ${w}`));
  try {
    for (const trial of trials) {
      fs.writeFileSync(`${trial.dir}.go`, "");
      check(trial, await Promise.all(writers.map((next) => next())));
    }
  } finally {
    // A failed check leaves the writers waiting for the next trial's go file.
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}

/** A store reading `dir` as the writers named it (their weak hash verifies their names). */
function reader(kind: Kind, dir: string, hash: WeakHash) {
  return kind === "fs" ? createFsStore({ dir, hash: kWeakHashes[hash] }) : createPackStore({ dir, hash: kWeakHashes[hash] });
}

/** Every writer's refs read back its own messages, and different messages never share a ref. */
function expectOwnBytes(kind: Kind, dir: string, hash: WeakHash, lists: string[][], refs: string[][]): void {
  const store = reader(kind, dir, hash);
  const byRef = new Map<string, string>();
  lists.forEach((messages, w) => {
    messages.forEach((m, i) => {
      const ref = refs[w][i];
      expect(store.getText(ref), `writer ${w}, message ${i}, ${ref}`).toBe(m);
      expect(byRef.get(ref) ?? m, `${ref} named for two messages`).toBe(m);
      byRef.set(ref, m);
    });
  });
}

describe.each<Kind>(["fs", "pack", "pack-spill"])("two %s-store writers in separate processes, one directory, colliding content", (kind) => {
  it("every ref of each writer reads back its own bytes, over many trials of a fully colliding hash", async () => {
    const trials = Array.from({ length: 6 }, (_, trial): Trial => {
      const lists = ["a", "b"].map((w) =>
        Array.from({ length: 12 }, (_, i) => JSON.stringify({ role: "tool", content: `writer ${w}, output ${i}, trial ${trial}` })),
      );
      // Both writers also store one message they share: equal bytes meet under one name and stay one content.
      for (const list of lists) list.push(JSON.stringify({ role: "system", content: "the prompt both writers share" }));
      return { dir: tmp.fresh(), lists };
    });
    await writeConcurrently(kind, "constant", trials, ({ dir, lists }, refs) => expectOwnBytes(kind, dir, "constant", lists, refs));
  });
});

/**
 * Two real messages (tool results of the shape agents store) that collide under XXH64 cut to 20
 * bits, found by brute force over a counter in the text (~1,000 tries). A real collision of the
 * full 64-bit XXH64 takes minutes of CPU to find, too slow for a test: the 20-bit cut stands in
 * for it, and the store code that meets the collision is the same whatever the hash's width.
 */
function collidingMessages(): [string, string] {
  const seen = new Map<bigint, string>();
  for (let i = 0; ; i++) {
    const text = JSON.stringify({
      role: "tool",
      tool_call_id: `call_${i}`,
      content: `ls -la /srv/app\ntotal ${i}\n-rw-r--r-- 1 app app ${(i * 7919) % 100000} config.yaml\n`,
    });
    const h = kWeakHashes.xxh20(encodeText(text));
    const other = seen.get(h);
    if (other !== undefined) return [other, text];
    seen.set(h, text);
  }
}

describe("two real messages that collide under a truncated XXH64", () => {
  const [first, second] = collidingMessages();

  it("collide under the weak hash, yet get distinct refs under the store's default naming, each reading back its bytes", () => {
    expect(first).not.toBe(second);
    expect(kWeakHashes.xxh20(encodeText(first))).toBe(kWeakHashes.xxh20(encodeText(second)));
    for (const store of [createMemoryStore(), createFsStore({ dir: tmp.fresh() }), createPackStore({ dir: tmp.fresh() })]) {
      const a = store.put(first, { kind: "message", ext: "json" });
      const b = store.put(second, { kind: "message", ext: "json" });
      expect(a).not.toBe(b);
      expect(a.replace(/-\d+\./, ".")).not.toBe(b.replace(/-\d+\./, ".")); // different names, not a chain
      store.flush();
      expect([store.getText(a), store.getText(b)]).toEqual([first, second]);
    }
  });

  it.each<Kind>(["fs", "pack"])(
    "stored by two %s-store writers in separate processes under the weak hash, each reads back its own, over many trials",
    async (kind) => {
      const trials = Array.from({ length: 6 }, (): Trial => ({ dir: tmp.fresh(), lists: [[first], [second]] }));
      await writeConcurrently(kind, "xxh20", trials, ({ dir, lists }, refs) => {
        expectOwnBytes(kind, dir, "xxh20", lists, refs);
        expect(refs[0][0]).not.toBe(refs[1][0]);
      });
    },
  );
});
