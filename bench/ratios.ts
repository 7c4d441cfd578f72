/**
 * The ratios the bench gate (bench/gate.ts) watches, how they come out of the quick bench's and
 * bench:batch's JSON, and the comparison with bench/baseline.json. Pure functions: the gate's
 * CLI and test/bench-gate.test.ts use them.
 *
 * Every ratio is "higher is better" and compares two contenders measured in the same process
 * close together (ctxfold's WASM path against its TypeScript twin or a peer library, 2 workers
 * against 1), so it moves with ctxfold's code far more than with the machine's absolute speed.
 */
import type { CaseResult } from "./lib.js";

/** A drop of more than this share of a ratio's baseline value fails the gate (`--tolerance`). */
export const kDefaultTolerance = 0.25;

/** Slack for floating point at exactly the tolerance: a drop of exactly 25% passes. */
const kEpsilon = 1e-9;

/** The bench scopes (bench/run.ts --scope) the gate runs, and "batch" (bench/batch.ts). */
export const kGateScopes = ["hash", "estimate", "kernels", "adapters", "enormous", "batch"] as const;
export type GateScope = (typeof kGateScopes)[number];

/** One ratio: throughput of case `a` over case `b` of `group` (or, for batch, as `batch` says). */
interface RatioDef {
  name: string;
  scope: GateScope;
  group?: string;
  a?: string;
  b?: string;
}

const wasmOver = (scope: GateScope, group: string, a: string, b: string, label: string): RatioDef => ({
  name: `${group}: ${a === "ctxfold wasm (batched)" ? "wasm batched" : "wasm"} / ${label}`,
  scope,
  group,
  a,
  b,
});

/**
 * The gated ratios, chosen for meaning and noise (measured by the gate on a loaded shared 2-core
 * machine, 24 runs). Left out: the hash TS twin on 200 B × 1000 (allocation-bound, it moved
 * -35%..+97% between runs; the 4 KB twin, within ±5%, stands for it) and on 1 MB (0.2 s a
 * call); js-tiktoken, whose speed differs from one process to the next (at 4 KB 310-520× below
 * ctxfold over 14 runs, the median of 3 moving 22%; at 200 B × 1000 its 0.33 s calls would take
 * most of the gate's time), so gpt-tokenizer stands for the exact tokenizers; the 300-message
 * kernels (the 100,000-message ones carry the kernels); ctxfold compact with 1 worker against a
 * bare JSON pass (the 1-second pass moved 1.5× between runs).
 */
export const kRatioDefs: readonly RatioDef[] = [
  // WASM against its TypeScript twin.
  wasmOver("hash", "hash 4 KB", "ctxfold wasm", "ctxfold ts twin", "ts twin"),
  wasmOver("estimate", "estimate 200 B", "ctxfold wasm", "ctxfold ts twin", "ts twin"),
  wasmOver("estimate", "estimate 4 KB", "ctxfold wasm", "ctxfold ts twin", "ts twin"),
  wasmOver("estimate", "estimate 1 MB", "ctxfold wasm", "ctxfold ts twin", "ts twin"),
  wasmOver("kernels", "turn map 100000 msgs", "ctxfold wasm", "ctxfold ts twin", "ts twin"),
  wasmOver("kernels", "group steps 100000", "ctxfold wasm", "ctxfold ts twin", "ts twin"),
  // ctxfold against the peers the bench has.
  wasmOver("hash", "hash 200 B", "ctxfold wasm (batched)", "xxhash-wasm h64", "xxhash-wasm"),
  wasmOver("hash", "hash 200 B", "ctxfold wasm (batched)", "node:crypto sha1", "node:crypto sha1"),
  wasmOver("hash", "hash 1 MB", "ctxfold wasm", "xxhash-wasm h64", "xxhash-wasm"),
  wasmOver("hash", "hash 1 MB", "ctxfold wasm", "node:crypto sha1", "node:crypto sha1"),
  wasmOver("estimate", "estimate 200 B", "ctxfold wasm", "gpt-tokenizer (exact)", "gpt-tokenizer"),
  wasmOver("estimate", "estimate 200 B", "ctxfold wasm", "tokenx (heuristic)", "tokenx"),
  wasmOver("estimate", "estimate 4 KB", "ctxfold wasm", "gpt-tokenizer (exact)", "gpt-tokenizer"),
  wasmOver("estimate", "estimate 1 MB", "ctxfold wasm", "tokenx (heuristic)", "tokenx"),
  // What naming stored content by SHA-256 (128 bits) costs beside the XXH64 names of before: below
  // 1 by design (a cryptographic hash against a fast one); a fall means the content address got
  // slower, not XXH64 faster (XXH64 is gated against its peers above).
  {
    name: "hash 200 B: store name, content address / xxh64",
    scope: "hash",
    group: "hash 200 B",
    a: "ctxfold content address (store name)",
    b: "xxh64 store name (before)",
  },
  {
    name: "hash 1 MB: store name, content address / xxh64",
    scope: "hash",
    group: "hash 1 MB",
    a: "ctxfold content address (store name)",
    b: "xxh64 store name (before)",
  },
  {
    name: "adapters: openai-chat parse + render / JSON.parse + stringify",
    scope: "adapters",
    group: "adapters, dev corpus",
    a: "openai-chat parse + render",
    b: "JSON.parse + JSON.stringify",
  },
  // Enormous tool outputs (bench/enormous.ts): ctxfold's first sight of a 0.5-4 MB output against
  // counting its lines in JavaScript. These read an output's head and tail, or scan it once: a fall means
  // one of them started reading all of it, or more than once.
  ...[
    ["summary 1 MB log + 1 MB line", "ctxfold extractive", "extractive"],
    ["facts 4 MB output", "ctxfold ledger facts", "ledger facts"],
    ["focus 1 MB output", "ctxfold focus lines", "focus lines"],
    ["evidence 500 KB output", "ctxfold next-step evidence", "next-step evidence"],
  ].map(([group, a, label]): RatioDef => ({ name: `${group}: ${label} / line count`, scope: "enormous", group, a, b: "line count" })),
  // The batch engine (bench/batch.ts --json): ctxfold compact's speed-up from a 2-worker pool, and
  // its in-process speed against the JSONL floor over the same bytes.
  { name: "batch: 2 workers / 1 worker", scope: "batch" },
  { name: "batch: 1 worker / JSONL floor", scope: "batch" },
];

