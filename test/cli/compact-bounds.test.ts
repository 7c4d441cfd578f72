/**
 * compact under what would make it grow without bound or lie about what it wrote: more workers
 * than the machine has cores, a line that never ends, signals while such a line is read, a
 * reader of stdout that goes away, and an output that lost its tail before a resume.
 */
import { availableParallelism } from "node:os";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { generatedRunLines } from "../helpers.js";
import { fakeIo } from "./fake-io.js";

let dir: string;
let lines: string[];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-bounds-"));
  lines = generatedRunLines(6, 9);
  writeFileSync(path.join(dir, "small.jsonl"), lines.join("\n") + "\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("compact --workers", () => {
  it("caps --workers at twice the cores, saying so on stderr, and runs", async () => {
    const cap = 2 * availableParallelism();
    const f = fakeIo();
    const code = await runCli(["compact", path.join(dir, "small.jsonl"), "-o", path.join(dir, "w.jsonl"), "--budget", "8000", "--workers", "1000", "--quiet"], f.io);
    expect(code, f.stderr()).toBe(0);
    expect(f.stderr()).toBe(`ctxfold compact: --workers 1000 is more than this machine can use: using ${cap} (twice its ${availableParallelism()} cores)\n`);
    const within = fakeIo();
    expect(await runCli(["compact", path.join(dir, "small.jsonl"), "-o", path.join(dir, "w2.jsonl"), "--budget", "8000", "--workers", String(cap), "--quiet"], within.io)).toBe(0);
    expect(within.stderr()).toBe("");
  });
});
