// The batch engine's faults, on both of its paths: in-process (one worker) and the Piscina pool
// (inProcessBelow: 0 sends even these small inputs to the workers, which run dist's build).
import { existsSync, linkSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { PassThrough } from "node:stream";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { generateRuns } from "../../src/gen/run.js";
import { runBatch, type BatchOptions } from "../../src/pool/engine.js";
import type { ErrorRecord } from "../../src/pool/job.js";
import { rejection } from "../helpers.js";

const kBudget = 4000;
/** Deeper than JSON.stringify can go on either thread's stack (main ~5,000 levels, a worker's 4 MB ~20,000). */
const kDeep = "[".repeat(100_000) + "]".repeat(100_000);

let dir: string;
let files = 0;
/** Four runs over the budget, as objects with ids. */
let runs: string[];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-engine-"));
  runs = generateRuns(4, 11).map((r, i) => JSON.stringify({ id: `run-${i}`, messages: renderMessages(r.messages, "openai-chat") }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fresh = (name: string) => path.join(dir, `${files++}-${name}`);
const outLines = (file: string) => readFileSync(file, "utf8").split("\n").slice(0, -1);
const errorRecords = (file: string) => outLines(file).map((l) => JSON.parse(l) as ErrorRecord);

function batch(input: string[], workers: number, options: Partial<BatchOptions> = {}) {
  const file = fresh("in.jsonl");
  writeFileSync(file, input.join("\n") + "\n");
  const output = fresh("out.jsonl");
  return {
    input: file, output,
    run: () => runBatch({
      input: file, output, budget: kBudget, format: "auto", mode: "tiered", workers, inProcessBelow: 0, chunkBytes: 8 << 20,
      offloadDir: `${output}.offload`, ...options,
    }),
  };
}

describe.each([["in-process", 1], ["pool", 2]] as const)("runBatch, %s", (_path, workers) => {
  it("reports progress as the share of the input written, not read (reading runs ahead by the chunks in flight)", async () => {
    // 40 runs of one size: the share of bytes done is the share of runs done.
    const input = Array.from({ length: 40 }, (_, i) => runs[0].replace('"id":"run-0"', `"id":"copy-${String(i).padStart(2, "0")}"`));
    for (const gzip of [false, true]) {
      const reports: { runs: number; f: number }[] = [];
      const b = batch(input, workers, { chunkBytes: 1, onProgress: (p) => reports.push({ runs: p.runs, f: p.doneFraction! }) });
      // A .gz's size decompressed is estimated from how much what was read expanded.
      if (gzip) writeFileSync(b.input, gzipSync(readFileSync(b.input)));
      await b.run();
      expect(reports.length).toBeGreaterThanOrEqual(3);
      reports.forEach((r, i) => {
        expect(Math.abs(r.f - r.runs / 40), JSON.stringify({ gzip, ...r })).toBeLessThan(0.05);
        if (i > 0) expect(r.f).toBeGreaterThanOrEqual(reports[i - 1].f);
      });
      expect(reports.at(-1)).toEqual({ runs: 40, f: 1 });
    }
  });

  it("writes a run the compactor fails on (nesting deeper than the stack) through with an E_INTERNAL record, and compacts the rest of its chunk", async () => {
    const deepMessage = runs[1].replace('"role":', `"extra":${kDeep},"role":`);
    const deepLine = runs[2].replace(/}$/, `,"extra":${kDeep}}`);
    const input = [runs[0], deepMessage, runs[1], deepLine, runs[2], runs[3]];
    const { output, run } = batch(input, workers);
    const summary = await run();
    expect(summary).toMatchObject({ runs: 6, compacted: 4, errors: 2, crashed: 0, retried: 0 });
    const out = outLines(output);
    expect([out[1], out[3]]).toEqual([deepMessage, deepLine]);
    for (const i of [0, 2, 4, 5]) expect(out[i]).not.toBe(input[i]);
    const errors = errorRecords(`${output}.errors.jsonl`);
    expect(errors.map((e) => [e.line, e.id, e.code])).toEqual([[2, "run-1", "E_INTERNAL"], [4, "run-2", "E_INTERNAL"]]);
    for (const e of errors) expect(e.reason).toContain("RangeError");
  });

  it("loses no input that is ready before the output is open (stdin with its bytes already buffered)", async () => {
    const stdin = new PassThrough();
    stdin.end(runs.join("\n") + "\n");
    const output = fresh("stdin-out.jsonl");
    const summary = await runBatch({ input: "-", stdin, output, budget: kBudget, format: "auto", mode: "tiered", workers, offloadDir: `${output}.offload` });
    expect(summary).toMatchObject({ runs: 4, compacted: 4, errors: 0 });
    expect(outLines(output)).toHaveLength(4);
  });

  it("stops, naming the pack and the OS code, when the offload store cannot be written (not a worker crash)", async () => {
    const plain = fresh("plain-file");
    writeFileSync(plain, "not a directory");
    const offloadDir = path.join(plain, "offload");
    const { output, run } = batch(runs, workers, { offloadDir });
    const err = await rejection(run());
    expect(err.code).toBe("E_STORE_WRITE");
    expect(err.message).toContain(offloadDir);
    expect(err.message).toContain("ENOTDIR");
    // Nothing was written whose refs would not resolve.
    expect(readFileSync(output, "utf8")).toBe("");
    expect(existsSync(`${output}.errors.jsonl`)).toBe(false);
  });

  it.skipIf(!existsSync("/dev/full"))("stops, naming the output file and the OS code, when the output cannot be written (/dev/full)", async () => {
    const { run } = batch(runs, workers, { output: "/dev/full", offloadDir: fresh("offload") });
    const err = await rejection(run());
    expect(err.code).toBe("E_OUTPUT_WRITE");
    expect(err.message).toContain("/dev/full");
    expect(err.message).toContain("ENOSPC");
  });

  it("refuses an output that is the input (a hard link to it) before opening anything for writing", async () => {
    const link = fresh("link.jsonl");
    const { input, run } = batch(runs, workers, { output: link });
    linkSync(input, link);
    const before = readFileSync(input, "utf8");
    const err = await rejection(run());
    expect(err.code).toBe("E_OUTPUT_IS_INPUT");
    expect(err.message).toContain(input);
    expect(err.message).toContain(link);
    expect(readFileSync(input, "utf8")).toBe(before);
  });
});
