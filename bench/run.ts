/**
 * `npm run bench [-- --scope hash,estimate,boundary,kernels,adapters] [--quick] [--json] [--docs]`
 *
 * Runs each scenario with tinybench, prints a markdown table per group with every contender's
 * throughput as a ratio to ctxfold's WASM path measured in the same run, checks the foundation's
 * speed targets, and writes bench/results/<scope>.json. --docs rewrites the bench
 * section (between the bench:begin / bench:end markers) with the tables and the machine.
 * `npm run bench:gate` (bench/gate.ts) measures ratios of these same cases (bench/pairs.ts) and
 * compares them with bench/baseline.json; `npm run bench:gate -- --from FILE` reads this
 * script's --quick --json output instead.
 *
 * CTXFOLD_BENCH_SLOWDOWN=TARGET:N[;TARGET:N...] (read by the bench harness only: bench/lib.ts's
 * runCases, bench/pairs.ts, bench/batch.ts) makes the cases TARGET names do their work N times
 * per measured call, to prove the gate trips (test/bench-gate.test.ts):
 * `hash:4` slows every ctxfold WASM case of the hash groups 4× (`hash 1 MB:4` only that group's;
 * `GROUP / NAME:N` any one case, e.g. `adapters, dev corpus / openai-chat parse + render:2`).
 * Never set it for real figures.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { adapterCases } from "./adapters.js";
import { boundaryCases } from "./boundary.js";
import { estimateCases } from "./estimate.js";
import { hashCases } from "./hash.js";
import { kernelCases } from "./kernels.js";
import { find, fmt, ratio, rewriteDocSection, runCases, type Case, type CaseResult } from "./lib.js";

const kScopes = ["hash", "estimate", "boundary", "kernels", "adapters"] as const;
type Scope = (typeof kScopes)[number];

interface Target {
  what: string;
  value: number;
  unit: string;
  goal: number;
  /** true when higher is better. */
  atLeast: boolean;
}

function parseArgs(argv: string[]): { scopes: Scope[]; quick: boolean; json: boolean; docs: boolean } {
  let scopes: Scope[] = [...kScopes];
  const at = argv.indexOf("--scope");
  if (at >= 0) {
    const want = (argv[at + 1] ?? "").split(",").filter(Boolean);
    const bad = want.filter((s) => !(kScopes as readonly string[]).includes(s));
    if (bad.length || want.length === 0) throw new Error(`--scope takes a comma list of ${kScopes.join(", ")}; got ${JSON.stringify(argv[at + 1] ?? "")}`);
    scopes = want as Scope[];
  }
  return { scopes, quick: argv.includes("--quick"), json: argv.includes("--json"), docs: argv.includes("--docs") };
}

function targets(results: CaseResult[], scopes: Scope[], quick: boolean): Target[] {
  const t: Target[] = [];
  const has = (g: string, n: string) => results.some((r) => r.group === g && r.name === n);
  if (scopes.includes("estimate")) {
    t.push({
      what: "estimator, 1 MB from a JS string",
      value: find(results, "estimate 1 MB", "ctxfold wasm").mbPerSec,
      unit: "MB/s",
      goal: 1000,
      atLeast: true,
    });
    const size = has("estimate 1 MB", "js-tiktoken (exact)") ? "1 MB" : "4 KB";
    t.push({
      what: `estimator vs js-tiktoken, ${size}${quick ? " (quick)" : ""}`,
      value: ratio(results, `estimate ${size}`, "ctxfold wasm", "js-tiktoken (exact)"),
      unit: "x",
      goal: 150,
      atLeast: true,
    });
  }
  if (scopes.includes("hash")) {
    t.push({ what: "hash, 1 MB from a JS string", value: find(results, "hash 1 MB", "ctxfold wasm").mbPerSec, unit: "MB/s", goal: 5000, atLeast: true });
    t.push({
      what: "hash vs xxhash-wasm h64, 1 MB",
      value: ratio(results, "hash 1 MB", "ctxfold wasm", "xxhash-wasm h64"),
      unit: "x",
      goal: 2.5,
      atLeast: true,
    });
    t.push({
      what: "hash vs xxhash-wasm h64, 200 B batched",
      value: ratio(results, "hash 200 B", "ctxfold wasm (batched)", "xxhash-wasm h64"),
      unit: "x",
      goal: 2,
      atLeast: true,
    });
  }
  if (scopes.includes("adapters") && has("adapters, dev corpus", "JSON.parse + JSON.stringify")) {
    t.push({
      what: "openai-chat parse + render vs JSON.parse + stringify",
      value: 1 / ratio(results, "adapters, dev corpus", "JSON.parse + JSON.stringify", "openai-chat parse + render"),
      unit: "x",
      goal: 0.5,
      atLeast: true,
    });
  }
  if (scopes.includes("boundary")) {
    const g = "boundary 200 B x1000";
    t.push({
      what: "boundary per 200 B string (layout, call, results)",
      value: find(results, g, "boundary only (layout, call, results)").nsPerItem,
      unit: "ns",
      goal: 100,
      atLeast: false,
    });
  }
  return t;
}

