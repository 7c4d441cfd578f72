import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { generateRuns } from "../../src/gen/run.js";
import { writeFakePackages } from "../helpers-peers.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const kHide = fileURLToPath(new URL("../fixtures/hide-optional-peers.mjs", import.meta.url));
const kOld = fileURLToPath(new URL("../fixtures/old-optional-peers.mjs", import.meta.url));

/** The ctxfold command in a process where bullmq, ioredis and the MCP SDK cannot be found. */
const withoutPeers = (args: string[], input = "") =>
  spawnSync(process.execPath, ["--import", kHide, kCli, ...args], { input, encoding: "utf8", timeout: 60_000 });

/** The ctxfold command in a process where the optional peers in `peersDir`/node_modules are the ones installed. */
const withPeersOf = (peersDir: string, args: string[]) =>
  spawnSync(process.execPath, ["--import", kOld, kCli, ...args], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, CTXFOLD_TEST_OLD_PEERS: peersDir },
  });

let dir: string;
let runs: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-peers-"));
  runs = path.join(dir, "runs.jsonl");
  const lines = generateRuns(3, 7).map((r) => JSON.stringify({ id: r.id, messages: renderMessages(r.messages, "openai-chat") }));
  writeFileSync(runs, `${lines.join("\n")}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the optional peers (bullmq, ioredis, the MCP SDK) absent", () => {
  it("the hook hides them: importing bullmq fails as for a package not installed", () => {
    const r = spawnSync(process.execPath, ["--import", kHide, "--input-type=module", "-e", 'await import("bullmq")'], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/Cannot find package 'bullmq'/);
  });

  it("compact, count, validate and --version work without them", () => {
    const out = path.join(dir, "out.jsonl");
    const c = withoutPeers(["compact", runs, "-o", out, "--budget", "2000", "--quiet"]);
    expect(c.status, c.stderr).toBe(0);
    expect(readFileSync(out, "utf8").trim().split("\n")).toHaveLength(3);
    const counted = withoutPeers(["count", "-"], "hello world");
    expect(counted.status, counted.stderr).toBe(0);
    expect(withoutPeers(["--version"]).stdout).toMatch(/^ctxfold /);
    const v = withoutPeers(["validate", runs, "--format", "openai"]);
    expect(v.stderr).not.toMatch(/E_MISSING_PEER|Cannot find package/);
  });

  it("compact --queue stops before any work, exit 2, naming bullmq and ioredis and how to install them", () => {
    const out = path.join(dir, "queued.jsonl");
    const r = withoutPeers(["compact", runs, "-o", out, "--budget", "2000", "--queue", "redis://127.0.0.1:1", "--quiet"]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/ctxfold compact --queue needs bullmq and ioredis, .*not installed .*: npm install bullmq ioredis/);
    expect(r.stderr).not.toMatch(/ {4}at /);
    expect(() => readFileSync(out)).toThrow();
  });

  it("worker and mcp exit 2 naming what to install", () => {
    const w = withoutPeers(["worker", "--queue", "redis://127.0.0.1:1", "--work-dir", dir]);
    expect(w.status, w.stderr).toBe(2);
    expect(w.stderr).toMatch(/ctxfold worker needs bullmq and ioredis.*npm install bullmq ioredis/);
    const m = withoutPeers(["mcp", "--offload-dir", dir]);
    expect(m.status, m.stderr).toBe(2);
    expect(m.stderr).toMatch(/ctxfold mcp needs @modelcontextprotocol\/sdk.*npm install @modelcontextprotocol\/sdk/);
  });

  it("the library's entry points load without them", () => {
    const entries = ["ctxfold", "ctxfold/steps", "ctxfold/block", "ctxfold/policy", "ctxfold/store", "ctxfold/recall", "ctxfold/eval"];
    const script = `for (const e of ${JSON.stringify(entries)}) await import(e);`;
    const r = spawnSync(process.execPath, ["--import", kHide, "--input-type=module", "-e", script], { encoding: "utf8", cwd: path.dirname(kCli) });
    expect(r.status, r.stderr).toBe(0);
  });
});

describe("an optional peer installed at a version outside ctxfold's range", () => {
  // Old enough to lack what ctxfold imports (no server/mcp.js, no Worker export): without the check,
  // the command fails with the old package's own error.
  const oldPeers = () =>
    writeFakePackages(mkdtempSync(path.join(dir, "old-")), { "@modelcontextprotocol/sdk": "1.0.4", bullmq: "4.0.0" }, { nestedEntry: true });

  it("the hook makes the fake package the one resolved", () => {
    const peers = oldPeers();
    const script = 'console.log(import.meta.resolve("@modelcontextprotocol/sdk"))';
    const r = spawnSync(process.execPath, ["--import", kOld, "--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...process.env, CTXFOLD_TEST_OLD_PEERS: peers },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`file://${path.join(peers, "node_modules/@modelcontextprotocol/sdk/dist/esm/index.js")}`);
  });

  it("mcp stops before any work, exit 2, with one line naming the range, the installed version and the install", () => {
    const m = withPeersOf(oldPeers(), ["mcp", "--offload-dir", dir]);
    expect(m.status, m.stderr).toBe(2);
    expect(m.stderr).toBe(
      "ctxfold mcp: ctxfold mcp needs @modelcontextprotocol/sdk ^1.32.2; 1.0.4 is installed: npm install @modelcontextprotocol/sdk@^1.32.2\n",
    );
    expect(m.stdout).toBe("");
  });

  it("worker and compact --queue name bullmq's range the same way", () => {
    const peers = oldPeers();
    const w = withPeersOf(peers, ["worker", "--queue", "redis://127.0.0.1:1", "--work-dir", dir]);
    expect(w.status, w.stderr).toBe(2);
    expect(w.stderr).toBe("ctxfold worker: ctxfold worker needs bullmq ^5.81.5; 4.0.0 is installed: npm install bullmq@^5.81.5\n");
    const out = path.join(dir, "queued-old.jsonl");
    const c = withPeersOf(peers, ["compact", runs, "-o", out, "--budget", "2000", "--queue", "redis://127.0.0.1:1", "--quiet"]);
    expect(c.status, c.stderr).toBe(2);
    expect(c.stderr).toMatch(/^ctxfold compact: ctxfold compact --queue needs bullmq \^5\.81\.5; 4\.0\.0 is installed: npm install bullmq@\^5\.81\.5\n$/);
    expect(() => readFileSync(out)).toThrow();
  });
});
