/**
 * `npm run bench:gate [-- --runs 3 (9 with --update)] [--scope hash,estimate,kernels,adapters,enormous,batch] [--tolerance 0.25]
 *   [--baseline FILE (default: this CPU's, see baselineFor)] [--from FILE] [--save FILE] [--update] [--json] [--no-confirm]`
 *
 * The CI bench gate. Measures the ratios bench/ratios.ts defines, all higher-is-better
 * (ctxfold's WASM path over its TypeScript twin, over peer libraries, its reading of enormous
 * tool outputs over counting their lines, ctxfold compact with 2 workers over 1), `--runs`
 * times, each in fresh processes: bench/pairs.ts (the quick bench's own cases and
 * bench/enormous.ts's, each ratio's two sides timed as interleaved blocks, which a loaded machine
 * moves far less than the quick bench's one-case-after-another figures) and a short bench:batch
 * (`batch.js --json --mb 20 --rss-gb 0 --no-corpus-once`: the dev corpus and one salted copy,
 * ~32 MB of unique runs). It takes each
 * ratio's median over the runs and compares it with bench/baseline.json:
 * - a ratio that fell by more than `--tolerance` (default kDefaultTolerance, 25%) of its baseline
 *   value fails, and so does one in the baseline that the run did not produce; a drop of exactly
 *   the tolerance passes; a ratio not in the baseline is reported as new and passes;
 * - before failing on a drop, it measures the scopes of the fallen ratios `--runs` times more and
 *   judges the median of all their runs (a burst of load on a shared machine can move one
 *   median past the tolerance; a real slowdown stays past it); --no-confirm skips that;
 * - prints a table (ratio, baseline, now, change, verdict, each run's value) on stdout, or the
 *   comparison as JSON with --json; progress on stderr;
 * - exit 0: every ratio within the tolerance or above; 1: a ratio regressed or is missing;
 *   2: the gate could not run (bad arguments, a malformed baseline — the message names the file
 *   and the field —, a bench that failed).
 * --update measures 9 runs unless --runs says otherwise.
 * --from FILE compares a saved measurement instead of measuring: a file written by --save (the
 * baseline's shape) or bench/run.ts --quick --json output (one report or an array of them; its
 * figures are noisier than the gate's own). --save FILE writes the measurement. --update
 * rewrites the baseline from the measurement, with the date, machine and Node version (with
 * --scope, the baseline's ratios of the scopes not run are kept). --scope measures only those
 * scopes; the baseline's ratios of the others are reported as "not run" and do not fail.
 * CTXFOLD_BENCH_SLOWDOWN (see bench/run.ts) passes through to the benches; the gate says so.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { kSlowdownEnv, type CaseResult } from "./lib.js";
import {
  batchRatios,
  benchRatios,
  compareRatios,
  formatComparison,
  kDefaultTolerance,
  kGateScopes,
  medianRatios,
  parseBaseline,
  parseBaselineText,
  round4,
  scopeOf,
  type BatchReport,
  type Baseline,
  type GateScope,
  type RatioSet,
} from "./ratios.js";

const kRoot = fileURLToPath(new URL("../../", import.meta.url));
const kDefaultBaseline = path.join(kRoot, "bench", "baseline.json");

class UsageError extends Error {}

/** Runs of a comparison, and of an --update (unless --runs says otherwise). */
const kRuns = 3;
const kUpdateRuns = 9;

interface Args {
  runs: number;
  runsGiven: boolean;
  scopes: GateScope[];
  scopeGiven: boolean;
  tolerance: number;
  baseline: string;
  baselineGiven: boolean;
  from?: string;
  save?: string;
  update: boolean;
  json: boolean;
  confirm: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    runs: kRuns,
    runsGiven: false,
    scopes: [...kGateScopes],
    scopeGiven: false,
    tolerance: kDefaultTolerance,
    baseline: kDefaultBaseline,
    baselineGiven: false,
    update: false,
    json: false,
    confirm: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`${a} takes a value`);
      return v;
    };
    if (a === "--runs") {
      args.runs = Number(value());
      args.runsGiven = true;
      if (!Number.isInteger(args.runs) || args.runs < 1) throw new UsageError(`--runs takes a whole number >= 1, got ${argv[i]}`);
    } else if (a === "--tolerance") {
      args.tolerance = Number(value());
      if (!(args.tolerance >= 0 && args.tolerance < 1)) throw new UsageError(`--tolerance takes a share in [0, 1) (0.25: a 25% drop), got ${argv[i]}`);
    } else if (a === "--scope") {
      const want = value().split(",").filter(Boolean);
      const bad = want.filter((s) => !(kGateScopes as readonly string[]).includes(s));
      if (bad.length || want.length === 0) throw new UsageError(`--scope takes a comma list of ${kGateScopes.join(", ")}; got ${JSON.stringify(argv[i])}`);
      args.scopes = want as GateScope[];
      args.scopeGiven = true;
    } else if (a === "--baseline") {
      args.baseline = path.resolve(value());
      args.baselineGiven = true;
    } else if (a === "--from") args.from = path.resolve(value());
    else if (a === "--save") args.save = path.resolve(value());
    else if (a === "--update") args.update = true;
    else if (a === "--json") args.json = true;
    else if (a === "--no-confirm") args.confirm = false;
    else throw new UsageError(`unknown argument ${JSON.stringify(a)}`);
  }
  // A baseline is measured once and compared with many times: its median over more runs sits
  // nearer the middle of the noise, so a later run needs a larger swing to cross the tolerance.
  if (args.update && !args.runsGiven) args.runs = kUpdateRuns;
  return args;
}