function tables(results: CaseResult[]): string {
  const out: string[] = [];
  const groups = [...new Set(results.map((r) => r.group))];
  for (const g of groups) {
    const rows = results.filter((r) => r.group === g);
    const base = rows.find((r) => r.name.startsWith("ctxfold wasm")) ?? rows[0];
    const perItem = rows.some((r) => r.items > 1);
    out.push(`| ${g} | MB/s | ${perItem ? "ns/item | " : "ms/call | "}vs ${base.name} |`, "|---|---:|---:|---:|");
    for (const r of rows) {
      const rel = r.mbPerSec / base.mbPerSec;
      out.push(
        `| ${r.name} | ${fmt(r.mbPerSec)} | ${perItem ? fmt(r.nsPerItem) : fmt(r.medianNs / 1e6)} | ${rel >= 1 ? fmt(rel) + "x" : "1/" + fmt(1 / rel)} |`,
      );
    }
    out.push("");
  }
  return out.join("\n");
}

function targetTable(ts: Target[]): string {
  const rows = ts.map((t) => {
    const ok = t.atLeast ? t.value >= t.goal : t.value <= t.goal;
    return `| ${t.what} | ${fmt(t.value)} ${t.unit} | ${t.atLeast ? "≥" : "≤"} ${t.goal} ${t.unit} | ${ok ? "met" : "**missed**"} |`;
  });
  return ["| target | measured | goal | |", "|---|---:|---:|---|", ...rows, ""].join("\n");
}

function machine(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const time = args.quick ? 150 : 300;
  const rounds = args.quick ? 1 : 3;
  const cases: Case[] = [];
  for (const s of args.scopes) {
    if (s === "hash") cases.push(...(await hashCases()));
    if (s === "estimate") cases.push(...estimateCases({ quick: args.quick }));
    if (s === "boundary") cases.push(...boundaryCases());
    if (s === "kernels") cases.push(...kernelCases());
    if (s === "adapters") cases.push(...adapterCases());
  }
  process.stderr.write(`ctxfold bench: ${cases.length} cases, ${rounds} rounds of ${time} ms each (best median kept), on ${machine()}\n`);
  const results = await runCases(cases, { time, rounds });
  const ts = targets(results, args.scopes, args.quick);
  const md = `Measured on ${machine()}${args.quick ? " (quick run)" : ""}.\n\n${tables(results)}\n${targetTable(ts)}`;
  const root = fileURLToPath(new URL("../../", import.meta.url));
  mkdirSync(`${root}bench/results`, { recursive: true });
  const report = { machine: machine(), quick: args.quick, scopes: args.scopes, results, targets: ts };
  writeFileSync(`${root}bench/results/${args.scopes.join("-")}${args.quick ? "-quick" : ""}.json`, JSON.stringify(report, null, 2) + "\n");
  if (args.docs) rewriteDocSection("bench", md);
  process.stdout.write(args.json ? JSON.stringify(report, null, 2) + "\n" : md + "\n");
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
