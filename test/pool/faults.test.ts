/**
 * The batch engine under hostile input, in-process and in the pool: fast-check composes files of
 * generated runs in every format and hostile lines (truncated, deeply nested, huge, lone
 * surrogates, invalid UTF-8, BOM, CRLF, wrong types, blank), and every file must come out with
 * one output line per input line, in order; lines passed through byte for byte (every line with
 * an error record among them); every ref in the output resolving to bytes whose hash its name
 * carries; and, where no run failed, every stored original reachable from the output's refs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { renderMessages, type Format } from "../../src/adapters/index.js";
import { contentAddress } from "../../src/core/content-address.js";
import { generateRuns } from "../../src/gen/run.js";
import { runBatch } from "../../src/pool/engine.js";
import { linesOf } from "../../src/pool/input.js";
import { createPackStore, reachableRefs } from "../../src/store/index.js";

const kBudget = 4000;
const kFormats: Format[] = ["openai-chat", "anthropic", "openai-responses", "ai-sdk", "langchain"];
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Generated runs in every format, bare or in an object with other fields. */
const kGood: string[] = generateRuns(16, 77).map((r, i) => {
  const m = renderMessages(r.messages, kFormats[i % kFormats.length]);
  const env = Array.isArray(m) ? { messages: m } : (m as object);
  return JSON.stringify(i % 2 ? { id: `run-${i}`, ...env, meta: { i } } : m);
});
/** An OpenAI chat run over the budget, with room for hostile fields. */
const overBudget = (extra: Record<string, unknown> = {}, output = "a line of tool output\n".repeat(3000)) => ({
  id: "hostile",
  messages: [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the bug." },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: '{"command":"cat log"}' } }] },
    { role: "tool", tool_call_id: "c1", content: output },
    { role: "assistant", content: "Done." },
  ],
  ...extra,
});
const deep = (n: number) => "[".repeat(n) + "]".repeat(n);

const bytes = (s: string) => Buffer.from(s, "utf8");
/** A line by a short description (so that a failing case prints as one), and its bytes. */
type LineSpec =
  | ["good" | "bom" | "cr", number]
  | ["fixed", string]
  | ["truncated", number, number]
  | ["deep-line" | "deep-message" | "huge" | "surrogates" | "invalid-utf8"];
function lineBytes(spec: LineSpec): Buffer {
  switch (spec[0]) {
    case "good":
      return bytes(kGood[spec[1]]);
    case "bom":
      return bytes(`\uFEFF${kGood[spec[1]]}`);
    case "cr":
      return bytes(`${kGood[spec[1]]}\r`);
    case "fixed":
      return bytes(spec[1]);
    case "truncated":
      return bytes(kGood[spec[1]].slice(0, Math.floor(kGood[spec[1]].length * spec[2])));
    // 5,000 levels of nesting in an extra field of the line, and of a message
    case "deep-line":
      return bytes(JSON.stringify(overBudget()).replace(/}$/, `,"extra":${deep(5000)}}`));
    case "deep-message":
      return bytes(JSON.stringify(overBudget()).replace('"content":"Done."', `"content":"Done.","extra":${deep(5000)}`));
    case "huge":
      return bytes(JSON.stringify(overBudget({}, "y".repeat(2_000_000))));
    case "surrogates":
      return bytes(JSON.stringify(overBudget()).replace("Fix the bug.", "Fix \\ud800 the \\udfff bug."));
    case "invalid-utf8": {
      const line = JSON.stringify(overBudget());
      return Buffer.concat([bytes(line.slice(0, 60)), Buffer.from([0xff, 0xfe, 0xc3]), bytes(line.slice(60))]);
    }
  }
}
const good = fc.nat(kGood.length - 1);
const kHostile: fc.Arbitrary<LineSpec>[] = [
  fc
    .constantFrom(
      "{not json",
      '{"messages": 5}',
      "42",
      "null",
      "[1,2]",
      '"a string"',
      '{"messages":[{"role":7}]}',
      '[{"role":"wizard","content":"hi"}]',
      "[]",
      "",
      "   ",
      "\t",
    )
    .map((s): LineSpec => ["fixed", s]),
  fc.tuple(good, fc.double({ min: 0, max: 1, noNaN: true })).map(([k, f]): LineSpec => ["truncated", k, f]),
  fc.constantFrom<LineSpec>(["deep-line"], ["deep-message"], ["huge"], ["surrogates"], ["invalid-utf8"]),
  good.map((k): LineSpec => ["bom", k]),
  good.map((k): LineSpec => ["cr", k]),
];
const line = fc.oneof({ arbitrary: good.map((k): LineSpec => ["good", k]), weight: 3 }, ...kHostile.map((arbitrary) => ({ arbitrary, weight: 1 })));
const file = fc.tuple(fc.array(line, { minLength: 1, maxLength: 10 }), fc.boolean());
function fileBytes([specs, newlineAtEnd]: [LineSpec[], boolean]): Buffer {
  const body = Buffer.concat(specs.flatMap((spec, i) => (i === 0 ? [lineBytes(spec)] : [Buffer.from("\n"), lineBytes(spec)])));
  return newlineAtEnd ? Buffer.concat([body, Buffer.from("\n")]) : body;
}