/** A path as the messages show it: relative to the package root when inside it. */
const shown = (p: string) => (p.startsWith(kRoot) ? path.relative(kRoot, p) : p);

/**
 * The CPU as baselines name it: its model name and, where /proc/cpuinfo gives them, its family
 * and model numbers. A name alone can stand for several generations (two 2-core machines both
 * named "AMD EPYC", one of them of family 26, put one ratio 45% apart on the same commit).
 */
function cpuModel(): string {
  const name = cpus()[0]?.model.trim() || "unknown CPU";
  let info = "";
  try {
    info = readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    return name;
  }
  const family = /^cpu family\s*:\s*(\d+)/m.exec(info)?.[1];
  const model = /^model\s*:\s*(\d+)/m.exec(info)?.[1];
  return family !== undefined && model !== undefined ? `${name} (family ${family} model ${model})` : name;
}

function machine(): string {
  return `${cpus().length} × ${cpuModel()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`;
}

/**
 * The baseline for this machine's CPU. Ratios of WASM over JavaScript depend on the CPU: the same
 * commit measured 25–34% lower on the hash and estimator ratios against peers on an Intel Xeon than
 * the AMD EPYC baseline did, which no code change explains. So each CPU model CI runs on has its
 * own file, each naming the CPU it was measured on (`measured.machine`, "N × MODEL, M GiB"):
 * bench/baseline.json and bench/baseline-<cpu>.json. This CPU's is the file measured on exactly
 * this CPU (its name with family and model numbers, see cpuModel), else the one whose CPU names
 * the longest start of this one's (a file measured before CPUs carried their numbers); without
 * either, the gate compares with bench/baseline.json and says so. --update writes the file of
 * exactly this CPU, a new one if it has none, so that one generation's figures never overwrite
 * another's that shares its name. `match`: the file to compare with; `own`: the file --update writes.
 */
function baselineFor(model: string): { match?: string; own: string } {
  const dir = path.dirname(kDefaultBaseline);
  let nearest: { file: string; of: string } | undefined;
  for (const name of readdirSync(dir).filter((f) => /^baseline(-[a-z0-9-]+)?\.json$/.test(f))) {
    const file = path.join(dir, name);
    const measured = (JSON.parse(readFileSync(file, "utf8")) as { measured?: { machine?: unknown } }).measured?.machine;
    const of = typeof measured === "string" ? /×\s*(.*?),[^,]*$/.exec(measured)?.[1]?.trim() : undefined;
    if (of === model) return { match: file, own: file };
    if (of && model.startsWith(of) && of.length > (nearest?.of.length ?? -1)) nearest = { file, of };
  }
  const slug = model
    .toLowerCase()
    .replace(/\([a-z]+\)/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
  return { ...(nearest ? { match: nearest.file } : {}), own: path.join(dir, `baseline-${slug}.json`) };
}

/** Runs `node [flags] dist/bench/SCRIPT args` and parses its stdout as JSON. */
function spawnJson(argv: string[], what: string): unknown {
  const at = argv.findIndex((a) => a.endsWith(".js"));
  const full = [...argv.slice(0, at), path.join(kRoot, "dist", "bench", argv[at]), ...argv.slice(at + 1)];
  const r = spawnSync(process.execPath, full, { cwd: kRoot, encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`${what} (${argv.join(" ")}) exited ${r.status ?? r.signal}:\n${r.stderr}`);
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`${what} (${argv.join(" ")}) did not print JSON:\n${r.stdout.slice(0, 500)}`);
  }
}

/**
 * Runs the measurement `runs` times, each in its own process (bench/pairs.ts, then bench:batch),
 * and returns each run's ratios.
 */
