/**
 * `ctxfold mcp --run` / `--run-line` through the MCP SDK's own client: two `ctxfold compact`
 * processes write three runs into one offload directory at the same time (one run holding
 * `password123`, two sharing a tool output); a server confined to one run recalls that run's
 * refs, answers every other run's ref exactly as a ref that is not stored, and its search neither
 * lists nor counts them; a ref two runs share is in both runs' scopes.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPackStore, reachableRefs, type PackOffloadStore } from "../../src/store/index.js";
import { runCli } from "../../src/cli/main.js";
import { fakeIo } from "./fake-io.js";
import { agentRun } from "../store/scope-runs.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

type Answer = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

let dir: string;
let offload: string;
let store: PackOffloadStore;
/** Every ref each run's compacted output reaches. */
const reach: Record<"a" | "line" | "b", Set<string>> = { a: new Set(), line: new Set(), b: new Set() };

async function connect(args: string[]): Promise<{ client: Client; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [kCli, "mcp", "--offload-dir", offload, ...args], stderr: "pipe", cwd: dir });
  const client = new Client({ name: "ctxfold-scope-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Answer;
/** A tool error with the ref it names replaced, to compare its shape with another's. */
const shape = (a: Answer, ref: string) =>
  JSON.stringify({ content: a.content, error: a.structuredContent?.error, isError: a.isError }).split(ref.split("/").pop()!).join("<ref>");
/** A well-formed ref of the same kind that nothing stores. */
const absentLike = (ref: string) => ref.replace(/_[0-9a-f]+/, (m) => `_${"0".repeat(m.length - 1)}`);

describe("ctxfold mcp confined to one run", () => {
  let a: Awaited<ReturnType<typeof connect>>;
  let everything: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "ctxfold-mcp-scope-"));
    offload = path.join(dir, "offload");
    const shared = Array.from({ length: 300 }, (_, k) => `shared log line ${k}: npm warn deprecated package_${k}`).join("\n");
    writeFileSync(
      path.join(dir, "a.jsonl"),
      `${JSON.stringify(agentRun("run-a", "alpha-secret-1", shared))}\n${JSON.stringify(agentRun(undefined, "nobody-secret", shared))}\n`,
    );
    writeFileSync(path.join(dir, "b.jsonl"), `${JSON.stringify(agentRun("run-b", "password123", shared))}\n`);
    // Two processes writing into one offload directory at the same time.
    await Promise.all(
      ["a", "b"].map((f) =>
        promisify(execFile)(
          process.execPath,
          [kCli, "compact", `${f}.jsonl`, "-o", `${f}.out.jsonl`, "--budget", "2000", "--offload-dir", offload, "--workers", "1", "--quiet"],
          { cwd: dir },
        ),
      ),
    );
    store = createPackStore({ dir: offload });
    const [lineA, lineNoId] = readFileSync(path.join(dir, "a.out.jsonl"), "utf8").trim().split("\n");
    const lineB = readFileSync(path.join(dir, "b.out.jsonl"), "utf8").trim();
    for (const [k, line] of [
      ["a", lineA],
      ["line", lineNoId],
      ["b", lineB],
    ] as const)
      reach[k] = reachableRefs(store, [line]);
    for (const refs of Object.values(reach)) expect(refs.size).toBeGreaterThan(3);
    [a, everything] = await Promise.all([connect(["--run", "run-a"]), connect([])]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.close(), everything?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("by default the server reaches every run stored in the directory: another run's password is found", async () => {
    const s = await call(everything.client, "search", { query: "password123", limit: 100 });
    expect((s.structuredContent!.entries as unknown[]).length).toBeGreaterThan(0);
    for (const ref of reach.b) expect((await call(everything.client, "recall", { ref })).isError).toBeFalsy();
  });

  it("recalls every ref its run's output reaches, byte for byte", async () => {
    for (const ref of reach.a) {
      const r = await call(a.client, "recall", { ref });
      expect(r.isError, r.content[0].text).toBeFalsy();
      if (!/\/(history|message)_/.test(ref)) expect(r.content[0].text).toBe(store.getText(ref));
    }
  });

  it("answers another run's ref exactly as one not stored: same code, same message, whole ref or bare name, any offset", async () => {
    const others = [...reach.b, ...reach.line].filter((r) => !reach.a.has(r));
    expect(others.length).toBeGreaterThan(5);
    for (const ref of others) {
      const absent = absentLike(ref);
      expect(store.has(absent)).toBe(false);
      for (const [given, missing] of [
        [ref, absent],
        [ref.split("/").pop()!, absent.split("/").pop()!],
      ]) {
        for (const offset of [undefined, 1]) {
          const args = (r: string) => ({ ref: r, ...(offset === undefined ? {} : { offset }) });
          const out = await call(a.client, "recall", args(given));
          const none = await call(a.client, "recall", args(missing));
          expect(out.isError).toBe(true);
          expect((out.structuredContent!.error as { code: string }).code).toBe("E_REF_NOT_FOUND");
          expect(shape(out, ref)).toBe(shape(none, absent));
        }
      }
    }
  });

  it("search neither lists nor counts another run's entries", async () => {
    const secret = await call(a.client, "search", { query: "password123", limit: 100 });
    const nothing = await call(a.client, "search", { query: "no-such-word-anywhere", limit: 100 });
    expect(secret).toEqual(nothing);
    expect(secret.structuredContent!.entries).toEqual([]);
    const all = await call(a.client, "search", { query: "", limit: 100 });
    const listed = (all.structuredContent!.entries as { ref: string }[]).map((e) => e.ref);
    expect(new Set(listed)).toEqual(new Set([...reach.a].filter((r) => store.has(r))));
    // The run's own secret is found.
    expect((await call(a.client, "search", { query: "alpha-secret-1" })).structuredContent!.entries).not.toEqual([]);
  });

  it("a ref two runs share (the same bytes stored once) is in both runs' scopes", async () => {
    const shared = [...reach.a].filter((r) => reach.b.has(r));
    expect(shared.length).toBeGreaterThan(0);
    const b = await connect(["--run", "run-b"]);
    try {
      for (const ref of shared) {
        const fromA = await call(a.client, "recall", { ref });
        const fromB = await call(b.client, "recall", { ref });
        expect(fromA.isError).toBeFalsy();
        expect(fromB).toEqual(fromA);
      }
      // And b reaches none of a's own refs.
      for (const ref of [...reach.a].filter((r) => !reach.b.has(r))) expect((await call(b.client, "recall", { ref })).isError).toBe(true);
    } finally {
      await b.close();
    }
  });

  it("--run-line confines to a run without an id, by its input file and line", async () => {
    const line = await connect(["--run-line", "a.jsonl:2"]);
    try {
      for (const ref of reach.line) expect((await call(line.client, "recall", { ref })).isError).toBeFalsy();
      for (const ref of [...reach.a].filter((r) => !reach.line.has(r))) expect((await call(line.client, "recall", { ref })).isError).toBe(true);
      expect((await call(line.client, "search", { query: "alpha-secret-1" })).structuredContent!.entries).toEqual([]);
    } finally {
      await line.close();
    }
  });

  it("a run compacted after the server started is found: records are read again when the directory changes", async () => {
    const later = await connect(["--run", "run-c"]);
    try {
      expect((await call(later.client, "search", { query: "", limit: 100 })).structuredContent!.entries).toEqual([]);
      writeFileSync(path.join(dir, "c.jsonl"), `${JSON.stringify(agentRun("run-c", "gamma", "late output"))}\n`);
      await promisify(execFile)(
        process.execPath,
        [kCli, "compact", "c.jsonl", "-o", "c.out.jsonl", "--budget", "2000", "--offload-dir", offload, "--workers", "1", "--quiet"],
        { cwd: dir },
      );
      const refs = reachableRefs(createPackStore({ dir: offload }), [readFileSync(path.join(dir, "c.out.jsonl"), "utf8")]);
      expect(refs.size).toBeGreaterThan(3);
      for (const ref of refs) expect((await call(later.client, "recall", { ref })).isError).toBeFalsy();
      for (const ref of [...reach.a].filter((r) => !refs.has(r))) expect((await call(later.client, "recall", { ref })).isError).toBe(true);
    } finally {
      await later.close();
    }
  });

  it("a run no record names reaches nothing", async () => {
    const none = await connect(["--run", "run-zzz"]);
    try {
      expect((await call(none.client, "search", { query: "", limit: 100 })).structuredContent!.entries).toEqual([]);
      const ref = [...reach.a][0];
      expect(shape(await call(none.client, "recall", { ref }), ref)).toBe(shape(await call(none.client, "recall", { ref: absentLike(ref) }), absentLike(ref)));
    } finally {
      await none.close();
    }
  });
});

describe("ctxfold mcp --run: its command line", () => {
  it("bad scope flags are exit 2 naming the flag", async () => {
    for (const [args, message] of [
      [["--run", "a", "--run-line", "f:1"], "--run and --run-line"],
      [["--run", ""], "--run: expected a run's id"],
      [["--run-line", "f"], "--run-line: expected FILE:LINE"],
      [["--run-line", "f:0"], "--run-line: expected FILE:LINE"],
    ] as const) {
      const f = fakeIo();
      expect(await runCli(["mcp", "--offload-dir", "x", ...args], f.io)).toBe(2);
      expect(f.stderr()).toContain(message);
    }
  });
});
