/**
 * `ctxfold mcp` driven by the MCP SDK's own client over stdio, on an offload store made by
 * really compacting dev-corpus runs (the library's pack store, and `ctxfold compact`): the tools are listed, a ref the
 * compacted output names comes back byte for byte (a large one page by page), a history ref
 * comes back in OpenAI Chat, Anthropic and AI SDK formats, valid and equal to the removed
 * messages, and unknown refs, other stores' refs, offsets out of range and a tampered pack are
 * typed tool errors from a server that keeps answering.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kAdapters, type Format } from "../../src/adapters/index.js";
import type { Message, Part } from "../../src/model/schema.js";
import { createPackStore, getMessages, refPattern, type PackOffloadStore } from "../../src/store/index.js";
import { createCompactor } from "../../src/policy/index.js";
import { validate } from "../../src/validate/index.js";
import { corpusLines } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";
import { runCli } from "../../src/cli/main.js";
import { fakeIo } from "./fake-io.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
/** Two openhands runs with tool outputs over 16 KiB and a tau-bench run (lines of the dev corpus). */
const kRuns = [125, 127, 133];

type Answer = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

let dir: string;
let offload: string;
let store: PackOffloadStore;
let runs: { messages: unknown[] }[];
/** Refs the compacted outputs name: content refs (at 32k) and history refs (at 8k), with the run each is of. */
let contentRefs: string[];
let histories: { ref: string; run: number }[];

/** A client connected to `ctxfold mcp` over `args`; its stderr and the errors it saw are collected. */
async function connect(args: string[]): Promise<{ client: Client; stderr: () => string; errors: Error[]; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [kCli, "mcp", ...args], stderr: "pipe", cwd: dir });
  let stderr = "";
  transport.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "ctxfold-test", version: "1.0.0" });
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, stderr: () => stderr, errors, close: () => client.close() };
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Answer;

/** The refs of the store's prefix that a compacted output names. */
const refsIn = (text: string) => [...new Set(text.match(refPattern("workspace/outputs")) ?? [])];

/** Every page of `ref`, following `next`. */
async function allPages(client: Client, args: Record<string, unknown>): Promise<Answer[]> {
  const out: Answer[] = [];
  let offset: unknown = 0;
  while (offset !== undefined) {
    const a = await call(client, "recall", { ...args, offset });
    expect(a.isError, a.content[0]?.text).toBeFalsy();
    out.push(a);
    offset = a.structuredContent?.next;
  }
  return out;
}

/** A message list as (side, part) pairs: what a provider format must keep, whatever it merges or splits. */
function projection(messages: readonly Message[]): unknown[] {
  const json = (s: string) => {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      return s;
    }
  };
  const part = (p: Part) => {
    switch (p.type) {
      case "text":
        return { text: p.text };
      case "tool-call":
        return { call: p.id, name: p.name, args: json(p.args) };
      case "tool-result":
        return { result: p.callId, content: p.content.map((c) => (c.type === "text" ? c.text : c.type)).join("") };
      default:
        return { type: p.type };
    }
  };
  return messages.flatMap((m) => m.parts.map((p) => ({ role: m.role, ...part(p) })));
}

