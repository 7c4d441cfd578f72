/**
 * `npm run demo`: the main job on generated data. Generated agent runs are rendered in all five
 * provider formats and parsed back to the canonical model, one batched WASM pass hashes and
 * estimates every text, the estimate is checked against exact o200k_base counts on a sample,
 * the runs are validated per provider, one run is cut into turns and tool-category groups, and
 * every run is compacted to an 8k budget by the tiered compactor in process, and then the same
 * runs, written as JSONL in all five formats, go through the batch engine's worker pool (what
 * `ctxfold compact` does), whose closing summary is printed.
 */
import { performance } from "node:perf_hooks";
import { kAdapters, kFormats, type Format } from "../src/adapters/index.js";
import { getCore } from "../src/core/core-instance.js";
import { groupSteps, type ToolCategory } from "../src/steps/group-steps.js";
import { hashToHex } from "../src/core/hash.js";
import { TurnMap } from "../src/session/turn-map.js";
import { generateRuns } from "../src/gen/run.js";
import type { ToolCallPart, ToolResultPart } from "../src/model/schema.js";
import { messageTexts } from "../src/model/texts.js";
import { TokenCounter } from "../src/tokens/token-counter.js";
import { WEIGHT_TABLE } from "../src/tokens/weights-table.js";
import { validate, newViolations } from "../src/validate/index.js";
import { renderMessages } from "../src/adapters/index.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { runBatch } from "../src/pool/engine.js";
import { summaryTable } from "../src/cli/commands/compact.js";
import { createCompactor } from "../src/policy/index.js";
import { createMemoryStore } from "../src/store/index.js";

const count = Number(process.env.DEMO_RUNS ?? 200);

const categoryOf = (tool: string): ToolCategory =>
  /read|write|file|cat|list/.test(tool) ? "file" : /bash|shell/.test(tool) ? "shell" : /grep|search/.test(tool) ? "search" : /fetch|url/.test(tool) ? "web" : "other";

const ms = (t: number) => `${t.toFixed(0)} ms`;

