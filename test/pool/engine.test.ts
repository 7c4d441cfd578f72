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
import { kMaxRunDepth, type ErrorRecord } from "../../src/pool/job.js";
import { nestsDeeperThan } from "../../src/pool/jsonl.js";
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

/** An Anthropic run over the budget whose tool_use input nests `depth` levels deep in all (the line's own levels counted). */
function deepToolUse(depth: number): string {
  const n = depth - 6; // line, messages, message, content, block, input
  return (
    `{"messages":[{"role":"user","content":"Fix the bug."},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"edit","input":{"a":${"[".repeat(n)}${"]".repeat(n)}}}]},` +
    `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":${JSON.stringify("a line of tool output\n".repeat(3000))}}]},{"role":"assistant","content":"Done."}]}`
  );
}

const fresh = (name: string) => path.join(dir, `${files++}-${name}`);
const outLines = (file: string) => readFileSync(file, "utf8").split("\n").slice(0, -1);
const errorRecords = (file: string) => outLines(file).map((l) => JSON.parse(l) as ErrorRecord);

function batch(input: string[], workers: number, options: Partial<BatchOptions> = {}) {
  const file = fresh("in.jsonl");
  writeFileSync(file, input.join("\n") + "\n");
  const output = fresh("out.jsonl");
  return {
    input: file,
    output,
    run: () =>
      runBatch({
        input: file,
        output,
        budget: kBudget,
        format: "auto",
        mode: "tiered",
        workers,
        inProcessBelow: 0,
        chunkBytes: 8 << 20,
        offloadDir: `${output}.offload`,
        ...options,
      }),
  };
}

