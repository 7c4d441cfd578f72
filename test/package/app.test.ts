/**
 * ctxfold as a user meets it: the packed tarball installed into an empty TypeScript app (ES
 * module, `strict`, NodeNext) with the peers of its integrations beside it (the AI SDK,
 * LangChain, Mastra, the MCP SDK). Every ```ts block of the README and docs/ is a module there,
 * named by its page and heading (test/package/doc-snippets.ts), and type-checks; so do the
 * examples, as they are. The README's quick start and recall run and print what the README
 * quotes; a snippet broken by one name fails the check, naming it; the package's built examples
 * run from node_modules/ctxfold/dist/examples; the `ctxfold` command compacts a run and shows
 * the history ref it names in OpenAI format; the MCP SDK's client reads the same removed
 * messages back from `ctxfold mcp`. Packages come from npm's cache where `npm ci` put them
 * (`--prefer-offline`); without a registry or that cache the tests skip with the reason.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeExampleRun } from "../../examples/quick-start.js";
import { type DocSnippet, docSnippets } from "./doc-snippets.js";

const kRoot = fileURLToPath(new URL("../..", import.meta.url));
const require = createRequire(import.meta.url);
const readme = readFileSync(path.join(kRoot, "README.md"), "utf8");
const snippets = docSnippets(kRoot);
/** Mastra's own declarations fail the library check (hundreds of errors in @mastra/core's .d.ts), so what imports it is checked with skipLibCheck. */
const importsMastra = (code: string) => /from "@mastra\//.test(code);

/** The version of a package the repository has installed (so npm's cache holds it). */
const installed = (name: string) => (require(path.join(kRoot, "node_modules", name, "package.json")) as { version: string }).version;

const run = (cmd: string, args: string[], cwd: string, timeout = 60_000): SpawnSyncReturns<string> =>
  spawnSync(cmd, args, { cwd, encoding: "utf8", timeout, shell: process.platform === "win32" });

/** tsc of the app's own install on one of its tsconfigs: its exit status and diagnostics, the two programs running side by side. */
function tsc(project: string): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(app, "node_modules/typescript/bin/tsc"), "-p", project], { cwd: app });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.stderr.on("data", (d: Buffer) => (out += d));
    child.on("close", (status) => resolve({ status, out }));
  });
}

/** tsc's diagnostics by file (`file.ts(3,9): error TS2304: …`; a diagnostic of no file, such as a bad option, under ""). */
function diagnostics(out: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const line of out.split("\n")) {
    const file = /^(\S+?\.ts)\(\d+,\d+\): error/.exec(line)?.[1] ?? (/^error /.test(line) ? "" : undefined);
    if (file !== undefined) byFile.set(file, [...(byFile.get(file) ?? []), line]);
  }
  return byFile;
}

let dir = "";
let app = "";
/** Why the app could not be made (the tests then skip saying so), or undefined. */
let unavailable: string | undefined;
/** The diagnostics of the app's two programs (tsconfig.json, and tsconfig.mastra.json for what imports Mastra), and their exit statuses. */
let checked: { byFile: Map<string, string[]>; statuses: (number | null)[] } = { byFile: new Map(), statuses: [] };

