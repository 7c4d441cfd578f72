/**
 * `npm run demo`: the main job on generated data. Until the compactor lands this measures a
 * generated corpus of agent transcripts the way compaction will: one batched WASM pass hashes
 * and estimates every part, the estimate is checked against exact o200k_base counts on a
 * sample, and one run is cut into turns and tool-category groups.
 */
import { performance } from "node:perf_hooks";
import { getCore } from "../src/core/core-instance.js";
import { groupSteps, type ToolCategory } from "../src/core/group-steps.js";
import { hashToHex } from "../src/core/hash.js";
import { TurnMap } from "../src/core/turn-map.js";
import { generateTranscript, transcriptTexts, type ChatMessage } from "../src/gen/transcript.js";
import { TokenCounter } from "../src/tokens/token-counter.js";

const runs = Number(process.env.DEMO_RUNS ?? 200);
const steps = Number(process.env.DEMO_STEPS ?? 40);

const categoryOf = (tool: string): ToolCategory =>
  /read|write|file|cat/.test(tool) ? "file" : /bash|shell/.test(tool) ? "shell" : /grep|search/.test(tool) ? "search" : /fetch|url/.test(tool) ? "web" : "other";

function main(): void {
  const t0 = performance.now();
  const transcripts: ChatMessage[][] = [];
  for (let i = 0; i < runs; i++) transcripts.push(generateTranscript({ seed: 1000 + i, steps }));
  const texts = transcripts.flatMap(transcriptTexts);
  const bytes = texts.reduce((n, s) => n + Buffer.byteLength(s), 0);
  const tGen = performance.now() - t0;

  const core = getCore();
  core.measureStrings(texts.slice(0, 100)); // instantiate and warm up
  const t1 = performance.now();
  const { hashes, estimates } = core.measureStrings(texts);
  const tMeasure = performance.now() - t1;

  let o200k = 0;
  let cl100k = 0;
  for (let i = 0; i < texts.length; i++) {
    o200k += estimates[2 * i];
    cl100k += estimates[2 * i + 1];
  }
  const distinct = new Set(hashes).size;

  // Exact counts on a sample (js-tiktoken is ~1000x slower than the estimator).
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

  const run = transcripts[0];
  const turnIds = new Int32Array(run.length);
  let turn = -1;
  run.forEach((m, i) => {
    if (m.role === "assistant") turn++;
    turnIds[i] = m.role === "system" ? -1 : Math.max(0, turn);
  });
  const turns = TurnMap.fromTurnIndices(turnIds);
  const toolSteps = run.filter((m) => m.role === "assistant" && m.tool_calls).flatMap((m) => m.tool_calls!);
  const results = new Map(run.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content ?? ""]));
  const grouped = groupSteps(toolSteps.map((c) => ({
    category: categoryOf(c.function.name),
    success: !/^(Error|Traceback|exit code 1|HTTP 5)/.test(results.get(c.id) ?? ""),
  })));

  const mb = bytes / 1e6;
  const lines = [
    `ctxfold demo: ${runs} generated agent runs, ${steps} tool steps each`,
    `  texts measured        ${texts.length.toLocaleString()} (${mb.toFixed(1)} MB UTF-8; generated in ${(tGen / 1000).toFixed(1)} s)`,
    `  hash + estimate pass  ${tMeasure.toFixed(1)} ms  = ${(mb / (tMeasure / 1000)).toFixed(0)} MB/s in one batched WASM pass`,
    `  estimated tokens      o200k_base ${Math.round(o200k).toLocaleString()}   cl100k_base ${Math.round(cl100k).toLocaleString()}`,
    `  distinct contents     ${distinct.toLocaleString()} of ${texts.length.toLocaleString()} (xxh64 content hashes), first ${hashToHex(hashes[0])}`,
    `  exact check (sample)  ${sample.length} texts: exact ${exact.toLocaleString()} vs estimate ${est.toLocaleString()} (${(((est - exact) / exact) * 100).toFixed(2)}%), js-tiktoken took ${(tExact / 1000).toFixed(1)} s`,
    `  run 0                 ${run.length} messages in ${turns.turnCount()} turns; ${toolSteps.length} tool steps in ${grouped.runs.length} category runs:`,
    ...grouped.runs.slice(0, 6).map((r) => `                          steps ${r.start + 1}..${r.start + r.count}: ${r.count} ${r.category}${r.failures ? ` (${r.failures} failed)` : ""}`),
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

main();
