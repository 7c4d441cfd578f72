import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const kRoot = fileURLToPath(new URL("../..", import.meta.url));
const require = createRequire(import.meta.url);

/**
 * The names a declaration file exports (values and types): `export { a, b as c }`, `export
 * declare …`, `export type|interface …`, following `export * from` into the same package.
 */
function declaredExports(file: string, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  if (seen.has(file) || !existsSync(file)) return names;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of m[1].split(",")) {
      const name = item
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      if (name) names.add(name);
    }
  }
  for (const m of text.matchAll(/export\s+(?:declare\s+)?(?:abstract\s+)?(?:const|let|function|class|type|interface|enum|namespace)\s+([A-Za-z_$][\w$]*)/g))
    names.add(m[1]);
  for (const m of text.matchAll(/export\s+\*\s+from\s+["']([^"']+)["']/g)) {
    const target = path.resolve(path.dirname(file), m[1]).replace(/\.(m?js)$/, "");
    for (const f of [`${target}.d.ts`, `${target}.d.mts`, path.join(target, "index.d.ts")]) for (const n of declaredExports(f, seen)) names.add(n);
  }
  return names;
}

/** The declaration file of an installed package's entry point. */
function typesOf(specifier: string): string {
  const js = require.resolve(specifier);
  for (const candidate of [js.replace(/\.(c|m)?js$/, ".d.ts"), js.replace(/\.(c|m)?js$/, ".d.$1ts")]) if (existsSync(candidate)) return candidate;
  throw new Error(`no declarations beside ${js}`);
}

const rootNames = () => declaredExports(path.join(kRoot, "dist/src/index.d.ts"));

