/**
 * ctxfold as a user meets it: the packed tarball installed into an empty TypeScript app (ES
 * module, `strict`, NodeNext, `skipLibCheck: false`) with the MCP SDK and the AI SDK beside it. The README's
 * quick start and recall, as one file, type-check there and run, printing what the README
 * quotes; a snippet broken by one name fails the check; the package's own examples run from
 * node_modules/ctxfold/dist/examples (the quick start, and the AI SDK example's loop); the `ctxfold` command compacts a run and
 * shows the history ref it names in OpenAI format; the MCP SDK's client reads the same removed
 * messages back from `ctxfold mcp`. Packages come from
 * npm's cache where `npm ci` put them (`--prefer-offline`); without a registry or that cache the
 * tests skip with the reason.
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeExampleRun } from "../../examples/quick-start.js";

const kRoot = fileURLToPath(new URL("../..", import.meta.url));
const require = createRequire(import.meta.url);
const readme = readFileSync(path.join(kRoot, "README.md"), "utf8");

/** The version of a package the repository has installed (so npm's cache holds it). */
const installed = (name: string) => (require(path.join(kRoot, "node_modules", name, "package.json")) as { version: string }).version;

/** The ```ts block under a README heading. */
function readmeBlock(heading: string): string {
  const section = readme.slice(readme.indexOf(`## ${heading}\n`));
  return /```ts\n([\s\S]*?)```/.exec(section)![1];
}

const run = (cmd: string, args: string[], cwd: string, timeout = 60_000): SpawnSyncReturns<string> =>
  spawnSync(cmd, args, { cwd, encoding: "utf8", timeout, shell: process.platform === "win32" });

let dir = "";
let app = "";
/** Why the app could not be made (the tests then skip saying so), or undefined. */
let unavailable: string | undefined;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-app-"));
  app = path.join(dir, "app");
  // dist/ is built by the test setup; packing again would rebuild it (prepare).
  const pack = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], kRoot);
  expect(pack.status, pack.stderr).toBe(0);
  const tarball = path.join(dir, (JSON.parse(pack.stdout) as { filename: string }[])[0].filename);
  mkdirSync(app);
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }, null, 2));
  writeFileSync(
    path.join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        skipLibCheck: false,
        outDir: "out",
        types: ["node"],
      },
      include: ["*.ts"],
    }),
  );
  // @types/json-schema: the AI SDK's own declarations import it, and the app checks every library's.
  const deps = [
    tarball,
    ...["typescript", "@types/node", "@modelcontextprotocol/sdk", "ai", "zod", "@types/json-schema"].map((name) => `${name}@${installed(name)}`),
  ];
  const install = run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...deps], app, 240_000);
  if (install.status !== 0)
    unavailable = `npm could not install the tarball and its peers (no registry or cache here): ${install.stderr.trim().split("\n").at(-1)}`;
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Type-checks and builds the app's .ts files (tsc from the app's own install). */
const tsc = () => run(process.execPath, [path.join(app, "node_modules/typescript/bin/tsc"), "-p", "."], app, 120_000);

describe("the packed tarball in an empty TypeScript app", () => {
  it("the README's quick start and recall are one file that type-checks under strict NodeNext and prints what the README quotes", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    writeFileSync(path.join(app, "quick-start.ts"), `${readmeBlock("Quick start")}\n${readmeBlock("Getting removed content back")}`);
    writeExampleRun(app);
    const check = tsc();
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const r = run(process.execPath, ["out/quick-start.js"], app);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(readme).toContain(`\`${lines[0]}\``);
    expect(lines[1]).toMatch(/^\d+ messages removed whole$/);
    expect(lines[2]).toMatch(/^workspace\/outputs\/\w+\.\w+: \d+ chars$/);
    rmSync(path.join(app, "quick-start.ts"));
  });

  it("a snippet broken by one name fails the check, naming it", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    writeFileSync(path.join(app, "broken.ts"), readmeBlock("Quick start").replaceAll("createCompactor", "createCompacter"));
    const check = tsc();
    rmSync(path.join(app, "broken.ts"));
    expect(check.status).not.toBe(0);
    expect(check.stdout).toMatch(/broken\.ts.*createCompacter/);
  });

  it("the quick start example runs from the installed package (node node_modules/ctxfold/dist/examples/quick-start.js) and prints what the README quotes", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const r = run(process.execPath, ["node_modules/ctxfold/dist/examples/quick-start.js"], app);
    expect(r.status, r.stderr).toBe(0);
    expect(readme).toContain(`\`${r.stdout.split("\n")[0]}\``);
  });

  it("the AI SDK example, as it is (it imports ctxfold/ai-sdk), type-checks; the package's build of it runs its loop with every prompt within budget", (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const files = ["ai-sdk-middleware.ts", "stub-model.ts", "fake-files.ts"];
    for (const f of files) {
      const text = readFileSync(path.join(kRoot, "examples", f), "utf8");
      expect(text.match(/from "\.\.\/[^"]+"/g) ?? [], f).toEqual([]);
      writeFileSync(path.join(app, f), text);
    }
    const check = tsc();
    expect(check.status, check.stdout + check.stderr).toBe(0);
    for (const f of files) rmSync(path.join(app, f));
    const r = run(process.execPath, ["node_modules/ctxfold/dist/examples/ai-sdk-middleware.js"], app);
    expect(r.status, r.stderr).toBe(0);
    const last = r.stdout.trim().split("\n").at(-1)!;
    expect(last).toMatch(/^40 steps, [1-9]\d* epochs, every prompt ≤ 8000 tokens: true$/);
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
