/**
 * `npm run bench:gate:proof`: the proof that the bench gate (bench/gate.ts) trips on a real
 * slowdown. It measures the hash scope once into a baseline of its own (a temporary file), then
 * measures it again with CTXFOLD_BENCH_SLOWDOWN=hash:4 and expects the gate to fail: exit 1,
 * every hash ratio REGRESSED, after measuring the fallen scope once more to confirm.
 *
 * Against a baseline measured a moment earlier on this machine, not bench/baseline.json: what is
 * proven is that a slowed ctxfold case trips the gate, and that must not depend on how this
 * machine compares with the one the committed baseline was measured on. A 4× slowdown takes each
 * hash ratio ~75% down, far past the 25% tolerance and the run-to-run noise (~10-40% for one run
 * on a loaded 2-core machine). It times real code, so it belongs with the gate, not in `npm test`
 * (test/bench-gate.test.ts checks the gate's rules and the slowdown's injection without timing).
 *
 * Exit 0: the gate tripped as it must; 1: it did not (what was missing is printed); 2: the
 * proof could not run.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { kSlowdownEnv } from "./lib.js";
import { kRatioDefs, parseBaselineText } from "./ratios.js";

const kRoot = fileURLToPath(new URL("../../", import.meta.url));
const kGate = path.join(kRoot, "dist", "bench", "gate.js");

/** The slowdown the proof injects, and the scope it slows. */
const kScope = "hash";
const kSlowdown = `${kScope}:4`;

/** Runs the built gate; the slowdown variable is only set when `slowdown` is given. */
function gate(args: string[], slowdown?: string) {
  const env = { ...process.env };
  delete env[kSlowdownEnv];
  if (slowdown) env[kSlowdownEnv] = slowdown;
  const r = spawnSync(process.execPath, [kGate, ...args], { cwd: kRoot, env, encoding: "utf8", maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** What the slowed gate's run must show, each with what it proves; the failed ones. */
function missed(slowed: ReturnType<typeof gate>, ratios: readonly string[]): string[] {
  const checks: [ok: boolean, what: string][] = [
    [new RegExp(`${kSlowdownEnv}="${escaped(kSlowdown)}" is set`).test(slowed.stderr), "the gate says the slowdown is set"],
    [
      new RegExp(`past the tolerance: measuring ${kScope} 1 more time\\(s\\) to confirm`).test(slowed.stderr),
      "the gate measures the fallen scope once more before failing",
    ],
    [slowed.status === 1, `exit 1 (got ${slowed.status})`],
    ...ratios.map((name): [boolean, string] => [
      new RegExp(`\\| ${escaped(name)} \\| [^|]+ \\| [^|]+ \\| -\\d+% \\| \\*\\*REGRESSED\\*\\*`).test(slowed.stdout),
      `${name} REGRESSED in the table`,
    ]),
    [
      new RegExp(`bench gate FAILED \\(tolerance 25%\\): ${ratios.map((name) => `${escaped(name)} REGRESSED -\\d+%`).join("; ")}`).test(slowed.stdout),
      "the verdict line names every regressed ratio",
    ],
  ];
  return checks.filter(([ok]) => !ok).map(([, what]) => what);
}

function main(): number {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-gate-proof-"));
  try {
    const baseline = path.join(dir, "baseline.json");
    const ratios = kRatioDefs.filter((d) => d.scope === kScope).map((d) => d.name);
    process.stderr.write(`bench:gate:proof: measuring a ${kScope} baseline on this machine\n`);
    const update = gate(["--scope", kScope, "--runs", "1", "--baseline", baseline, "--update"]);
    if (update.status !== 0) throw new Error(`the baseline run exited ${update.status}:\n${update.stderr}`);
    const measured = Object.keys(parseBaselineText(readFileSync(baseline, "utf8"), baseline)).sort();
    if (measured.join("\n") !== [...ratios].sort().join("\n"))
      throw new Error(`the baseline run measured ${measured.join(", ")}; the ${kScope} scope defines ${ratios.join(", ")}`);

    process.stderr.write(`bench:gate:proof: the same with ${kSlowdownEnv}=${kSlowdown}\n`);
    const slowed = gate(["--scope", kScope, "--runs", "1", "--baseline", baseline], kSlowdown);
    const failures = missed(slowed, ratios);
    if (failures.length) {
      process.stdout.write(
        `${slowed.stdout}\n${slowed.stderr}\nbench:gate:proof FAILED: the gate did not trip as it must on ${kSlowdown}:\n${failures.map((f) => `- ${f}`).join("\n")}\n`,
      );
      return 1;
    }
    process.stdout.write(`${slowed.stdout}\nbench:gate:proof passed: ${kSlowdown} made the gate exit 1 with all ${ratios.length} ${kScope} ratios REGRESSED\n`);
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  process.exitCode = main();
} catch (err) {
  process.stderr.write(`bench:gate:proof: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
}