function measure(args: Args): Record<string, number>[] {
  const pairScopes = args.scopes.filter((s) => s !== "batch");
  const runs: Record<string, number>[] = [];
  for (let i = 1; i <= args.runs; i++) {
    const ratios: Record<string, number> = {};
    if (pairScopes.length) {
      const t = performance.now();
      const report = spawnJson(["--expose-gc", "pairs.js", "--scope", pairScopes.join(",")], "the paired bench") as { ratios: Record<string, number> };
      Object.assign(ratios, report.ratios);
      process.stderr.write(`bench:gate: paired bench ${i}/${args.runs} (${pairScopes.join(",")}): ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
    }
    if (args.scopes.includes("batch")) {
      const t = performance.now();
      const report = spawnJson(["batch.js", "--json", "--mb", "20", "--rss-gb", "0", "--no-corpus-once"], "bench:batch") as BatchReport;
      Object.assign(ratios, batchRatios(report));
      process.stderr.write(`bench:gate: bench:batch ${i}/${args.runs}: ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
    }
    runs.push(ratios);
  }
  return runs;
}

/**
 * A measurement read with --from: a --save file, or bench/run.ts --json output (one report or
 * several; then `scopes` is what they ran, so the batch ratio and the scopes they skipped are
 * "not run" unless --scope says otherwise).
 */
function readMeasurement(file: string): { ratios: RatioSet; scopes?: GateScope[] } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`${shown(file)}: cannot read a measurement: ${err instanceof Error ? err.message : String(err)}`);
  }
  const reports = Array.isArray(json) ? json : [json];
  if (reports.every((r) => typeof r === "object" && r !== null && Array.isArray((r as { results?: unknown }).results))) {
    const ran = new Set(reports.flatMap((r) => ((r as { scopes?: unknown }).scopes as string[] | undefined) ?? []));
    return {
      ratios: medianRatios(reports.map((r) => benchRatios((r as { results: CaseResult[] }).results))),
      scopes: kGateScopes.filter((s) => ran.has(s)),
    };
  }
  const values = parseBaseline(json, shown(file));
  const saved = (json as { ratios: Record<string, { runs?: unknown }> }).ratios;
  return {
    ratios: Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, { value: v, runs: Array.isArray(saved[k].runs) ? (saved[k].runs as number[]) : [v] }]),
    ),
  };
}

function toFile(current: RatioSet, args: Args, kept: RatioSet = {}): Baseline {
  const ratios: RatioSet = { ...kept };
  for (const [k, v] of Object.entries(current)) ratios[k] = { value: round4(v.value), runs: v.runs.map(round4) };
  return {
    about: `Ratios (higher is better) that \`npm run bench:gate\` (bench/gate.ts) compares its measurement with: the gate fails when one falls by more than ${kDefaultTolerance * 100}% of its value here (--tolerance). value: the median of \`runs\` (one per process). Rewrite with \`npm run bench:gate -- --update\` on the machine CI runs on.`,
    measured: {
      date: new Date().toISOString().slice(0, 10),
      machine: machine(),
      node: process.version,
      runs: Math.max(0, ...Object.values(current).map((v) => v.runs.length)),
      command: `npm run bench:gate -- --update --runs ${args.runs}${args.scopes.length < kGateScopes.length ? ` --scope ${args.scopes.join(",")}` : ""}`,
    },
    ratios,
  };
}

/** The baseline of this CPU when there is one (or when --update writes it), unless --baseline named a file. */
function chooseBaseline(args: Args): void {
  if (args.baselineGiven) return;
  const model = cpuModel();
  const found = baselineFor(model);
  if (args.update) args.baseline = found.own;
  else if (found.match) args.baseline = found.match;
  else
    process.stderr.write(
      `bench:gate: no baseline measured on this CPU (${model}): comparing with ${shown(args.baseline)}; \`npm run bench:gate -- --update\` writes ${shown(found.own)}\n`,
    );
}

/** The ratios of this run: measured (their runs kept for a confirmation), or read back with --from. */
function measureRatios(args: Args): { current: RatioSet; runs: Record<string, number>[]; seconds: number } {
  const slowdown = process.env[kSlowdownEnv];
  if (slowdown && !args.from) process.stderr.write(`bench:gate: ${kSlowdownEnv}=${JSON.stringify(slowdown)} is set: the benches are slowed on purpose\n`);
  const t = performance.now();
  const load = () => loadavg()[0].toFixed(1);
  if (args.from) {
    const read = readMeasurement(args.from);
    if (read.scopes && !args.scopeGiven) args.scopes = read.scopes;
    return { current: read.ratios, runs: [], seconds: (performance.now() - t) / 1000 };
  }
  process.stderr.write(`bench:gate: load average ${load()} on ${cpus().length} cores at the start\n`);
  const runs = measure(args);
  const seconds = (performance.now() - t) / 1000;
  // A load above the core count slows JS sides more than WASM ones (V8's compiler threads
  // starve): the log says so next to a failure.
  process.stderr.write(`bench:gate: load average ${load()} at the end\n`);
  return { current: medianRatios(runs), runs, seconds };
}

