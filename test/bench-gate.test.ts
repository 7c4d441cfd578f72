/**
 * The CI bench gate (bench/gate.ts, bench/ratios.ts; issue 8): the comparison rule on hand-made
 * ratio sets, baseline validation, the slowdown injection, and the built gate script on saved
 * measurements. Nothing here is timed: the proof that the real gate trips on an injected 4×
 * slowdown is `npm run bench:gate:proof` (bench/gate-proof.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { applySlowdown, kSlowdownEnv, parseSlowdown, slowdownFactor, type Case, type CaseResult } from "../bench/lib.js";
import {
  benchRatios,
  compareRatios,
  formatComparison,
  kDefaultTolerance,
  kRatioDefs,
  medianRatios,
  parseBaseline,
  parseBaselineText,
} from "../bench/ratios.js";

const kRoot = fileURLToPath(new URL("..", import.meta.url));
const kGate = path.join(kRoot, "dist/bench/gate.js");
const kBaseline = path.join(kRoot, "bench/baseline.json");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-bench-gate-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the built gate, with no slowdown injected whatever the environment says. */
function gate(args: string[]) {
  const env = { ...process.env };
  delete env[kSlowdownEnv];
  const r = spawnSync(process.execPath, [kGate, ...args], { cwd: kRoot, env, encoding: "utf8", maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A baseline file (the shape --update writes) with these values. */
function baselineFile(name: string, ratios: Record<string, number>): string {
  const file = path.join(dir, name);
  const entries = Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, { value: v, runs: [v] }]));
  writeFileSync(file, JSON.stringify({ measured: { date: "2026-01-01", machine: "test", node: process.version, runs: 1, command: "test" }, ratios: entries }));
  return file;
}

describe("compareRatios: a drop of more than the tolerance fails", () => {
  it("the tolerance is 25% unless told", () => {
    expect(kDefaultTolerance).toBe(0.25);
  });

  it("a drop of exactly 25% passes (the rule is strictly more than), also where floating point rounds the other way", () => {
    for (const [base, now] of [
      [4, 3],
      [0.4, 0.3],
      [1.2, 0.9],
      [100, 75],
    ]) {
      const c = compareRatios({ r: base }, { r: now });
      expect(c.failed, `${base} -> ${now}`).toBe(false);
      expect(c.rows[0].verdict).toBe("ok");
    }
  });

  it("a drop just past 25% fails", () => {
    expect(compareRatios({ r: 4 }, { r: 2.99 }).failed).toBe(true);
  });

  it("a 30% drop fails, naming the ratio in the rows and the verdict line", () => {
    const c = compareRatios(
      { "hash 1 MB: wasm / xxhash-wasm": 5, "estimate 4 KB: wasm / ts twin": 26 },
      { "hash 1 MB: wasm / xxhash-wasm": 3.5, "estimate 4 KB: wasm / ts twin": 25 },
    );
    expect(c.failed).toBe(true);
    const bad = c.rows.filter((r) => r.fails);
    expect(bad.map((r) => r.name)).toEqual(["hash 1 MB: wasm / xxhash-wasm"]);
    expect(bad[0].verdict).toBe("REGRESSED");
    expect(bad[0].change).toBeCloseTo(-0.3, 10);
    const text = formatComparison(c);
    expect(text).toMatch(/\| hash 1 MB: wasm \/ xxhash-wasm \| 5\.00 \| 3\.50 \| -30% \| \*\*REGRESSED\*\*/);
    expect(text).toMatch(/bench gate FAILED \(tolerance 25%\): hash 1 MB: wasm \/ xxhash-wasm REGRESSED -30%$/);
    expect(text).not.toMatch(/estimate 4 KB[^\n]*REGRESSED/);
  });

  it("--tolerance moves the line: 30% passes at 0.35, 10% fails at 0.05", () => {
    expect(compareRatios({ r: 10 }, { r: 7 }, { tolerance: 0.35 }).failed).toBe(false);
    expect(compareRatios({ r: 10 }, { r: 9 }, { tolerance: 0.05 }).failed).toBe(true);
    expect(() => compareRatios({ r: 1 }, { r: 1 }, { tolerance: 1 })).toThrow(/tolerance/);
  });

  it("an improvement passes, as improved past the tolerance and ok within it", () => {
    const c = compareRatios({ a: 10, b: 10 }, { a: 20, b: 11 });
    expect(c.failed).toBe(false);
    expect(c.rows.map((r) => r.verdict)).toEqual(["improved", "ok"]);
    expect(formatComparison(c)).toMatch(/bench gate passed: 2 ratios/);
  });

  it("a baseline ratio the run did not produce fails as MISSING, unless its scope was not run", () => {
    const c = compareRatios({ a: 10, gone: 3 }, { a: 10 });
    expect(c.failed).toBe(true);
    expect(c.rows.find((r) => r.name === "gone")).toMatchObject({ verdict: "MISSING", fails: true });
    expect(formatComparison(c)).toMatch(/bench gate FAILED[^\n]*gone MISSING/);
    const scoped = compareRatios({ a: 10, gone: 3 }, { a: 10 }, { measured: (n) => n !== "gone" });
    expect(scoped.failed).toBe(false);
    expect(scoped.rows.find((r) => r.name === "gone")?.verdict).toBe("not run");
  });

  it("a ratio not in the baseline is reported as new and passes; a non-finite or zero one fails", () => {
    const c = compareRatios({ a: 10 }, { a: 10, fresh: 2 });
    expect(c.failed).toBe(false);
    expect(c.rows.find((r) => r.name === "fresh")).toMatchObject({ verdict: "new", fails: false });
    expect(compareRatios({ a: 10 }, { a: Number.NaN }).rows[0]).toMatchObject({ verdict: "INVALID", fails: true });
    expect(compareRatios({ a: 10 }, { a: 0 }).failed).toBe(true);
  });
});

