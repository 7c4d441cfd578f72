import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Bench } from "tinybench";

/** One contender on one input: `bytes` is the UTF-8 size of what one call of `fn` processes. */
export interface Case {
  group: string;
  name: string;
  bytes: number;
  /** Items one call processes (strings in a batch), for per-item costs. */
  items?: number;
  fn: () => unknown;
}

export interface CaseResult {
  group: string;
  name: string;
  bytes: number;
  items: number;
  /** Median latency of one call, ns. */
  medianNs: number;
  /** UTF-8 MB (10^6 bytes) per second at the median. */
  mbPerSec: number;
  /** ns per item at the median. */
  nsPerItem: number;
  samples: number;
}

export interface RunOptions {
  /** Time budget per case and round, ms. */
  time: number;
  /** Rounds over all cases (default 3); each case keeps its best median. */
  rounds?: number;
}

/**
 * Measures every case `rounds` times, round-robin, and keeps each case's best (lowest) median.
 * On a shared machine a slow stretch then costs one round of one case, not the whole figure,
 * and the contenders of a group are measured close together in every round, so the ratios
 * within a group compare like with like.
 */
export async function runCases(cases: Case[], options: RunOptions): Promise<CaseResult[]> {
  const rounds = options.rounds ?? 3;
  cases = applySlowdown(cases, parseSlowdown(process.env[kSlowdownEnv]));
  const best = new Map<Case, { medianNs: number; samples: number }>();
  for (let round = 0; round < rounds; round++) {
    for (const c of cases) {
      // One Bench per case keeps each case's warmup next to its measurement.
      // A few iterations suffice for the slow contenders (js-tiktoken on 1 MB takes seconds a call): tinybench's
      // defaults (64 runs, 16 warmups) would spend minutes there; fast cases are bounded by `time`.
      const bench = new Bench({
        time: options.time,
        iterations: 8,
        warmupIterations: 2,
        warmupTime: round === 0 ? Math.min(200, options.time / 2) : Math.min(50, options.time / 4),
      });
      bench.add(`${c.group} ${c.name}`, c.fn);
      await bench.run();
      const r = bench.tasks[0].result;
      if (r.state !== "completed")
        throw new Error(`bench case ${c.group} / ${c.name} did not complete: ${r.state}${"error" in r ? `: ${String(r.error)}` : ""}`);
      const medianNs = r.latency.p50 * 1e6;
      const prev = best.get(c);
      if (!prev || medianNs < prev.medianNs) best.set(c, { medianNs, samples: (prev?.samples ?? 0) + (r.latency.samplesCount ?? 0) });
      else prev.samples += r.latency.samplesCount ?? 0;
    }
    process.stderr.write(`  round ${round + 1}/${rounds} done\n`);
  }
  return cases.map((c) => {
    const { medianNs, samples } = best.get(c)!;
    const items = c.items ?? 1;
    const mbPerSec = c.bytes / (medianNs / 1e9) / 1e6;
    process.stderr.write(`  ${c.group.padEnd(22)} ${c.name.padEnd(34)} ${fmt(mbPerSec)} MB/s\n`);
    return { group: c.group, name: c.name, bytes: c.bytes, items, medianNs, mbPerSec, nsPerItem: medianNs / items, samples };
  });
}

/** The environment variable that injects a slowdown (see parseSlowdown). */
export const kSlowdownEnv = "CTXFOLD_BENCH_SLOWDOWN";

/** One injected slowdown: the cases `target` names do their work `factor` times per call. */
export interface Slowdown {
  target: string;
  factor: number;
}