const splitLines = (b: Uint8Array) => [...linesOf(b)].map((l) => Buffer.from(l.raw));
const kRef = /workspace\/outputs\/[a-z0-9_-]{1,16}_([0-9a-f]{32})(?:-[0-9]+)?\.[a-z0-9_-]{1,10}/g;

async function compactFile(input: Buffer, pool: boolean) {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-faults-"));
  dirs.push(dir);
  const inFile = path.join(dir, "in.jsonl");
  const outFile = path.join(dir, "out.jsonl");
  const offloadDir = path.join(dir, "offload");
  writeFileSync(inFile, input);
  const summary = await runBatch({
    input: inFile,
    output: outFile,
    budget: kBudget,
    format: "auto",
    mode: "tiered",
    offloadDir,
    workers: pool ? 2 : 1,
    ...(pool ? { inProcessBelow: 0, chunkBytes: 64 * 1024 } : {}),
  });
  return { summary, out: readFileSync(outFile), errorsFile: `${outFile}.errors.jsonl`, offloadDir };
}

async function checkFile(input: Buffer, pool: boolean): Promise<void> {
  const { summary, out, errorsFile, offloadDir } = await compactFile(input, pool);
  const inLines = splitLines(input);
  const outLines = splitLines(out);
  // One output line per input line, in order, the output ending with a newline.
  expect(outLines.length).toBe(inLines.length);
  expect(out.at(-1)).toBe(0x0a);
  expect(summary.runs).toBe(inLines.filter((l) => l.toString("latin1").trim() !== "").length);
  let records: { line: number; code: string }[] = [];
  try {
    records = readFileSync(errorsFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { line: number; code: string });
  } catch {
    // no errors file: no line failed
  }
  expect(records.length).toBe(summary.errors);
  expect(records.every((r) => r.code !== "E_WORKER_CRASH")).toBe(true);
  const failed = new Set(records.map((r) => r.line - 1));
  inLines.forEach((l, i) => {
    // A line with an error record, or within the budget, passes through byte for byte;
    // any other line was a run and comes out as one.
    if (failed.has(i) || outLines[i].equals(l)) {
      expect(outLines[i].equals(l), `line ${i + 1}`).toBe(true);
      return;
    }
    expect(() => JSON.parse(outLines[i].toString("utf8")), `line ${i + 1}`).not.toThrow();
  });
  // Every ref resolves to bytes whose hash its name carries; every stored original is reachable.
  const text = out.toString("utf8");
  const store = createPackStore({ dir: offloadDir });
  for (const m of text.matchAll(kRef)) expect(contentAddress(store.get(m[0]))).toBe(m[1]);
  const reached = reachableRefs(store, [text]);
  let stored: string[] = [];
  try {
    stored = readdirSync(offloadDir)
      .filter((f) => f.endsWith(".idx"))
      .flatMap((f) =>
        readFileSync(path.join(offloadDir, f), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => `workspace/outputs/${(JSON.parse(l) as [string])[0]}`),
      );
  } catch {
    // nothing was stored
  }
  // A run that failed after storing something was written through whole (nothing of it is
  // missing from the output), so only a batch without failures must have no stray entries.
  if (summary.errors === 0) expect(stored.filter((ref) => !reached.has(ref))).toEqual([]);
}

describe("the batch engine under hostile input", () => {
  it("in-process: one line out per line in, in order; passed-through lines byte-identical; refs verified and reachable", async () => {
    await fc.assert(
      fc.asyncProperty(file, (f) => checkFile(fileBytes(f), false)),
      { numRuns: 40, seed: 16 },
    );
  }, 300_000);

  it("in the pool: the same", async () => {
    await fc.assert(
      fc.asyncProperty(file, (f) => checkFile(fileBytes(f), true)),
      { numRuns: 6, seed: 17 },
    );
  }, 300_000);
});
