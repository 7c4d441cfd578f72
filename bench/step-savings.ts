/**
 * `npm run bench:steps [-- --docs]`: the step compactor's "Token Savings by Task Length" table on the
 * dev corpus. For N = 5, 10, 20, 50, 100 it takes every run with at least N tool steps, cuts it
 * after the N-th step's result (the prompt the agent would send next) and counts exact o200k
 * tokens (js-tiktoken) of the messages' texts before and after step compaction with the default
 * config (compactStepMessages: older steps become one summary; recent steps stay in full).
 * "History" leaves out the messages before the first step (system prompt and task, kept
 * verbatim), which is what the design's table counts.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { openaiChatAdapter } from "../src/adapters/index.js";
import type { Message } from "../src/model/schema.js";
import { messageTexts } from "../src/model/texts.js";
import { compactStepMessages } from "../src/steps/messages.js";
import { extractSteps } from "../src/steps/reducer.js";
import { createMemoryStore } from "../src/store/index.js";
import { TokenCounter } from "../src/tokens/token-counter.js";
import { rewriteDocSection } from "./lib.js";

const kCorpus = fileURLToPath(new URL("../../../shared/corpus/dev.jsonl.gz", import.meta.url));
const kLengths = [5, 10, 20, 50, 100];
/** The step compactor's own figures (its "Token Savings by Task Length" table). */
const kSeed: Record<number, [number, number]> = { 5: [2000, 2000], 10: [4000, 1500], 20: [8000, 2000], 50: [20000, 2500], 100: [40000, 3000] };

function main(): void {
  if (!existsSync(kCorpus)) throw new Error(`needs ${kCorpus} (../shared beside the checkout)`);
  const counter = new TokenCounter({ encoding: "o200k_base" });
  const tokens = (ms: readonly Message[]) => messageTexts(ms).reduce((n, t) => n + counter.exact(t), 0);
  const runs = gunzipSync(readFileSync(kCorpus))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const r = JSON.parse(l) as { id: string; messages: unknown[] };
      return openaiChatAdapter.parse(r.messages, { source: r.id });
    });
  const rows: string[] = [];
  for (const n of kLengths) {
    let before = 0;
    let after = 0;
    let prefix = 0;
    let count = 0;
    const savings: number[] = [];
    for (const messages of runs) {
      const { steps } = extractSteps(messages);
      if (steps.length < n) continue;
      const last = steps[n - 1];
      const cut = messages.slice(0, (last.resultMessage ?? last.callMessage) + 1);
      const b = tokens(cut);
      const a = tokens(compactStepMessages(cut, { reducer: { store: createMemoryStore() } }).messages);
      // Messages before the first step (system prompt, task) stay verbatim: the rest is history.
      prefix += tokens(messages.slice(0, steps[0].callMessage));
      before += b;
      after += a;
      savings.push(1 - a / b);
      count++;
    }
    savings.sort((x, y) => x - y);
    const [sb, sa] = kSeed[n];
    const pct = (x: number) => `${Math.round(x * 100)}%`;
    const mean = (x: number) => Math.round(x / count);
    const hb = before - prefix;
    const ha = after - prefix;
    rows.push(
      `| ${n} | ${count} | ${mean(before)} → ${mean(after)} | ${pct(1 - after / before)} | ${pct(savings[count >> 1])} | ${mean(hb)} → ${mean(ha)} | ${pct(1 - ha / hb)} | ${sb} → ${sa} (${pct(1 - sa / sb)}) |`,
    );
    process.stderr.write(`  ${n} steps: ${count} runs\n`);
  }
  const md = [
    "| steps | runs | prompt tokens, mean | savings | median run | history tokens, mean | history savings | design's figure (history) |",
    "|---:|---:|---:|---:|---:|---:|---:|---|",
    ...rows,
  ].join("\n");
  if (process.argv.includes("--docs")) rewriteDocSection("steps", md);
  process.stdout.write(md + "\n");
}

main();