/**
 * Parses CTXFOLD_BENCH_SLOWDOWN, `TARGET:N[;TARGET:N...]`, which exists to prove the bench gate
 * (bench/gate.ts) trips: each case TARGET names does its work N times per measured call while its
 * `bytes` stay the same, so its throughput, and every ratio with it as numerator, drops ~N×.
 * TARGET is a group prefix (`hash`, `hash 1 MB`, `estimate`, `turn map`...) naming the cases of
 * that group that are ctxfold's own gated path (kOwnCases: its WASM cases, and the content
 * address stores name by), or `GROUP / NAME-PREFIX` for any one case
 * (`adapters, dev corpus / openai-chat parse + render`); `batch` is read by bench/batch.ts.
 * Unset or empty: no slowdown. A malformed value throws, naming the variable.
 */
export function parseSlowdown(spec: string | undefined): Slowdown[] {
  if (!spec?.trim()) return [];
  // ";" between entries: group names have commas ("adapters, dev corpus").
  return spec.split(";").map((part) => {
    const at = part.lastIndexOf(":");
    const target = part.slice(0, at).trim();
    const factor = Number(part.slice(at + 1));
    if (at < 0 || !target || !Number.isInteger(factor) || factor < 1) {
      throw new Error(`${kSlowdownEnv} takes TARGET:N[;TARGET:N...] with N a whole number >= 1; got ${JSON.stringify(part)} in ${JSON.stringify(spec)}`);
    }
    return { target, factor };
  });
}

/** How the names of ctxfold's own gated cases start: the numerators a group slowdown slows. */
const kOwnCases = ["ctxfold wasm", "ctxfold content address"];

/** The factor the slowdowns give case `group` / `name` (1: none). */
export function slowdownFactor(slowdowns: readonly Slowdown[], group: string, name: string): number {
  let factor = 1;
  for (const s of slowdowns) {
    const hit = s.target.includes(" / ")
      ? `${group} / ${name}`.startsWith(s.target)
      : group.startsWith(s.target) && kOwnCases.some((own) => name.startsWith(own));
    if (hit) factor *= s.factor;
  }
  return factor;
}

/** `cases` with the slowdowns applied (each slowed case says so on stderr). */
export function applySlowdown(cases: Case[], slowdowns: readonly Slowdown[]): Case[] {
  if (slowdowns.length === 0) return cases;
  return cases.map((c) => {
    const n = slowdownFactor(slowdowns, c.group, c.name);
    if (n === 1) return c;
    process.stderr.write(`  ${kSlowdownEnv}: ${c.group} / ${c.name} does its work ${n} times per call\n`);
    const fn = c.fn;
    return {
      ...c,
      fn: () => {
        let r: unknown;
        for (let i = 0; i < n; i++) r = fn();
        return r;
      },
    };
  });
}

export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x >= 100) return x.toFixed(0);
  if (x >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

export function find(results: CaseResult[], group: string, name: string): CaseResult {
  const r = results.find((x) => x.group === group && x.name === name);
  if (!r) throw new Error(`no bench result for ${group} / ${name}`);
  return r;
}

/** Ratio of two contenders' throughput measured in the same run (a / b). */
export function ratio(results: CaseResult[], group: string, a: string, b: string): number {
  return find(results, group, a).mbPerSec / find(results, group, b).mbPerSec;
}

export const utf8Bytes = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * Replaces the `<!-- name:begin -->` … `<!-- name:end -->` section with `md`, in whichever of
 * README.md and docs/*.md holds it (exactly one must).
 */
export function rewriteDocSection(name: string, md: string): void {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const files = [
    "README.md",
    ...readdirSync(path.join(root, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
  const holders = files.filter((f) => readFileSync(path.join(root, f), "utf8").includes(begin));
  if (holders.length !== 1)
    throw new Error(`${begin} is in ${holders.length ? holders.join(" and ") : "none"} of README.md and docs/*.md; it must be in exactly one`);
  const file = path.join(root, holders[0]);
  const text = readFileSync(file, "utf8");
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (b < a) throw new Error(`${holders[0]} has ${begin} without ${end} after it`);
  writeFileSync(file, `${text.slice(0, a + begin.length)}\n${md.replace(/\n+$/, "")}\n${text.slice(b)}`);
}
