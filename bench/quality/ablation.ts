/**
 * `npm run bench:ablation [-- --budgets 8000,32000] [--points 40] [--runs N] [--docs]`: what
 * each relevance mechanism of the tiered compactor is worth. The corpus (every file of
 * ../shared/corpus, pooled) is replayed (the
 * quality bench's replay and metrics) through ctxfold with its defaults, then with each
 * mechanism switched off alone — supersession, focus extracts, the fact ledger, the fill target
 * chosen from the evidence/cost frontier (back to the earlier 0.6) — and through the tail baseline;
 * each row gives next-step evidence recall, cache-priced cost per call (Anthropic pricing), budget fill and the
 * cache prefix per budget, and whether the five invariants held. --docs rewrites the
 * ablation:begin / ablation:end section.
 */
import { ctxfold, type Contender } from "../../src/eval/contenders.js";
import { kPricing } from "../../src/eval/metrics.js";
import { replayRuns } from "../../src/eval/replay.js";
import { tailBaseline } from "../../src/eval/tail-baseline.js";
import type { EvalMetrics } from "../../src/eval/types.js";
import type { CompactorConfig } from "../../src/policy/index.js";
import { rewriteDocSection } from "../lib.js";
import { corpusFiles, kCorpusDir, loadRuns } from "./corpus.js";

/** Each mechanism off alone: its row's name and the settings that switch it off. */
export const kAblations: readonly { name: string; config: Omit<CompactorConfig, "store"> }[] = [
  { name: "ctxfold (defaults)", config: {} },
  { name: "without supersession", config: { supersede: false } },
  { name: "without focus extracts", config: { focusTokens: 0 } },
  { name: "without fact ledger", config: { ledgerRatio: 0 } },
  { name: "without the fill target chosen from the frontier (targetRatio 0.6, as before)", config: { targetRatio: 0.6 } },
];

const arg = (flag: string) => {
  const at = process.argv.indexOf(flag);
  return at < 0 ? undefined : process.argv[at + 1];
};

const pct = (x: number | null) => (x === null ? "n/a" : `${(x * 100).toFixed(1)}%`);
const num = (x: number | null) => (x === null ? "n/a" : Math.round(x).toLocaleString("en-US"));

/** The five invariants as one cell: "100%" when all held, else what missed. */
function invariants(m: EvalMetrics): string {
  const checks: [string, number | null][] = [
    ["within budget", m.withinBudget],
    ["violation-free", m.violationFree],
    ["critical verbatim", m.criticalVerbatim],
    ["failed visible", m.failedVisible],
    ["recoverable", m.recoverable],
  ];
  const missed = checks.filter(([, v]) => v !== null && v < 1 - 1e-9).map(([k, v]) => `${k} ${pct(v)}`);
  return missed.length ? missed.join(", ") : "100%";
}

async function main(): Promise<void> {
  if (corpusFiles().length === 0) {
    process.stdout.write(`bench:ablation skipped: no corpus in ${kCorpusDir} (needs ../shared beside the checkout)\n`);
    return;
  }
  const budgets = (arg("--budgets") ?? "8000,32000").split(",").map(Number);
  const points = Number(arg("--points") ?? 40);
  const runs = loadRuns(arg("--runs") === undefined ? undefined : Number(arg("--runs")));
  const contenders: Contender[] = [];
  for (const a of kAblations) contenders.push(await ctxfold(a.config, a.name));
  contenders.push(tailBaseline());
  const started = performance.now();
  const { metrics, prompts } = await replayRuns(runs, contenders, {
    budgets,
    points,
    pricing: kPricing.anthropic,
    onProgress: (done, total) => {
      if (done % 50 === 0 || done === total) process.stderr.write(`  ${done}/${total} runs, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
    },
  });
  const head = budgets.flatMap((b) => [`evidence ${b / 1000}k`, `cost/call ${b / 1000}k`, `fill ${b / 1000}k`, `cache prefix ${b / 1000}k`]);
  const out = [
    `Dev corpus, ${runs.length} runs, ${prompts} prompt points (at most ${points} a run), ${new Date().toISOString().slice(0, 10)}; cost per call at Anthropic pricing (cached ×0.1, the rest ×1.25), budget fill as the median.`,
    "",
    `| configuration | ${head.join(" | ")} | invariants |`,
    `|---|${head.map(() => "---:").join("|")}|---|`,
  ];
  for (const c of contenders) {
    const cells = budgets.flatMap((b) => {
      const m = metrics.get(b)!.get(c)!;
      return [pct(m.evidenceRecall), num(m.costPerCall), pct(m.budgetFill.p50), m.cachePrefix === null ? "n/a" : m.cachePrefix.toFixed(3)];
    });
    const inv = budgets.map((b) => invariants(metrics.get(b)!.get(c)!));
    out.push(
      `| ${c.name} | ${cells.join(" | ")} | ${c.name === "tail baseline" ? inv.map((v, k) => `${budgets[k] / 1000}k: ${v}`).join("; ") : [...new Set(inv)].join("; ")} |`,
    );
  }
  const md = out.join("\n");
  if (process.argv.includes("--docs")) rewriteDocSection("ablation", md);
  process.stdout.write(md + "\n");
}

await main();
