import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const project = fileURLToPath(new URL("./tsconfig.json", import.meta.url));

describe("compact()'s typed results", () => {
  it("type-check: the caller's message type comes back with a named format, unknown with a detected one", () => {
    const r = spawnSync(process.execPath, [tsc, "-p", project], { encoding: "utf8" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 120_000);
});