describe("baseline files", () => {
  const file = "bench/baseline.json";
  const ok = { measured: {}, ratios: { "hash 1 MB: wasm / xxhash-wasm": { value: 5, runs: [5] } } };

  it("a well-formed one gives its values", () => {
    expect(parseBaseline(ok, file)).toEqual({ "hash 1 MB: wasm / xxhash-wasm": 5 });
  });

  it("a malformed one gives an error naming the file and the field", () => {
    expect(() => parseBaselineText("{ratios:", file)).toThrow(/^bench\/baseline\.json: not valid JSON/);
    expect(() => parseBaseline([], file)).toThrow(/^bench\/baseline\.json: field \(top level\) must be an object/);
    expect(() => parseBaseline({ measured: {} }, file)).toThrow(
      /^bench\/baseline\.json: field ratios must be an object of ratio name → \{ value \}, got nothing$/,
    );
    expect(() => parseBaseline({ ratios: {} }, file)).toThrow(/field ratios must be a non-empty object/);
    expect(() => parseBaseline({ ratios: { "hash 1 MB: wasm / xxhash-wasm": 5 } }, file)).toThrow(
      /^bench\/baseline\.json: field ratios\["hash 1 MB: wasm \/ xxhash-wasm"\] must be an object \{ value, runs \}, got 5$/,
    );
    expect(() => parseBaseline({ ratios: { "hash 1 MB: wasm / xxhash-wasm": { value: "fast" } } }, file)).toThrow(
      /^bench\/baseline\.json: field ratios\["hash 1 MB: wasm \/ xxhash-wasm"\]\.value must be a positive number, got "fast"$/,
    );
    expect(() => parseBaseline({ ratios: { r: { value: -1 } } }, file)).toThrow(/field ratios\["r"\]\.value must be a positive number, got -1/);
    expect(() => parseBaseline({ ratios: { r: { runs: [1] } } }, file)).toThrow(/field ratios\["r"\]\.value must be a positive number, got nothing/);
  });

  it("bench/baseline.json is well formed and holds every ratio the gate defines; each CPU's file is well formed and names only those", () => {
    const defined = kRatioDefs.map((d) => d.name).sort();
    expect(Object.keys(parseBaselineText(readFileSync(kBaseline, "utf8"), "bench/baseline.json")).sort()).toEqual(defined);
    const dir = path.dirname(kBaseline);
    const own = readdirSync(dir).filter((f) => /^baseline-[a-z0-9-]+\.json$/.test(f));
    expect(own.length).toBeGreaterThan(0);
    // A ratio a CPU's file lacks (defined after it was measured) is reported as new and passes.
    for (const f of own)
      for (const name of Object.keys(parseBaselineText(readFileSync(path.join(dir, f), "utf8"), `bench/${f}`))) expect(defined, f).toContain(name);
  });
});

describe("ratios from measurements", () => {
  it("the quick bench's results give each defined ratio whose two cases are there, as a throughput ratio", () => {
    const r = (group: string, name: string, mbPerSec: number): CaseResult => ({
      group,
      name,
      bytes: 1,
      items: 1,
      medianNs: 1,
      mbPerSec,
      nsPerItem: 1,
      samples: 1,
    });
    const ratios = benchRatios([r("hash 1 MB", "ctxfold wasm", 5000), r("hash 1 MB", "xxhash-wasm h64", 1000), r("hash 1 MB", "node:crypto sha1", 500)]);
    expect(ratios).toEqual({ "hash 1 MB: wasm / xxhash-wasm": 5, "hash 1 MB: wasm / node:crypto sha1": 10 });
  });

  it("the median over runs, with each run's value kept", () => {
    expect(medianRatios([{ a: 3, b: 1 }, { a: 1 }, { a: 2, b: 3 }])).toEqual({ a: { value: 2, runs: [3, 1, 2] }, b: { value: 2, runs: [1, 3] } });
  });
});

