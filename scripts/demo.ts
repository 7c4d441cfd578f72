/**
 * `npm run demo`: the main job before your eyes. One coding agent's history (generated, in
 * OpenAI chat format) is compacted to a budget by the tiered compactor: the tokens before and
 * after, what each stage did, the compacted messages (what the next model call sees), and one
 * removed original recalled by its ref. Then a batch of runs in all five provider formats goes
 * through the batch engine, as `ctxfold compact` runs it, and its closing summary is printed.
 * DEMO_RUNS sets the batch's size (default 200).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { kFormats, renderMessages } from "../src/adapters/index.js";
import { summaryTable } from "../src/cli/commands/compact.js";
import { generateRun, generateRuns } from "../src/gen/run.js";
import { createCompactor } from "../src/policy/index.js";
import { runBatch } from "../src/pool/engine.js";
import { createMemoryStore } from "../src/store/index.js";

const count = Number(process.env.DEMO_RUNS ?? 200);
const num = (n: number) => Math.round(n).toLocaleString("en-US");

/** A wire message in one line: role, then its text or its calls, cut to `width`. */
function oneLine(m: Record<string, unknown>, width: number): string {
  const calls = Array.isArray(m.tool_calls)
    ? (m.tool_calls as { function: { name: string; arguments: string } }[]).map((c) => `${c.function.name}(${c.function.arguments})`).join(" ")
    : "";
  const content =
    typeof m.content === "string" ? m.content : Array.isArray(m.content) ? (m.content as { text?: string }[]).map((p) => p.text ?? "").join(" ") : "";
  const body = `${content}${calls ? ` → ${calls}` : ""}`.replace(/\s+/g, " ").trim();
  const head = `${String(m.role).padEnd(9)} `;
  return head + (body.length > width - head.length ? `${body.slice(0, width - head.length - 1)}…` : body);
}

async function main(): Promise<void> {
  const out: string[] = [];
  // 1. One run, compacted.
  const run = generateRun({ seed: 3, steps: 24 });
  const wire = renderMessages(run.messages, "openai-chat") as Record<string, unknown>[];
  const store = createMemoryStore();
  const compactor = createCompactor({ store });
  const before = compactor.measure(run.messages);
  const budget = Math.round((before * 0.7) / 500) * 500;
  const t = performance.now();
  const r = await compactor.compact(wire, { budget });
  const ms = performance.now() - t;
  out.push(`A coding agent's history: ${wire.length} messages (OpenAI chat), ${num(r.tokensBefore)} tokens; budget ${num(budget)}.`);
  out.push("");
  out.push(`const r = await createCompactor().compact(messages, { budget: ${budget} })   // ${ms.toFixed(0)} ms`);
  out.push(
    `  tokens ${num(r.tokensBefore)} → ${num(r.tokensAfter)} (${((1 - r.tokensAfter / r.tokensBefore) * 100).toFixed(0)}% saved), tier ${r.tier}, status ${r.status}, ${(r.messages as unknown[]).length} messages, ${new Set(r.refs).size} refs`,
  );
  out.push("");
  out.push("What each stage did:");
  for (const s of r.stages) {
    out.push(
      `  ${`${s.stage} ${s.name}`.padEnd(22)} ${String(s.compacted).padStart(3)} of ${String(s.candidateCount).padStart(3)} compacted   ${num(s.tokensBefore).padStart(7)} → ${num(s.tokensAfter).padStart(7)} tokens`,
    );
  }
  out.push("");
  out.push("The compacted messages (what the next call sends), one line each; ✂ marks one compacted, its original behind a ref:");
  const compacted = (r.messages as unknown as Record<string, unknown>[]).map(
    (m) => `${/workspace\/outputs\//.test(JSON.stringify(m)) ? "✂" : " "} ${oneLine(m, 108)}`,
  );
  const shown = compacted.length <= 24 ? compacted : [...compacted.slice(0, 14), `  … ${compacted.length - 22} more …`, ...compacted.slice(-8)];
  for (const line of shown) out.push(`  ${line}`);
  out.push("");
  // 2. A removed original, recalled.
  const ref = r.refs.find((x) => /\/output_/.test(x)) ?? r.refs[0];
  const original = Buffer.from(store.get(ref)).toString("utf8");
  out.push(`Recalled by its ref: store.get("${ref}")  (${num(Buffer.byteLength(original))} bytes, byte for byte the original)`);
  for (const line of original
    .split("\n")
    .filter((l) => l.trim())
    .slice(0, 4)
    .map((l) => l.replace(/\t/g, "  ")))
    out.push(`  │ ${line.length > 100 ? `${line.slice(0, 99)}…` : line}`);
  out.push("");
  process.stdout.write(out.join("\n") + "\n");

  // 3. A batch in all five formats, through the batch engine.
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-demo-"));
  try {
    const input = path.join(dir, "runs.jsonl");
    writeFileSync(
      input,
      generateRuns(count, 1000)
        .map((g, i) => JSON.stringify(renderMessages(g.messages, kFormats[i % kFormats.length])))
        .join("\n") + "\n",
    );
    const offloadDir = path.join(dir, "out.offload");
    const summary = await runBatch({ input, output: path.join(dir, "out.jsonl"), budget: 8000, format: "auto", mode: "tiered", workers: 1, offloadDir });
    process.stdout.write(
      `ctxfold compact runs.jsonl -o out.jsonl --budget 8000   (${count} runs in ${kFormats.length} formats)\n${summaryTable({ ...summary, offloadDir: "out.jsonl.offload" })}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
