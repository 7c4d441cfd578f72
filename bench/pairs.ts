/**
 * `node --expose-gc dist/bench/pairs.js [--scope hash,estimate,kernels,adapters,enormous] [--rounds 5] [--block-ms 20]`:
 * the bench gate's measurement (bench/gate.ts runs it), one process's worth.
 *
 * For each ratio bench/ratios.ts defines, its two contenders, the quick bench's own cases
 * (bench/hash.ts, estimate.ts with quick: true, kernels.ts, adapters.ts) and the enormous
 * outputs' (bench/enormous.ts), are timed as
 * interleaved blocks of calls, A B B A, --rounds times, every block as long as the other (at
 * least --block-ms, at least one call of the slower side), after 150 ms of unmeasured blocks of
 * each side. The ratio is A's throughput in its fastest block over B's in its fastest block.
 *
 * Why not the quick bench's own figures (tinybench, one case after another): on a shared 2-core
 * machine another process's load comes and goes within seconds, and the quick bench puts
 * seconds between a ratio's two sides; measured 4 times under load, single-run ratios moved by
 * 1.5-2.5× and the median of 3 runs still by up to 2×. Interleaved equal blocks expose both sides
 * to the same moments and the best block of each drops the ones a burst hit: over 9 runs at a
 * load average of 3-6, single-run ratios stayed within -20%..+30% of their median (a few
 * outliers to +60%), and medians of 3 within ±16%.
 *
 * Prints {"ratios": {name: value}, "perRound": {name: [each round's A-over-B ratio]}} as JSON on
 * stdout, one line per ratio on stderr. CTXFOLD_BENCH_SLOWDOWN applies (see bench/run.ts).
 */
import { adapterCases } from "./adapters.js";
import { enormousCases } from "./enormous.js";
import { estimateCases } from "./estimate.js";
import { hashCases } from "./hash.js";
import { kernelCases } from "./kernels.js";
import { applySlowdown, kSlowdownEnv, parseSlowdown, type Case } from "./lib.js";
import { kRatioDefs } from "./ratios.js";

const kPairScopes = ["hash", "estimate", "kernels", "adapters", "enormous"] as const;

/** Warm-up per pair and side, ms. */
const kWarmMs = 150;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** Seconds `n` calls of `c` take. */
function timeBlock(c: Case, n: number): number {
  const t = performance.now();
  for (let i = 0; i < n; i++) c.fn();
  return (performance.now() - t) / 1000;
}

/** Seconds one call of `c` takes, from a block of at least `ms` / 4, after two warm calls. */
function perCall(c: Case, ms: number): number {
  c.fn();
  c.fn();
  let n = 1;
  let s = timeBlock(c, n);
  while (s * 1000 < ms / 4 && n < 1 << 20) s = timeBlock(c, (n *= 4));
  return s / n;
}

/** A's throughput over B's: from the fastest block of each (`best`) and per round (`rounds`). */
function pairRatio(a: Case, b: Case, rounds: number, blockMs: number): { best: number; rounds: number[] } {
  const ca = perCall(a, blockMs);
  const cb = perCall(b, blockMs);
  const block = Math.max(blockMs / 1000, ca, cb);
  const na = Math.max(1, Math.round(block / ca));
  const nb = Math.max(1, Math.round(block / cb));
  // Unmeasured blocks, at least kWarmMs of each side, settle both (JIT tiers, caches): on a
  // loaded machine V8's background compiler gets little CPU, and a JS side measured too soon
  // ran up to 10× slow in a whole run.
  for (let spent = 0; spent < kWarmMs / 1000; ) spent += Math.min(timeBlock(a, na), timeBlock(b, nb));
  const speed = (c: Case, n: number, s: number) => (c.bytes * n) / s;
  let bestA = 0;
  let bestB = 0;
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const a1 = timeBlock(a, na);
    const b1 = timeBlock(b, nb);
    const b2 = timeBlock(b, nb);
    const a2 = timeBlock(a, na);
    bestA = Math.max(bestA, speed(a, na, a1), speed(a, na, a2));
    bestB = Math.max(bestB, speed(b, nb, b1), speed(b, nb, b2));
    perRound.push(speed(a, 2 * na, a1 + a2) / speed(b, 2 * nb, b1 + b2));
  }
  return { best: bestA / bestB, rounds: perRound };
}

async function main(): Promise<void> {
  const scopes = (arg("scope") ?? kPairScopes.join(",")).split(",").filter(Boolean);
  const bad = scopes.filter((s) => !(kPairScopes as readonly string[]).includes(s));
  if (bad.length || scopes.length === 0) throw new Error(`--scope takes a comma list of ${kPairScopes.join(", ")}; got ${JSON.stringify(arg("scope"))}`);
  const rounds = Number(arg("rounds") ?? 5);
  const blockMs = Number(arg("block-ms") ?? 20);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds takes a whole number >= 1, got ${arg("rounds")}`);
  if (!(blockMs > 0)) throw new Error(`--block-ms takes a positive number, got ${arg("block-ms")}`);
  let cases: Case[] = [];
  if (scopes.includes("hash")) cases.push(...(await hashCases()));
  if (scopes.includes("estimate")) cases.push(...estimateCases({ quick: true }));
  if (scopes.includes("kernels")) cases.push(...kernelCases());
  if (scopes.includes("adapters")) cases.push(...adapterCases());
  if (scopes.includes("enormous")) cases.push(...enormousCases());
  cases = applySlowdown(cases, parseSlowdown(process.env[kSlowdownEnv]));
  const ratios: Record<string, number> = {};
  const perRound: Record<string, number[]> = {};
  for (const d of kRatioDefs) {
    if (!d.group || !scopes.includes(d.scope)) continue;
    const a = cases.find((c) => c.group === d.group && c.name === d.a);
    const b = cases.find((c) => c.group === d.group && c.name === d.b);
    // A case the bench lost: the ratio is left out, and the gate reports it MISSING.
    if (!a || !b) {
      process.stderr.write(`  ${d.name}: no case "${!a ? d.a : d.b}" in ${d.group}, left out\n`);
      continue;
    }
    // Garbage the previous pair left is collected outside this pair's blocks (with --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    const t = performance.now();
    const r = pairRatio(a, b, rounds, blockMs);
    ratios[d.name] = r.best;
    perRound[d.name] = r.rounds;
    process.stderr.write(`  ${d.name.padEnd(62)} ${r.best.toPrecision(4).padStart(8)}  (${((performance.now() - t) / 1000).toFixed(1)} s)\n`);
  }
  process.stdout.write(JSON.stringify({ scopes, rounds, blockMs, ratios, perRound }, null, 2) + "\n");
}

main().catch((err: unknown) => {
  process.stderr.write(`bench pairs: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
