/**
 * `ctxfold mcp` under hostile load: a 30 MB request line is answered with a JSON-RPC error and
 * the server goes on answering; a line that is not JSON is a parse error, not the end; and many
 * concurrent searches do not hold back recalls sent after them (answered before the searches
 * are all done), through the MCP SDK's own client.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPackStore } from "../../src/store/index.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

let dir: string;
let offload: string;
/** Stored texts, by ref. */
const texts = new Map<string, string>();

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-mcp-limits-"));
  offload = path.join(dir, "offload");
  const store = createPackStore({ dir: offload });
  for (let i = 0; i < 400; i++) {
    const text = Array.from({ length: 60 }, (_, k) => `entry ${i} line ${k}: build log of module_${k} in package_${i % 17}`).join("\n");
    texts.set(store.put(text, { kind: "output", ext: "log" }), text);
  }
  store.flush();
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Response = { id: number | string | null; result?: { content: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } };

describe("ctxfold mcp: request lines", () => {
  it("answers a 30 MB request with an error naming the limit, and the requests after it as usual", async () => {
    const server = spawn(process.execPath, [kCli, "mcp", "--offload-dir", offload], { stdio: ["pipe", "pipe", "pipe"] });
    const responses: Response[] = [];
    let pending = "";
    let waiting: { ids: (number | string | null)[]; resolve: () => void } | undefined;
    const check = () => {
      if (waiting?.ids.every((id) => responses.some((r) => r.id === id))) waiting.resolve();
    };
    server.stdout.on("data", (d: Buffer) => {
      pending += d.toString("utf8");
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        responses.push(JSON.parse(pending.slice(0, nl)) as Response);
        pending = pending.slice(nl + 1);
      }
      check();
    });
    let stderr = "";
    server.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)));
    // Every response to `ids`, or the server's exit code if it ends first.
    const until = (ids: (number | string | null)[]) =>
      Promise.race([
        new Promise<void>((resolve) => {
          waiting = { ids, resolve };
          check();
        }),
        exited.then((code) => Promise.reject(new Error(`the server exited (code ${String(code)}) before answering ${JSON.stringify(ids)}`))),
      ]);
    server.stdin.on("error", () => undefined); // a server that died: `until` says so
    const send = (line: string) =>
      new Promise<void>((resolve) => {
        if (server.stdin.write(`${line}\n`)) return resolve();
        server.stdin.once("drain", resolve);
        server.stdin.once("close", resolve);
      });
    const [ref, text] = [...texts][0];
    const recallLine = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "recall", arguments: { ref } } });

    await send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    );
    await until([1]);
    await send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    // The SDK's client writes the id last; a 30 MB query.
    await send(JSON.stringify({ jsonrpc: "2.0", method: "tools/call", params: { name: "search", arguments: { query: "x".repeat(30 * 2 ** 20) } }, id: 2 }));
    await send(recallLine(3));
    // 2 MB that is no JSON at all (no id to find), then a short line that is no JSON (a key in it), then a request.
    await send("y".repeat(2 * 2 ** 20));
    await send(`{"api_key": sk-mcpLeak8841`);
    await send(recallLine(4));
    await until([2, 3, 4]);
    server.stdin.end();
    expect(await exited).toBe(0);

    const byId = (id: number) => responses.find((r) => r.id === id)!;
    expect(byId(2).error).toMatchObject({ code: -32600 });
    expect(byId(2).error!.message).toMatch(/31457\d{3} bytes is over this server's limit of 1048576 bytes/);
    for (const id of [3, 4]) expect(byId(id).result!.content[0].text).toBe(text);
    const nulls = responses.filter((r) => r.id === null).map((r) => r.error!.code);
    expect(nulls).toEqual([-32600, -32700]);
    // The log says why the line was refused, never what it held.
    expect(stderr).toContain("a line that is not a JSON-RPC message (Unexpected character at position 12)");
    expect(stderr).not.toContain("sk-mcp");
  }, 60_000);
});

describe("ctxfold mcp: searches and recalls", () => {
  it("100 concurrent searches do not hold back recalls sent after them: every recall is answered before the searches are done", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [kCli, "mcp", "--offload-dir", offload], stderr: "pipe" });
    const client = new Client({ name: "ctxfold-limits-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const order: string[] = [];
      const refs = [...texts.keys()].slice(0, 100);
      const searches = Array.from({ length: 100 }, (_, i) =>
        client.callTool({ name: "search", arguments: { query: `module_${i % 60} package_${i % 17}`, limit: 100 } }).then((a) => (order.push("search"), a)),
      );
      const recalls = refs.map((ref) => client.callTool({ name: "recall", arguments: { ref } }).then((a) => (order.push("recall"), a)));
      const answers = await Promise.all(recalls);
      const found = await Promise.all(searches);
      answers.forEach((a, i) => expect((a as { content: { text: string }[] }).content[0].text).toBe(texts.get(refs[i])));
      for (const s of found) expect((s as { structuredContent: { entries: unknown[] } }).structuredContent.entries.length).toBeGreaterThan(0);
      expect(order.filter((o) => o === "recall")).toHaveLength(100);
      // The last recall came back while searches were still to be answered.
      const lastRecall = order.lastIndexOf("recall");
      expect(order.slice(lastRecall + 1).filter((o) => o === "search").length).toBeGreaterThan(50);
    } finally {
      await client.close();
    }
  }, 120_000);
});