describe("the package root", () => {
  it("exports a small API: at most ~40 names, values and types", async () => {
    const values = Object.keys(await import("ctxfold"));
    const all = rootNames();
    for (const v of values) expect(all).toContain(v);
    expect(all.size).toBeLessThanOrEqual(42);
    expect([...all]).toEqual(
      expect.arrayContaining([
        "createCompactor",
        "CompactResult",
        "parseMessages",
        "renderMessages",
        "detectFormat",
        "validate",
        "newViolations",
        "TokenCounter",
        "createMemoryStore",
        "CtxfoldError",
        "extractiveSummarizer",
        "llmSummarizer",
      ]),
    );
    // The WASM host's internals and the test-data generators live on their own entry points.
    for (const internal of ["getCore", "CoreInstance", "setCoreModule", "createDebugCore", "generateText", "generateRun", "generateRuns"])
      expect(all).not.toContain(internal);
  });

  it("shares no name with the AI SDK, LangChain or Mastra, so editors' auto-imports never offer ours for theirs", () => {
    const theirs = new Set<string>();
    for (const entry of [
      "ai",
      "@langchain/core/messages",
      "@langchain/core/runnables",
      "@langchain/core/tools",
      "@langchain/core/language_models/chat_models",
      "@mastra/core",
      "@mastra/core/agent",
      "@mastra/core/processors",
    ]) {
      for (const n of declaredExports(typesOf(entry))) theirs.add(n);
    }
    expect(theirs.size).toBeGreaterThan(300);
    expect([...rootNames()].filter((n) => theirs.has(n))).toEqual([]);
  });

  it("every subpath in package.json resolves to a built module with exports", async () => {
    const pkg = JSON.parse(readFileSync(path.join(kRoot, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(pkg.exports).filter((k) => k !== "." && !/\.(wasm|json)$/.test(k));
    expect(subpaths).toEqual(
      expect.arrayContaining([
        "./steps",
        "./block",
        "./session",
        "./policy",
        "./adapters",
        "./validate",
        "./store",
        "./recall",
        "./model",
        "./tokens",
        "./core",
      ]),
    );
    for (const sub of subpaths) {
      const mod = (await import(/* @vite-ignore */ `ctxfold/${sub.slice(2)}`)) as Record<string, unknown>;
      expect(Object.keys(mod).length, sub).toBeGreaterThan(0);
    }
  });

  it("tsconfig's paths map every export to its source, so the examples' `ctxfold/…` imports type-check in the repository as in an install", () => {
    const pkg = JSON.parse(readFileSync(path.join(kRoot, "package.json"), "utf8")) as { exports: Record<string, string | { types: string }> };
    // tsconfig.json is JSON with comments.
    const tsconfig = readFileSync(path.join(kRoot, "tsconfig.json"), "utf8").replace(/^\s*\/\/.*$/gm, "");
    const paths = (JSON.parse(tsconfig) as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions.paths;
    const expected: Record<string, string[]> = {};
    for (const [sub, target] of Object.entries(pkg.exports))
      if (typeof target !== "string") expected[`ctxfold${sub.slice(1)}`] = [target.types.replace(/^\.\/dist\//, "./").replace(/\.d\.ts$/, ".ts")];
    expect(paths).toEqual(expected);
  });

  it("ctxfold/session, block compaction's earlier name, is the very module ctxfold/block is", async () => {
    const block = (await import("ctxfold/block")) as Record<string, unknown>;
    const session = (await import(/* @vite-ignore */ "ctxfold/session")) as Record<string, unknown>;
    expect(Object.keys(session).sort()).toEqual(Object.keys(block).sort());
    for (const name of Object.keys(block)) expect(session[name], name).toBe(block[name]);
  });

  it("the tarball holds the built modules every export names, the built examples, the wasm core, README, the docs it links to and LICENSE; no source maps, no generators", () => {
    const r = spawnSync("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], { cwd: kRoot, encoding: "utf8", shell: process.platform === "win32" });
    expect(r.status, r.stderr).toBe(0);
    const packed = (JSON.parse(r.stdout) as { files: { path: string }[]; entryCount: number; size: number; unpackedSize: number }[])[0];
    const files = new Set(packed.files.map((f) => f.path));
    for (const f of ["LICENSE", "README.md", "package.json", "build/core.wasm", "dist/src/cli/main.js"]) expect(files.has(f), f).toBe(true);
    const linked = [...readFileSync(path.join(kRoot, "README.md"), "utf8").matchAll(/\]\((docs\/[\w-]+\.md)/g)].map((m) => m[1]);
    expect(linked.length).toBeGreaterThan(0);
    for (const f of linked) expect(files.has(f), f).toBe(true);
    expect([...files].filter((f) => f.startsWith("docs/api/"))).toEqual([]);
    expect([...files].filter((f) => f.endsWith(".map") || f.startsWith("dist/src/gen/") || f.startsWith("dist/test") || f.startsWith("dist/bench"))).toEqual(
      [],
    );
    const pkg = JSON.parse(readFileSync(path.join(kRoot, "package.json"), "utf8")) as {
      exports: Record<string, string | Record<string, string>>;
      bin: Record<string, string>;
    };
    // The examples run from an install: every one the README names is shipped, built, and reaches
    // ctxfold only through its exports (no `../src/…`, which an install lays out differently).
    const readme = readFileSync(path.join(kRoot, "README.md"), "utf8");
    const named = [...readme.matchAll(/`([\w-]+)`/g)].map((m) => `dist/examples/${m[1]}.js`).filter((f) => existsSync(path.join(kRoot, f)));
    expect(named.length).toBeGreaterThanOrEqual(6);
    for (const f of named) expect(files.has(f), f).toBe(true);
    const examples = [...files].filter((f) => f.startsWith("dist/examples/"));
    expect(examples.filter((f) => !f.endsWith(".js"))).toEqual([]);
    for (const f of examples) expect(readFileSync(path.join(kRoot, f), "utf8").match(/from "\.\.\/[^"]*"/g) ?? [], f).toEqual([]);
    const targets = [...Object.values(pkg.exports).flatMap((e) => (typeof e === "string" ? [e] : Object.values(e))), ...Object.values(pkg.bin)];
    for (const t of targets) expect(files.has(t.replace(/^\.\//, "")), t).toBe(true);
    // The README's size line says what npm pack ships, within 10% (update it when this fails).
    const line = /(\d+) files, ([\d.]+) KB\s+packed, ([\d.]+) MB unpacked/.exec(readFileSync(path.join(kRoot, "README.md"), "utf8"));
    expect(line, "the README's package size line").not.toBeNull();
    const [files10, kb, mb] = [Number(line![1]), Number(line![2]), Number(line![3])];
    const near = (said: number, is: number) => Math.abs(said - is) <= 0.1 * is;
    expect(near(files10, packed.entryCount), `README says ${files10} files, npm pack ${packed.entryCount}`).toBe(true);
    expect(near(kb, packed.size / 1000), `README says ${kb} KB packed, npm pack ${Math.round(packed.size / 1000)} KB`).toBe(true);
    expect(near(mb, packed.unpackedSize / 1e6), `README says ${mb} MB unpacked, npm pack ${(packed.unpackedSize / 1e6).toFixed(1)} MB`).toBe(true);
  });
});