/** Whether a ratio's scope was measured in this run. */
const ranIn = (args: Args) => (name: string) => {
  const scope = scopeOf(name);
  return scope === undefined || args.scopes.includes(scope);
};

/** --update: the baseline written anew (the scopes not measured kept from the old file), and printed as a table. */
function writeBaseline(args: Args, current: RatioSet, seconds: number): void {
  let kept: RatioSet = {};
  if (args.scopes.length < kGateScopes.length && existsSync(args.baseline)) {
    const text = readFileSync(args.baseline, "utf8");
    parseBaselineText(text, shown(args.baseline));
    const old = JSON.parse(text) as { ratios: RatioSet };
    const ran = ranIn(args);
    kept = Object.fromEntries(Object.entries(old.ratios).filter(([k]) => !ran(k)));
  }
  const file = toFile(current, args, kept);
  writeFileSync(args.baseline, JSON.stringify(file, null, 2) + "\n");
  const lines = [
    "| ratio (higher is better) | baseline | runs |",
    "|---|---:|---|",
    ...Object.entries(file.ratios).map(([k, v]) => `| ${k} | ${v.value} | ${v.runs.join(", ")} |`),
  ];
  process.stdout.write(
    `${lines.join("\n")}\n\nbench:gate: wrote ${shown(args.baseline)} (${Object.keys(file.ratios).length} ratios, measured in ${seconds.toFixed(0)} s)\n`,
  );
}

/**
 * This run against the baseline. A burst of load can take one ratio's median past the
 * tolerance: before failing, the scopes of the regressed ratios are measured as many times
 * again (--confirm) and the median of all runs is judged.
 */
function judge(args: Args, baseline: Readonly<Record<string, number>>, measured: { current: RatioSet; runs: Record<string, number>[] }) {
  const valuesOf = (set: RatioSet) => Object.fromEntries(Object.entries(set).map(([k, v]) => [k, v.value]));
  const options = { tolerance: args.tolerance, measured: ranIn(args) };
  let { current, runs } = measured;
  let comparison = compareRatios(baseline, valuesOf(current), options);
  const regressed = comparison.rows.filter((r) => r.verdict === "REGRESSED");
  if (regressed.length && !args.from && args.confirm) {
    const scopes = [...new Set(regressed.map((r) => scopeOf(r.name)).filter((s): s is GateScope => s !== undefined))];
    process.stderr.write(
      `bench:gate: ${regressed.map((r) => r.name).join("; ")} past the tolerance: measuring ${scopes.join(",")} ${args.runs} more time(s) to confirm\n`,
    );
    runs = [...runs, ...measure({ ...args, scopes })];
    current = medianRatios(runs);
    comparison = compareRatios(baseline, valuesOf(current), options);
  }
  return { comparison, current };
}

function main(): number {
  const args = parseArgs(process.argv.slice(2));
  chooseBaseline(args);
  const measured = measureRatios(args);
  const save = (set: RatioSet) => args.save && writeFileSync(args.save, JSON.stringify(toFile(set, args), null, 2) + "\n");
  if (args.update) {
    save(measured.current);
    writeBaseline(args, measured.current, measured.seconds);
    return 0;
  }
  if (!existsSync(args.baseline)) throw new Error(`${shown(args.baseline)}: no baseline file: create it with \`npm run bench:gate -- --update\``);
  const baseline = parseBaselineText(readFileSync(args.baseline, "utf8"), shown(args.baseline));
  const { comparison, current } = judge(args, baseline, measured);
  save(current);
  if (args.json) {
    const rows = comparison.rows.map((r) => ({ ...r, runs: current[r.name]?.runs }));
    process.stdout.write(JSON.stringify({ ...comparison, rows, baseline: shown(args.baseline), seconds: measured.seconds }, null, 2) + "\n");
  } else {
    const runs = Object.fromEntries(Object.entries(current).map(([k, v]) => [k, v.runs]));
    process.stdout.write(`${formatComparison(comparison, runs)}\n(against ${shown(args.baseline)}; measured in ${measured.seconds.toFixed(0)} s)\n`);
  }
  return comparison.failed ? 1 : 0;
}

try {
  process.exitCode = main();
} catch (err) {
  process.stderr.write(`bench:gate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
}