/** A tsconfig of the app: strict NodeNext, every library's declarations checked unless `options` say `skipLibCheck`. */
const tsconfig = (include: string[], options: Record<string, unknown> = {}, exclude: string[] = []) =>
  JSON.stringify({
    compilerOptions: {
      strict: true,
      module: "NodeNext",
      moduleResolution: "NodeNext",
      target: "ES2022",
      skipLibCheck: false,
      outDir: "out",
      types: ["node"],
      ...options,
    },
    include,
    exclude,
  });

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-app-"));
  app = path.join(dir, "app");
  // dist/ is built by the test setup; packing again would rebuild it (prepare).
  const pack = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], kRoot);
  expect(pack.status, pack.stderr).toBe(0);
  const tarball = path.join(dir, (JSON.parse(pack.stdout) as { filename: string }[])[0].filename);
  mkdirSync(path.join(app, "mastra"), { recursive: true });
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }, null, 2));
  // @types/json-schema: the AI SDK's own declarations import it, and the app checks every library's.
  const peers = ["@modelcontextprotocol/sdk", "ai", "zod", "@types/json-schema", "@langchain/core", "langchain", "@mastra/core"];
  const deps = [tarball, ...["typescript", "@types/node", ...peers].map((name) => `${name}@${installed(name)}`)];
  const install = run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...deps], app, 240_000);
  if (install.status !== 0) {
    unavailable = `npm could not install the tarball and its peers (no registry or cache here): ${install.stderr.trim().split("\n").at(-1)}`;
    return;
  }
  // The snippets, each a file named by its page and heading; the examples as they are.
  for (const s of snippets) writeFileSync(path.join(app, importsMastra(s.code) ? "mastra" : ".", s.file), s.code);
  cpSync(path.join(kRoot, "examples"), path.join(app, "examples"), { recursive: true });
  writeFileSync(path.join(app, "tsconfig.json"), tsconfig(["*.ts", "examples/*.ts"], {}, ["examples/mastra-processor.ts"]));
  writeFileSync(path.join(app, "tsconfig.mastra.json"), tsconfig(["mastra/*.ts", "examples/mastra-processor.ts"], { skipLibCheck: true, noEmit: true }));
  const checks = await Promise.all([tsc("tsconfig.json"), tsc("tsconfig.mastra.json")]);
  checked = { byFile: new Map(checks.flatMap((c) => [...diagnostics(c.out)])), statuses: checks.map((c) => c.status) };
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the packed tarball in an empty TypeScript app", () => {
  it("every ```ts block of the README and docs/ is a module that type-checks under strict NodeNext, with the peers' declarations checked (Mastra's aside)", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    expect(snippets.length).toBeGreaterThanOrEqual(17);
    const { byFile, statuses } = checked;
    const where = (s: DocSnippet) => `${importsMastra(s.code) ? "mastra/" : ""}${s.file}`;
    const failed = snippets.filter((s) => byFile.has(where(s))).map((s) => `${s.where} (${where(s)}):\n${byFile.get(where(s))!.join("\n")}`);
    expect(failed).toEqual([]);
    // Nothing else failed either (a library's declarations, an option); the examples are the next test's.
    const ours = new Set([...snippets.map(where), ...[...byFile.keys()].filter((f) => f.startsWith("examples/"))]);
    expect([...byFile].filter(([f]) => !ours.has(f)).flatMap(([, lines]) => lines)).toEqual([]);
    expect(statuses.every((status) => status === 0) || byFile.size > 0, "tsc failed saying nothing").toBe(true);
    expect(snippets.filter((s) => importsMastra(s.code)).length).toBeGreaterThan(0);
  });

  it("the README's quick start and recall, one module, run and print what the README quotes", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const quickStart = snippets.find((s) => s.where === "README.md#quick-start")!;
    expect(quickStart.code).toContain("getMessages(store, history)"); // the recall continues it
    writeExampleRun(app);
    const r = run(process.execPath, [`out/${quickStart.file.replace(/\.ts$/, ".js")}`], app);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(readme).toContain(`\`${lines[0]}\``);
    expect(lines[1]).toMatch(/^\d+ messages removed whole$/);
    expect(lines[2]).toMatch(/^workspace\/outputs\/\w+\.\w+: \d+ chars$/);
  });

  it("a snippet broken by one name fails the check, naming it", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const quickStart = snippets.find((s) => s.where === "README.md#quick-start")!;
    mkdirSync(path.join(app, "broken"));
    writeFileSync(path.join(app, "broken/broken.ts"), quickStart.code.replaceAll("createCompactor", "createCompacter"));
    writeFileSync(path.join(app, "tsconfig.broken.json"), tsconfig(["broken/*.ts"], { skipLibCheck: true, noEmit: true }));
    const check = run(process.execPath, [path.join(app, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.broken.json"], app);
    expect(check.status).not.toBe(0);
    expect(check.stdout).toMatch(/broken\.ts.*createCompacter/);
  });

  it("the examples, as they are (their imports are the package's), type-check in the app", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    expect([...checked.byFile].filter(([f]) => f.startsWith("examples/")).flatMap(([, lines]) => lines)).toEqual([]);
  });

  it("the package's built examples run from node_modules/ctxfold/dist/examples: the quick start prints what the README quotes, the AI SDK loop stays within budget", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const quickStart = run(process.execPath, ["node_modules/ctxfold/dist/examples/quick-start.js"], app);
    expect(quickStart.status, quickStart.stderr).toBe(0);
    expect(readme).toContain(`\`${quickStart.stdout.split("\n")[0]}\``);
    const aiSdk = run(process.execPath, ["node_modules/ctxfold/dist/examples/ai-sdk-middleware.js"], app);
    expect(aiSdk.status, aiSdk.stderr).toBe(0);
    expect(aiSdk.stdout.trim().split("\n").at(-1)).toMatch(/^40 steps, [1-9]\d* epochs, every prompt ≤ 8000 tokens: true$/);
  });

  it("the ctxfold command compacts a run and shows the history ref it names; `ctxfold mcp` gives the same messages to the MCP SDK's client", async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    writeExampleRun(app);
    writeFileSync(path.join(app, "runs.jsonl"), `${readFileSync(path.join(app, "run.json"), "utf8")}\n`);
    const bin = path.join(app, "node_modules/.bin/ctxfold");
    const compact = run(bin, ["compact", "runs.jsonl", "-o", "out.jsonl", "--budget", "8000", "--offload-dir", "store", "--workers", "1"], app);
    expect(compact.status, compact.stderr).toBe(0);
    // compact's summary names a ref and the show line for it.
    const ref = /a ref\s+(\S+): ctxfold show/.exec(compact.stderr)![1];
    const show = run(bin, ["show", ref, "--offload-dir", "store", "--format", "openai"], app);
    expect(show.status, show.stderr).toBe(0);
    const removed = JSON.parse(show.stdout) as { content: unknown }[];
    expect(removed.length).toBeGreaterThan(1);
    // The MCP client, as the app would import it, over stdio to the app's own ctxfold.
    writeFileSync(
      path.join(app, "recall.mjs"),
      `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const client = new Client({ name: "app", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: ${JSON.stringify(bin)}, args: ["mcp", "--offload-dir", "store"] }));
const tools = (await client.listTools()).tools.map((t) => t.name);
const read = await client.callTool({ name: tools.find((n) => n.includes("recall")), arguments: { ref: ${JSON.stringify(ref)} } });
process.stdout.write(JSON.stringify({ tools, isError: read.isError ?? false, text: read.content.map((c) => c.text ?? "").join("") }));
await client.close();
`,
    );
    const mcp = run(process.execPath, ["recall.mjs"], app);
    expect(mcp.status, mcp.stderr).toBe(0);
    const answer = JSON.parse(mcp.stdout) as { tools: string[]; isError: boolean; text: string };
    expect(answer.isError, answer.text).toBe(false);
    // The history's first removed message, as `show --format openai` gave it.
    expect(answer.text).toContain(JSON.stringify(removed[0].content));
  });
});