async function main(): Promise<void> {
  const t0 = performance.now();
  const runs = generateRuns(count, 1000);
  const tGen = performance.now() - t0;
  const messages = runs.reduce((n, r) => n + r.messages.length, 0);

  // Every format: render the canonical runs, serialise, parse back, render again (rebuilt).
  const formats = kFormats.map((format: Format) => {
    const a = kAdapters[format];
    const t = performance.now();
    let bytes = 0;
    let same = 0;
    for (const r of runs) {
      const json = JSON.stringify(a.render(r.messages, { reuse: false }));
      bytes += json.length;
      const again = JSON.stringify(a.render(a.parse(JSON.parse(json), { source: r.id }), { reuse: false }));
      if (again === json) same++;
    }
    return { format, bytes, same, time: performance.now() - t };
  });

  const texts = runs.flatMap((r) => messageTexts(r.messages));
  const utf8 = texts.reduce((n, s) => n + Buffer.byteLength(s), 0);
  const core = getCore();
  core.measureStrings(texts.slice(0, 100), WEIGHT_TABLE); // instantiate and warm up
  const t1 = performance.now();
  const { hashes, estimates } = core.measureStrings(texts, WEIGHT_TABLE);
  const tMeasure = performance.now() - t1;
  let o200k = 0;
  let cl100k = 0;
  for (let i = 0; i < texts.length; i++) {
    o200k += estimates[2 * i];
    cl100k += estimates[2 * i + 1];
  }
  const distinct = new Set(hashes).size;

  // Exact counts on a sample (the BPE counter is ~150x slower than the estimator).
  const counter = new TokenCounter({ encoding: "o200k_base" });
  const sample = texts.filter((_, i) => i % 50 === 0);
  const t2 = performance.now();
  let exact = 0;
  let est = 0;
  for (const s of sample) {
    exact += counter.exact(s);
    est += counter.estimate(s);
  }
  const tExact = performance.now() - t2;

  const t3 = performance.now();
  const invalid = kFormats.map((f) => [f, runs.filter((r) => !validate(r.messages, f).ok).length] as const);
  const tValidate = performance.now() - t3;

  const run = runs[0]!;
  const turns = TurnMap.fromTurnIndices(Int32Array.from(run.messages, (m) => m.turn?.index ?? -1));
  const results = new Map(run.messages.flatMap((m) => m.parts.filter((p): p is ToolResultPart => p.type === "tool-result").map((p) => [p.callId, p] as const)));
  const calls = run.messages.flatMap((m) => m.parts.filter((p): p is ToolCallPart => p.type === "tool-call"));
  const grouped = groupSteps(calls.map((c) => ({ category: categoryOf(c.name), success: results.get(c.id)?.isError !== true })));

  // The main job: every run compacted to 8k tokens, as an OpenAI Chat request.
  const budget = 8000;
  const store = createMemoryStore();
  const compactor = createCompactor({ store });
  const tiers = { normal: 0, pressure: 0, critical: 0 };
  let before = 0;
  let after = 0;
  let infeasible = 0;
  let refs = 0;
  let broken = 0;
  const t4 = performance.now();
  for (const r of runs) {
    const res = await compactor.compact(renderMessages(r.messages, "openai-chat"), { budget, format: "openai-chat" });
    tiers[res.tier]++;
    before += res.tokensBefore;
    after += res.tokensAfter;
    refs += res.refs.length;
    if (res.status !== "ok") infeasible++;
    if (newViolations(validate(r.messages, "openai-chat"), validate(res.canonical, "openai-chat")).length > 0) broken++;
  }
  const tCompact = performance.now() - t4;

  const mb = utf8 / 1e6;
  const lines = [
    `ctxfold demo: ${count} generated agent runs, ${messages.toLocaleString()} messages (generated in ${ms(tGen)})`,
    ...formats.map((f) => `  ${f.format.padEnd(18)}    ${(f.bytes / 1e6).toFixed(1)} MB of JSON; render, parse, render again: ${f.same}/${count} byte-identical, ${ms(f.time)}`),
    `  hash + estimate pass  ${texts.length.toLocaleString()} texts, ${mb.toFixed(1)} MB in ${ms(tMeasure)} = ${(mb / (tMeasure / 1000)).toFixed(0)} MB/s in one batched WASM pass`,
    `  estimated tokens      o200k_base ${Math.round(o200k).toLocaleString()}   cl100k_base ${Math.round(cl100k).toLocaleString()}`,
    `  distinct contents     ${distinct.toLocaleString()} of ${texts.length.toLocaleString()} (xxh64 content hashes), first ${hashToHex(hashes[0])}`,
    `  exact check (sample)  ${sample.length} texts: exact ${exact.toLocaleString()} vs estimate ${est.toLocaleString()} (${(((est - exact) / exact) * 100).toFixed(2)}%), exact counting took ${ms(tExact)}`,
    `  validation            runs with provider errors: ${invalid.map(([f, n]) => `${f} ${n}`).join(", ")} (${ms(tValidate)})`,
    `  run 0                 ${run.messages.length} messages in ${turns.turnCount()} turns; ${calls.length} tool calls in ${grouped.runs.length} category runs:`,
    ...grouped.runs.slice(0, 6).map((r) => `                          calls ${r.start + 1}..${r.start + r.count}: ${r.count} ${r.category}${r.failures ? ` (${r.failures} failed)` : ""}`),
    `  compact to ${budget}       ${count} runs in ${ms(tCompact)} (${(tCompact / count).toFixed(1)} ms a run): tiers normal ${tiers.normal}, pressure ${tiers.pressure}, critical ${tiers.critical}; ` +
      `tokens ${before.toLocaleString()} → ${after.toLocaleString()} (${((1 - after / before) * 100).toFixed(0)}% saved); ${infeasible} over budget; ${broken} with new provider violations; ` +
      `${refs.toLocaleString()} refs, ${(store.size / 1e6).toFixed(1)} MB offloaded`,
  ];
  process.stdout.write(lines.join("\n") + "\n");

  // The batch engine: the runs as JSONL (each format in turn, half of them with other fields
  // beside "messages"), compacted by a 2-worker pool with originals offloaded to packs.
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-demo-"));
  try {
    const input = path.join(dir, "runs.jsonl");
    writeFileSync(input, runs.map((r, i) => {
      const wire = renderMessages(r.messages, kFormats[i % kFormats.length]);
      const env = Array.isArray(wire) ? { messages: wire } : (wire as object);
      return JSON.stringify(i % 2 ? { id: `run-${i}`, ...env } : wire);
    }).join("\n") + "\n");
    const offloadDir = path.join(dir, "out.offload");
    const summary = await runBatch({ input, output: path.join(dir, "out.jsonl"), budget, format: "auto", mode: "tiered", workers: 2, offloadDir, inProcessBelow: 0 });
    process.stdout.write(`\nctxfold compact runs.jsonl -o out.jsonl --budget ${budget} --workers 2\n${summaryTable({ ...summary, offloadDir: "out.offload" })}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