/** The scope a ratio name belongs to, or undefined for a name the gate no longer defines. */
export function scopeOf(name: string): GateScope | undefined {
  return kRatioDefs.find((d) => d.name === name)?.scope;
}

/** What bench/batch.ts --json prints (the fields the gate reads). */
export interface BatchReport {
  /** The JSONL floor's pass over the same input (read, split, parse, stringify, write). */
  baselineSeconds: number;
  workers1: { seconds: number };
  workers2: { seconds: number };
}

/** The gated ratios in one quick bench run's results (bench/run.ts --json `results`), for --from. */
export function benchRatios(results: readonly CaseResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  const mbps = (g: string, n: string) => results.find((r) => r.group === g && r.name === n)?.mbPerSec;
  for (const d of kRatioDefs) {
    if (!d.group || !d.a || !d.b) continue;
    const a = mbps(d.group, d.a);
    const b = mbps(d.group, d.b);
    if (a !== undefined && b !== undefined) out[d.name] = a / b;
  }
  return out;
}

/** The gated ratios of one bench:batch --json report. */
export function batchRatios(r: BatchReport): Record<string, number> {
  return {
    "batch: 2 workers / 1 worker": r.workers1.seconds / r.workers2.seconds,
    // A compacted run's cost on one core, against the plain JSONL transform of the same bytes.
    "batch: 1 worker / JSONL floor": r.baselineSeconds / r.workers1.seconds,
  };
}

/** One ratio over k runs: the median (what the gate compares) and every run's value. */
export interface RatioValue {
  value: number;
  runs: number[];
}
export type RatioSet = Record<string, RatioValue>;

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The median of each ratio over runs (a ratio absent from some runs is the median of the rest). */
export function medianRatios(runs: readonly Record<string, number>[]): RatioSet {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r)))];
  const out: RatioSet = {};
  for (const name of names) {
    const values = runs.map((r) => r[name]).filter((v): v is number => v !== undefined);
    out[name] = { value: median(values), runs: values };
  }
  return out;
}

export type Verdict = "ok" | "improved" | "REGRESSED" | "MISSING" | "INVALID" | "new" | "not run";

export interface Row {
  name: string;
  baseline?: number;
  now?: number;
  /** now / baseline - 1 (-0.3: 30% lower). */
  change?: number;
  verdict: Verdict;
  /** Whether this row fails the gate. */
  fails: boolean;
  note: string;
}

export interface Comparison {
  rows: Row[];
  failed: boolean;
  tolerance: number;
}

/**
 * Compares the current ratios with the baseline's. The rule: a ratio fails when it fell by more
 * than `tolerance` of its baseline value, now < baseline × (1 − tolerance); a drop of exactly
 * the tolerance passes. A baseline ratio absent from the current run fails (MISSING), unless
 * `measured` says its scope was not run (`--scope`: "not run", reported); a current value that
 * is not a positive finite number fails (INVALID); a ratio not in the baseline is reported
 * ("new") and passes. A rise of more than the tolerance is "improved" (consider --update).
 */