describe.each([
  ["in-process", 1],
  ["pool", 2],
] as const)("runBatch, %s", (_path, workers) => {
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

  it("writes a run nested deeper than any stack through with an E_TOO_LARGE record, before parsing it, and compacts the rest of its chunk", async () => {
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
    expect(errors.map((e) => [e.line, e.id, e.code])).toEqual([
      [2, undefined, "E_TOO_LARGE"],
      [4, undefined, "E_TOO_LARGE"],
    ]);
    for (const e of errors) expect(e.reason).toContain(`more than ${kMaxRunDepth} levels deep`);
  });

  it("gives deep tool-call arguments the verdict of the depth limit, whichever thread's stack they meet: compacted at the limit, written through with E_TOO_LARGE past it", async () => {
    // 5,000 levels fit a worker's stack but not the main thread's: the limit, not the stack, decides.
    const atLimit = deepToolUse(kMaxRunDepth);
    const past = deepToolUse(5000);
    expect(nestsDeeperThan(Buffer.from(atLimit), kMaxRunDepth)).toBe(false);
    expect(nestsDeeperThan(Buffer.from(deepToolUse(kMaxRunDepth + 1)), kMaxRunDepth)).toBe(true);
    const input = [runs[0], atLimit, past, runs[1]];
    const { output, run } = batch(input, workers);
    expect(await run()).toMatchObject({ runs: 4, compacted: 3, errors: 1 });
    const out = outLines(output);
    expect(out[1]).not.toBe(atLimit);
    expect(out[2]).toBe(past);
    expect(errorRecords(`${output}.errors.jsonl`)).toEqual([
      { line: 3, code: "E_TOO_LARGE", reason: expect.stringContaining(`more than ${kMaxRunDepth} levels deep`) },
    ]);
  });

  it("says where a line stops being JSON, never what it holds (a key cut short stays out of the error records)", async () => {
    const key = "sk-proj-Q7w8E9r0T1y2U3i4O5p6";
    const bad = [
      `{"id":"a","api_key": ${key}, "messages": []}`, // V8 quotes around the fault
      `{"api_key": "${key}`, // cut short
      key.slice(0, 16), // short enough to be quoted whole
      `${key}${key}`, // quoted from its start
      `{"messages": [], "api_key": "${key}"} ${key}`, // quoted to its end
    ];
    const { output, run } = batch([runs[0], ...bad], workers);
    await run();
    const errors = errorRecords(`${output}.errors.jsonl`);
    expect(errors.map((e) => e.code)).toEqual(bad.map(() => "E_BAD_INPUT"));
    for (const e of errors) {
      expect(e.reason).toMatch(/^not JSON: /);
      for (let i = 0; i + 4 <= key.length; i++) expect(e.reason, e.reason).not.toContain(key.slice(i, i + 4));
    }
    expect(errors.map((e) => e.reason)).toEqual([
      `not JSON: Unexpected character at position ${bad[0].indexOf(key)}`,
      `not JSON: Unterminated string in JSON at position ${bad[1].length}`,
      "not JSON: Unexpected character",
      "not JSON: Unexpected character at position 0",
      `not JSON: Unexpected non-whitespace character after JSON at position ${bad[4].indexOf("} ") + 2}`,
    ]);
  });

  it("writes a line over the line limit through byte for byte as it is read, with an E_TOO_LARGE record, in its place; under strict it stops there", async () => {
    const long = runs[1].replace('"role":', `"pad":"${"x".repeat(300_000)}","role":`); // a run, over the limit
    const notRun = `[${"1,".repeat(200_000)}1]`;
    const input = [runs[0], long, runs[2], notRun, runs[3]];
    const options = { maxLineBytes: 2 ** 18, chunkBytes: 50_000 };
    const { output, run } = batch(input, workers, options);
    expect(await run()).toMatchObject({ runs: 5, compacted: 3, errors: 2, lines: 5 });
    const out = outLines(output);
    expect(out).toHaveLength(5);
    expect([out[1], out[3]]).toEqual([long, notRun]);
    for (const i of [0, 2, 4]) expect(out[i]).not.toBe(input[i]);
    const errors = errorRecords(`${output}.errors.jsonl`);
    expect(errors.map((e) => [e.line, e.code])).toEqual([
      [2, "E_TOO_LARGE"],
      [4, "E_TOO_LARGE"],
    ]);
    expect(errors[0].reason).toBe(
      `a line of ${(Buffer.byteLength(long) / 2 ** 20).toFixed(1)} MB, over --max-line-mb 0.25: written through unparsed (raise --max-line-mb to compact it)`,
    );

    const strict = batch(input, workers, { ...options, strict: true });
    const err = await rejection(strict.run());
    expect(err.code).toBe("E_TOO_LARGE");
    expect(err.message).toContain(`${strict.input}:2: a line over --max-line-mb 0.25`);
    expect(outLines(strict.output)).toHaveLength(1);
  });

  it("names a field whose value it refuses, never echoing the value (a key where the role goes), in every format; a role name is still named", async () => {
    const key = "sk-proj-Q7w8E9r0T1y2U3i4O5p6";
    const bad = [
      `[{"role":"${key}","content":"hi"}]`,
      `[{"type":"message","role":"${key}","content":"hi"}]`,
      `{"system":"s","messages":[{"role":"${key}","content":[{"type":"text","text":"hi"}]}]}`,
      `[{"role":"${key}","content":[{"type":"text","text":"hi"}]}]`,
      `[{"type":"${key}","content":"hi"}]`,
      `[{"role":"wizard","content":"hi"}]`,
    ];
    for (const format of ["auto", "openai-chat", "openai-responses", "anthropic", "ai-sdk", "langchain"] as const) {
      const { output, run } = batch(bad, workers, { format });
      await run();
      const errors = errorRecords(`${output}.errors.jsonl`);
      expect(errors.length, format).toBeGreaterThanOrEqual(4);
      for (const e of errors) expect(e.reason, `${format}: ${e.reason}`).not.toContain(key.slice(8, 16));
      const wizard = errors.find((e) => e.line === bad.length);
      if (wizard?.code === "E_UNKNOWN_ROLE") expect(wizard.reason, format).toContain('"wizard"');
    }
  });

  it("stops before any run with E_STORE_WRITE naming the offload dir when it is a file", async () => {
    const plain = fresh("plain-offload");
    writeFileSync(plain, "not a directory");
    const { output, run } = batch(runs, workers, { offloadDir: plain });
    const err = await rejection(run());
    expect(err.code).toBe("E_STORE_WRITE");
    expect(err.message).toContain(`cannot use ${plain} as the offload dir: ENOTDIR`);
    expect(existsSync(output)).toBe(false);
    expect(existsSync(`${output}.errors.jsonl`)).toBe(false);
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
    // Nothing was written whose refs would not resolve: the dir is refused before the output is opened.
    expect(existsSync(output)).toBe(false);
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
