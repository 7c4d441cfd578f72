/**
 * The version ctxfold names as an installed package, outside any git checkout: the built package
 * laid out as npm installs it (node_modules/ctxfold with its package.json, dist/src and
 * build/core.wasm) under a temporary directory, with a version of its own. `ctxfold --version`
 * and the eval's ctxfold row (the version column of its tables and HTML report) both read that
 * package.json, never the checkout's, and never say "this repo".
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const kRoot = fileURLToPath(new URL("../..", import.meta.url));
const kVersion = "9.8.7-installed";

let dir = "";
let pkg = "";

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-installed-"));
  pkg = path.join(dir, "node_modules", "ctxfold");
  mkdirSync(path.join(pkg, "dist"), { recursive: true });
  // dist/ is built by the test setup.
  cpSync(path.join(kRoot, "dist", "src"), path.join(pkg, "dist", "src"), { recursive: true });
  cpSync(path.join(kRoot, "build", "core.wasm"), path.join(pkg, "build", "core.wasm"));
  writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "ctxfold", version: kVersion, type: "module" }));
  // Its dependencies, where npm would have put them beside it.
  symlinkSync(path.join(kRoot, "node_modules"), path.join(pkg, "node_modules"), "dir");
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const node = (args: string[]) => spawnSync(process.execPath, args, { cwd: dir, encoding: "utf8", timeout: 60_000 });

describe("the version of an installed ctxfold", () => {
  it("ctxfold --version names the installed package.json's version", () => {
    const r = node([path.join(pkg, "dist", "src", "cli", "main.js"), "--version"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`ctxfold ${kVersion}\n`);
  });

  it("the eval's ctxfold row names the package and its version, not this repo", () => {
    const contenders = pathToFileURL(path.join(pkg, "dist", "src", "eval", "contenders.js")).href;
    const r = node(["--input-type=module", "-e", `const { ctxfold } = await import(${JSON.stringify(contenders)}); console.log((await ctxfold()).version);`]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`ctxfold ${kVersion}\n`);
  });
});
