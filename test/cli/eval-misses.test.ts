// `ctxfold eval --misses`: the misses section in --json, the terminal report and the HTML page;
// without the flag the JSON has none.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { evalCommand } from "../../src/cli/commands/eval.js";
import { kExit } from "../../src/cli/common.js";
import type { EvalReport } from "../../src/eval/index.js";
import { generateRun } from "../../src/gen/run.js";
import { run } from "./fake-io.js";

let dir: string;
let input: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ctxfold-eval-misses-"));
  input = join(dir, "runs.jsonl");
  const line = (seed: number) => JSON.stringify({ id: `gen-${seed}`, messages: renderMessages(generateRun({ seed, steps: 30 }).messages, "openai-chat") });
  writeFileSync(input, `${[21, 22].map(line).join("\n")}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ctxfold eval --misses", () => {
  it("adds a misses section per budget to the JSON, the tables and the page; without the flag, none", async () => {
    const args = [input, "--budget", "3000,8000", "--points", "8", "--trace", "0"];
    const plain = await run(evalCommand, [...args, "--json", "--no-report"]);
    expect(plain.code, plain.err).toBe(kExit.ok);
    expect(JSON.parse(plain.out)).not.toHaveProperty("misses");
    const json = await run(evalCommand, [...args, "--json", "--misses", "--no-report"]);
    const report = JSON.parse(json.out) as EvalReport;
    expect(report.misses?.map((m) => m.budget)).toEqual([3000, 8000]);
    const row = report.misses!.flatMap((m) => m.rows)[0];
    expect(Object.keys(row ?? {}).sort()).toEqual(row ? ["count", "examples", "kind", "ledger", "recoverable", "share", "stage"] : []);
    const html = join(dir, "report.html");
    const text = await run(evalCommand, [...args, "--misses", "--html", html]);
    expect(text.code, text.err).toBe(kExit.ok);
    expect(text.out).toMatch(/^misses at 3,000 \(ctxfold\): [0-9,]+ of [0-9,]+ evidence terms lacking/m);
    const page = readFileSync(html, "utf8");
    expect(page).toContain('<section id="misses">');
    expect(page).toContain('href="#misses"');
  }, 120_000);
});