describe("CTXFOLD_BENCH_SLOWDOWN", () => {
  it("names ctxfold's WASM cases of a group prefix, or one case by GROUP / NAME", () => {
    const s = parseSlowdown("hash:3; adapters, dev corpus / openai-chat parse + render:2");
    expect(s).toEqual([
      { target: "hash", factor: 3 },
      { target: "adapters, dev corpus / openai-chat parse + render", factor: 2 },
    ]);
    expect(slowdownFactor(s, "hash 1 MB", "ctxfold wasm")).toBe(3);
    expect(slowdownFactor(s, "hash 200 B", "ctxfold wasm (batched)")).toBe(3);
    expect(slowdownFactor(s, "hash 1 MB", "xxhash-wasm h64")).toBe(1);
    expect(slowdownFactor(s, "hash 1 MB", "ctxfold content address (store name)")).toBe(3);
    expect(slowdownFactor(s, "hash 1 MB", "xxh64 store name (before)")).toBe(1);
    expect(slowdownFactor(s, "estimate 1 MB", "ctxfold wasm")).toBe(1);
    expect(slowdownFactor(s, "adapters, dev corpus", "openai-chat parse + render")).toBe(2);
    expect(slowdownFactor(s, "adapters, dev corpus", "openai-chat parse + render, rebuilt")).toBe(2);
    expect(parseSlowdown(undefined)).toEqual([]);
    expect(parseSlowdown(" ")).toEqual([]);
  });

  it("a malformed value throws, naming the variable", () => {
    for (const bad of ["hash", "hash:0", "hash:1.5", ":3", "hash:x"]) expect(() => parseSlowdown(bad), bad).toThrow(/^CTXFOLD_BENCH_SLOWDOWN takes TARGET:N/);
  });

  // That the slowed work shows in the gate's timings is proven by `npm run bench:gate:proof`
  // (bench/gate-proof.ts), which times real code: here, that the slowed case does the work.
  it("a slowed case does its work N times per call and says so; the others are the same cases", () => {
    const calls = { wasm: 0, peer: 0 };
    const cases: Case[] = [
      { group: "hash 1 MB", name: "ctxfold wasm", bytes: 1, fn: () => ++calls.wasm },
      { group: "hash 1 MB", name: "xxhash-wasm h64", bytes: 1, fn: () => ++calls.peer },
    ];
    const said: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => said.push(String(chunk)) > 0);
    const slowed = applySlowdown(cases, parseSlowdown("hash:4"));
    write.mockRestore();
    expect(slowed[1]).toBe(cases[1]);
    expect(slowed[0]).toMatchObject({ group: "hash 1 MB", name: "ctxfold wasm", bytes: 1 });
    expect(slowed[0].fn()).toBe(4);
    slowed[1].fn();
    expect(calls).toEqual({ wasm: 4, peer: 1 });
    expect(said).toEqual(["  CTXFOLD_BENCH_SLOWDOWN: hash 1 MB / ctxfold wasm does its work 4 times per call\n"]);
    expect(applySlowdown(cases, [])).toBe(cases);
  });
});

describe("the built gate script", () => {
  const ratios = { "hash 1 MB: wasm / xxhash-wasm": 5, "hash 1 MB: wasm / node:crypto sha1": 7 };

  it("--from a measurement within the tolerance exits 0; 30% below exits 1 naming the ratio", () => {
    const baseline = baselineFile("base.json", ratios);
    const same = gate(["--from", baselineFile("same.json", { ...ratios, "hash 1 MB: wasm / xxhash-wasm": 4 }), "--baseline", baseline]);
    expect(same.stderr).toBe("");
    expect(same.status).toBe(0);
    expect(same.stdout).toMatch(/bench gate passed/);
    const slow = gate(["--from", baselineFile("slow.json", { ...ratios, "hash 1 MB: wasm / xxhash-wasm": 3.5 }), "--baseline", baseline]);
    expect(slow.status).toBe(1);
    expect(slow.stdout).toMatch(/\| hash 1 MB: wasm \/ xxhash-wasm \| 5\.00 \| 3\.50 \| -30% \| \*\*REGRESSED\*\*/);
    expect(slow.stdout).toMatch(/bench gate FAILED \(tolerance 25%\): hash 1 MB: wasm \/ xxhash-wasm REGRESSED -30%/);
    // --tolerance overrides the constant.
    expect(gate(["--from", path.join(dir, "slow.json"), "--baseline", baseline, "--tolerance", "0.35"]).status).toBe(0);
  });

  it("a missing ratio fails; a malformed baseline stops it with exit 2, naming the file and the field", () => {
    const baseline = baselineFile("base2.json", ratios);
    const missing = gate(["--from", baselineFile("part.json", { "hash 1 MB: wasm / xxhash-wasm": 5 }), "--baseline", baseline]);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toMatch(/hash 1 MB: wasm \/ node:crypto sha1 \| 7\.00 \| — \| — \| \*\*MISSING\*\*/);
    const bad = path.join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ ratios: { "hash 1 MB: wasm / xxhash-wasm": { value: "5" } } }));
    const r = gate(["--from", path.join(dir, "part.json"), "--baseline", bad]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`bench:gate: ${bad}: field ratios["hash 1 MB: wasm / xxhash-wasm"].value must be a positive number, got "5"`);
    expect(gate(["--runs", "0"]).status).toBe(2);
  });
});