export function compareRatios(
  baseline: Readonly<Record<string, number>>,
  current: Readonly<Record<string, number>>,
  options: { tolerance?: number; measured?: (name: string) => boolean } = {},
): Comparison {
  const tolerance = options.tolerance ?? kDefaultTolerance;
  if (!(tolerance >= 0 && tolerance < 1)) throw new Error(`tolerance must be in [0, 1), got ${tolerance}`);
  const rows: Row[] = [];
  for (const [name, base] of Object.entries(baseline)) {
    const now = current[name];
    if (now === undefined) {
      if (options.measured && !options.measured(name)) rows.push({ name, baseline: base, verdict: "not run", fails: false, note: "its scope was not run" });
      else
        rows.push({
          name,
          baseline: base,
          verdict: "MISSING",
          fails: true,
          note: "in the baseline but not measured: a bench case was renamed or dropped (fix it, or --update the baseline)",
        });
      continue;
    }
    if (!(Number.isFinite(now) && now > 0)) {
      rows.push({ name, baseline: base, now, verdict: "INVALID", fails: true, note: "not a positive finite number" });
      continue;
    }
    const change = now / base - 1;
    if (change < -tolerance - kEpsilon) {
      rows.push({ name, baseline: base, now, change, verdict: "REGRESSED", fails: true, note: `fell by more than ${pct(tolerance)}` });
    } else if (change > tolerance + kEpsilon) {
      rows.push({ name, baseline: base, now, change, verdict: "improved", fails: false, note: "rose by more than the tolerance: consider --update" });
    } else {
      rows.push({ name, baseline: base, now, change, verdict: "ok", fails: false, note: "" });
    }
  }
  for (const [name, now] of Object.entries(current)) {
    if (name in baseline) continue;
    rows.push({ name, now, verdict: "new", fails: false, note: "not in the baseline: --update to gate it" });
  }
  return { rows, failed: rows.some((r) => r.fails), tolerance };
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/** The comparison as a markdown table and a one-line verdict; `runs`: each ratio's value in each run. */
export function formatComparison(c: Comparison, runs: Readonly<Record<string, readonly number[]>> = {}): string {
  const num = (x: number | undefined) =>
    x === undefined ? "—" : Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) : String(x);
  const lines = ["| ratio (higher is better) | baseline | now | change | verdict | runs |", "|---|---:|---:|---:|---|---|"];
  for (const r of c.rows) {
    const change = r.change === undefined ? "—" : `${r.change >= 0 ? "+" : ""}${(r.change * 100).toFixed(0)}%`;
    lines.push(
      `| ${r.name} | ${num(r.baseline)} | ${num(r.now)} | ${change} | ${r.fails ? `**${r.verdict}**` : r.verdict}${r.note ? `: ${r.note}` : ""} | ${(runs[r.name] ?? []).map(num).join(", ")} |`,
    );
  }
  const failing = c.rows.filter((r) => r.fails);
  lines.push(
    "",
    failing.length
      ? `bench gate FAILED (tolerance ${pct(c.tolerance)}): ${failing.map((r) => `${r.name} ${r.verdict}${r.change !== undefined ? ` ${(r.change * 100).toFixed(0)}%` : ""}`).join("; ")}`
      : `bench gate passed: ${c.rows.filter((r) => r.verdict === "ok" || r.verdict === "improved").length} ratios within ${pct(c.tolerance)} of the baseline or above`,
  );
  return lines.join("\n");
}

/** bench/baseline.json. */
export interface Baseline {
  about?: string;
  measured: { date: string; machine: string; node: string; runs: number; command: string };
  ratios: RatioSet;
}

/**
 * Checks a parsed baseline (or a gate measurement saved with --save, the same shape) and returns
 * its ratios' values; a malformed one throws an error naming `file` and the field.
 */
export function parseBaseline(json: unknown, file: string): Record<string, number> {
  const bad = (field: string, want: string, got: unknown) =>
    new Error(`${file}: field ${field} must be ${want}, got ${got === undefined ? "nothing" : JSON.stringify(got)}`);
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw bad("(top level)", 'an object with a "ratios" object', json);
  const ratios = (json as { ratios?: unknown }).ratios;
  if (typeof ratios !== "object" || ratios === null || Array.isArray(ratios)) throw bad("ratios", "an object of ratio name → { value }", ratios);
  const out: Record<string, number> = {};
  for (const [name, entry] of Object.entries(ratios)) {
    const field = `ratios[${JSON.stringify(name)}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw bad(field, "an object { value, runs }", entry);
    const value = (entry as { value?: unknown }).value;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) throw bad(`${field}.value`, "a positive number", value);
    out[name] = value;
  }
  if (Object.keys(out).length === 0) throw bad("ratios", "a non-empty object", ratios);
  return out;
}

/** Parses the text of a baseline file: JSON errors name the file too. */
export function parseBaselineText(text: string, file: string): Record<string, number> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseBaseline(json, file);
}

/** Rounds to 4 significant digits, for a baseline a reviewer reads. */
export const round4 = (x: number) => Number(x.toPrecision(4));