describe.skipIf(!hasCorpus)(`ctxfold mcp${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  let server: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "ctxfold-mcp-"));
    offload = path.join(dir, "offload");
    const lines = corpusLines();
    runs = kRuns.map((i) => JSON.parse(lines[i]) as { messages: unknown[] });
    writeFileSync(path.join(dir, "runs.jsonl"), kRuns.map((i) => lines[i]).join("\n") + "\n");
    // Two compactions into one offload directory, each writing its pack: the library at 32k with
    // a target of 0.3, where the outputs keep observations with the refs of the full outputs;
    // then `ctxfold compact` at 8k, where older steps go whole, behind history refs.
    const packs = createPackStore({ dir: offload });
    const compactor = createCompactor({ store: packs, targetRatio: 0.3 });
    const outputs: string[] = [];
    for (const run of runs) outputs.push(JSON.stringify((await compactor.compact(run.messages, { budget: 32_000, format: "openai-chat" })).messages));
    packs.flush();
    const r = spawnSync(
      process.execPath,
      [kCli, "compact", "runs.jsonl", "-o", "out-8000.jsonl", "--budget", "8000", "--offload-dir", offload, "--workers", "1", "--quiet"],
      { cwd: dir, encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    store = createPackStore({ dir: offload });
    contentRefs = refsIn(outputs.join("\n")).filter((r) => !r.includes("/history_"));
    histories = readFileSync(path.join(dir, "out-8000.jsonl"), "utf8")
      .trim()
      .split("\n")
      .flatMap((line, run) =>
        refsIn(line)
          .filter((r) => r.includes("/history_"))
          .map((ref) => ({ ref, run })),
      );
    expect(contentRefs.length).toBeGreaterThan(2);
    expect(histories.length).toBeGreaterThan(1);
    server = await connect(["--offload-dir", offload]);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists its two tools with their input schemas", async () => {
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["recall", "search"]);
    const recall = tools.find((t) => t.name === "recall")!;
    expect(Object.keys(recall.inputSchema.properties ?? {}).sort()).toEqual(["format", "offset", "ref"]);
    expect(recall.inputSchema.required).toEqual(["ref"]);
    expect(recall.description).toMatch(/ref/);
  });

  it("recalls each ref the compacted output names: the original bytes, as the pack store holds them", async () => {
    for (const ref of contentRefs) {
      const pages = await allPages(server.client, { ref });
      const text = pages.map((p) => p.content[0].text).join("");
      expect(Buffer.from(text, "utf8").equals(Buffer.from(store.get(ref)))).toBe(true);
      expect(pages[0].structuredContent).toMatchObject({ type: "text", ref, kind: "output", offset: 0, size: store.get(ref).length });
    }
  });

  it("pages a ref larger than a page: every page but the last says where the next starts", async () => {
    const large = contentRefs.filter((r) => store.get(r).length > 16 * 1024);
    expect(large.length).toBeGreaterThan(0);
    for (const ref of large) {
      const pages = await allPages(server.client, { ref });
      expect(pages.length).toBe(Math.ceil(store.get(ref).length / (16 * 1024)));
      for (const [i, p] of pages.entries()) {
        const last = i === pages.length - 1;
        expect(p.content).toHaveLength(last ? 1 : 2);
        if (!last) expect(p.content[1].text).toContain(`"offset": ${String(p.structuredContent!.next)}`);
      }
    }
  });

  it("a history ref comes back in OpenAI Chat, Anthropic and AI SDK formats: valid, and the messages compaction removed", async () => {
    for (const { ref, run } of histories) {
      const removed = getMessages(store, ref);
      for (const format of ["openai-chat", "anthropic", "ai-sdk"] as Format[]) {
        const pages = await allPages(server.client, { ref, format });
        const wire = pages.flatMap((p) => JSON.parse(p.content[0].text) as unknown[]);
        expect(pages[0].structuredContent).toMatchObject({ type: "messages", format, count: removed.length });
        const back = kAdapters[format].parse(format === "anthropic" ? { messages: wire } : wire);
        // Valid by every rule of the format, but that a history starts with the assistant's turn:
        // it continues a conversation after its task (recalled as a tool's result, not sent as a request).
        expect(validate(back, format).issues.filter((i) => i.code !== "FIRST_NOT_USER")).toEqual([]);
        for (const p of pages) {
          const page = JSON.parse(p.content[0].text) as unknown[];
          const own = kAdapters[format].parse(format === "anthropic" ? { messages: page } : page);
          expect(validate(own, format).issues.filter((i) => i.code !== "FIRST_NOT_USER")).toEqual([]);
        }
        expect(projection(back)).toEqual(projection(removed));
        // In OpenAI Chat, the run's own messages, byte for byte (ids m<i> name their place in the run).
        if (format === "openai-chat") expect(wire).toEqual(removed.map((m) => runs[run].messages[Number(m.id.slice(1))]));
      }
    }
  });

  it("search finds refs by words of their content", async () => {
    const ref = contentRefs.find((r) => store.get(r).length > 16 * 1024)!;
    const word = store
      .getText(ref)
      .split(/\s+/)
      .find((w) => /^[A-Za-z_]{8,}$/.test(w))!;
    const a = await call(server.client, "search", { query: word, limit: 50 });
    expect(a.isError).toBeFalsy();
    const entries = a.structuredContent!.entries as { ref: string; kind: string; size: number }[];
    expect(entries.map((e) => e.ref)).toContain(ref);
    expect(a.content[0].text).toContain(ref);
  });

  it("bad input is a typed tool error, and the server goes on answering", async () => {
    const ref = contentRefs[0];
    const size = store.get(ref).length;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ref: "workspace/outputs/output_0123456789abcdef.txt" }, "E_REF_NOT_FOUND", /output_0123456789abcdef\.txt.*in /],
      [{ ref: `another/store/${ref.split("/").pop()}` }, "E_BAD_REF", /another store.*"workspace\/outputs\/"/],
      [{ ref: "../../etc/passwd" }, "E_BAD_REF", /not a ref/],
      [{ ref, offset: size }, "E_BAD_INPUT", /past the end/],
      [{ ref: histories[0].ref, offset: 10_000 }, "E_BAD_INPUT", /past the last message/],
    ];
    for (const [args, code, message] of cases) {
      const a = await call(server.client, "recall", args);
      expect(a.isError).toBe(true);
      expect(a.content[0].text.startsWith(`${code}: `), a.content[0].text).toBe(true);
      expect(a.content[0].text).toMatch(message);
      expect((a.structuredContent!.error as { code: string }).code).toBe(code);
    }
    expect((await call(server.client, "recall", { ref, offset: size })).structuredContent!.error).toMatchObject({ path: "offset" });
    // Arguments the schema refuses: the SDK's own tool error.
    expect((await call(server.client, "recall", { offset: 2 })).isError).toBe(true);
    expect((await call(server.client, "recall", { ref })).content[0].text).toBe(store.getText(ref));
  });

  it("a tampered pack: E_CORRUPT naming the pack, from recall and from search", async () => {
    const copy = path.join(dir, "tampered");
    cpSync(offload, copy, { recursive: true });
    const ref = contentRefs[0];
    const name = ref.split("/").pop()!;
    const idx = readdirSync(copy)
      .filter((f) => f.endsWith(".idx"))
      .find((f) => readFileSync(path.join(copy, f), "utf8").includes(`"${name}"`))!;
    const line = readFileSync(path.join(copy, idx), "utf8")
      .split("\n")
      .find((l) => l.startsWith(`["${name}"`))!;
    const [, offset] = JSON.parse(line) as [string, number, number];
    const pack = path.join(copy, idx.replace(/\.idx$/, ".bin"));
    const bytes = readFileSync(pack);
    bytes[offset + 3] ^= 0x01;
    writeFileSync(pack, bytes);
    const tampered = await connect(["--offload-dir", copy]);
    try {
      const a = await call(tampered.client, "recall", { ref });
      expect(a.isError).toBe(true);
      expect(a.content[0].text).toMatch(/^E_CORRUPT: /);
      expect(a.content[0].text).toContain(pack);
      const s = await call(tampered.client, "search", { query: "output" }); // every output ref matches by its kind: each is read
      expect(s.isError).toBe(true);
      expect(s.content[0].text).toMatch(/^E_CORRUPT: /);
      // Other refs still resolve.
      expect((await call(tampered.client, "recall", { ref: contentRefs[1] })).content[0].text).toBe(store.getText(contentRefs[1]));
    } finally {
      await tampered.close();
    }
  });

  it("writes nothing but protocol to stdout (the client saw no stray line) and one line to stderr", () => {
    expect(server.errors).toEqual([]);
    expect(server.stderr().trim().split("\n")).toEqual([`ctxfold mcp: serving the refs stored in ${offload} over stdio (tools: recall, search)`]);
  });
});

describe("ctxfold mcp: its command line", () => {
  it("bad usage is exit 2 naming the flag, before any server starts", async () => {
    for (const [args, message] of [
      [[], "--offload-dir DIR is required"],
      [["--offload-dir", "x", "--format", "auto"], "--format: name the format"],
      [["--offload-dir", "x", "--format", "yaml"], "--format: one of"],
      [["--offload-dir", "x", "--max-bytes", "100"], "--max-bytes: expected an integer of at least 256"],
      [["--offload-dir", "x", "extra"], "unknown arguments: extra"],
    ] as const) {
      const f = fakeIo();
      expect(await runCli(["mcp", ...args], f.io)).toBe(2);
      expect(f.stderr()).toContain(message);
      expect(f.stdout()).toBe("");
    }
  });

  it("ends with its client: stdin closed, exit 0, nothing on stdout; a directory not made yet is no error at start", () => {
    const missing = path.join(tmpdir(), `ctxfold-mcp-none-${process.pid}`);
    const r = spawnSync(process.execPath, [kCli, "mcp", "--offload-dir", missing], { input: "", encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("ctxfold mcp: serving the refs stored in");
  });
});
