/**
 * `npm run calibrate`: fits the token estimator's weights against js-tiktoken.
 *
 * Data: every text of ../shared/corpus/dev.jsonl.gz (message contents, tool-call names and
 * arguments) plus generated prose, code, JSON, logs, CJK, emoji and accented/Cyrillic/Arabic
 * text (src/gen/text.ts), so the weights do not fit one corpus only. Runs are split in halves
 * by the hash of their id; weights are fitted on one half and every figure is also reported on
 * the held-out half.
 *
 * Fit: non-negative weights, no intercept (estimates stay additive over concatenation),
 * minimising the mean absolute relative error per text by iteratively reweighted least
 * squares, each step a non-negative least-squares solve on the Gram matrix by coordinate
 * descent. Writes src/tokens/weights.generated.ts, bench/results/calibration.json and the
 * estimator section of docs/architecture.md.
 */
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { rewriteDocSection } from "../bench/lib.js";
import { getCore } from "../src/core/core-instance.js";
import { hashText } from "../src/core/hash.js";
import { createRng, syntheticText, TEXT_KINDS, type TextKind } from "../src/gen/text.js";
import { FEATURE_COUNT, FEATURE_NAMES } from "../src/tokens/estimator.js";
import { contentClass, kClasses, type ContentClass } from "./content-class.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const corpusPath = `${root}../shared/corpus/dev.jsonl.gz`;
const require = createRequire(import.meta.url);

type Encoding = "o200k_base" | "cl100k_base";
const kEncodings: Encoding[] = ["o200k_base", "cl100k_base"];

interface Sample {
  text: string;
  run: string;
  source: "corpus" | "generated";
  cls: ContentClass;
  test: boolean;
  exact: Record<Encoding, number>;
}

function tokenizers(): Record<Encoding, (s: string) => number> {
  const { Tiktoken } = require("js-tiktoken/lite") as { Tiktoken: new (r: unknown) => { encode(s: string, a: string[], d: string[]): number[] } };
  const out = {} as Record<Encoding, (s: string) => number>;
  for (const e of kEncodings) {
    const ranks = require(`js-tiktoken/ranks/${e}`) as { default?: unknown };
    const t = new Tiktoken(ranks.default ?? ranks);
    out[e] = (s) => t.encode(s, [], []).length;
  }
  return out;
}

function loadSamples(): Sample[] {
  if (!existsSync(corpusPath)) throw new Error(`calibrate needs ${corpusPath} (../shared beside the checkout)`);
  const count = tokenizers();
  const samples: Sample[] = [];
  const add = (text: string, run: string, source: Sample["source"], cls: ContentClass, test: boolean) => {
    if (!text) return;
    samples.push({ text, run, source, cls, test, exact: { o200k_base: count.o200k_base(text), cl100k_base: count.cl100k_base(text) } });
  };
  const lines = gunzipSync(readFileSync(corpusPath)).toString("utf8").split("\n").filter(Boolean);
  lines.forEach((line, i) => {
    const run = JSON.parse(line) as { id: string; messages: { content?: unknown; tool_calls?: { function: { name: string; arguments: string } }[] }[] };
    const test = (hashText(run.id) & 1n) === 1n;
    for (const m of run.messages) {
      if (typeof m.content === "string") add(m.content, run.id, "corpus", contentClass(m.content), test);
      for (const c of m.tool_calls ?? []) {
        add(c.function.name, run.id, "corpus", "code", test);
        add(c.function.arguments, run.id, "corpus", contentClass(c.function.arguments), test);
      }
    }
    if ((i + 1) % 50 === 0) process.stderr.write(`  corpus: ${i + 1}/${lines.length} runs tokenized\n`);
  });
  const r = createRng(20261123);
  for (const kind of TEXT_KINDS) {
    for (let i = 0; i < 300; i++) {
      const size = Math.round(40 * Math.exp(r.next() * Math.log(200))); // 40 .. 8000 chars, log-uniform
      add(syntheticText(kind as TextKind, size, r), `gen/${kind}/${i}`, "generated", kind as ContentClass, i % 2 === 1);
    }
  }
  return samples;
}

/** Non-negative least squares on the normal equations G b = h by cyclic coordinate descent. */
function nnls(G: Float64Array, h: Float64Array, n: number, start?: Float64Array): Float64Array {
  const b = start ? Float64Array.from(start) : new Float64Array(n);
  for (let sweep = 0; sweep < 20000; sweep++) {
    let moved = 0;
    for (let j = 0; j < n; j++) {
      const gjj = G[j * n + j];
      if (gjj <= 0) continue;
      let gb = 0;
      for (let k = 0; k < n; k++) gb += G[j * n + k] * b[k];
      const next = Math.max(0, b[j] + (h[j] - gb) / gjj);
      moved = Math.max(moved, Math.abs(next - b[j]) * Math.sqrt(gjj));
      b[j] = next;
    }
    if (moved < 1e-9) break;
  }
  return b;
}

/** Rows of a least-squares problem: `x` holds `y.length` feature vectors of FEATURE_COUNT. */
interface Rows {
  x: Float64Array;
  y: Float64Array;
}

/**
 * Minimises, over b >= 0, the mean absolute relative error of the texts plus `lambda` times
 * that of the run totals (whole transcripts: per-text errors that share a sign add up there,
 * so they get their own term), by iteratively reweighted least squares. Each block's weights
 * are normalised so that lambda is the runs' share of the objective whatever the row counts.
 */
function fit(texts: Rows, runs: Rows, lambda: number): Float64Array {
  const n = FEATURE_COUNT;
  const blocks = [
    { rows: texts, share: 1, floor: 0.005 },
    { rows: runs, share: lambda, floor: 0.002 },
  ];
  const estimate = (x: Float64Array, i: number, b: Float64Array) => {
    let e = 0;
    for (let j = 0; j < n; j++) e += x[i * n + j] * b[j];
    return e;
  };
  let b: Float64Array | undefined;
  for (let iter = 0; iter <= 12; iter++) {
    const G = new Float64Array(n * n);
    const h = new Float64Array(n);
    for (const { rows, share, floor } of blocks) {
      const { x, y } = rows;
      // Relative error weights: 1/y² per unit of |e - y|/y, floored so no row dominates.
      const w = Float64Array.from(y, (yi, i) => 1 / (yi * yi * (b ? Math.max(Math.abs(estimate(x, i, b) - yi) / yi, floor) : 1)));
      let norm = 0;
      w.forEach((wi, i) => (norm += wi * y[i] * y[i]));
      for (let i = 0; i < y.length; i++) {
        const wi = (share * w[i]) / norm;
        for (let j = 0; j < n; j++) {
          const xj = x[i * n + j];
          if (xj === 0) continue;
          h[j] += wi * xj * y[i];
          for (let k = 0; k < n; k++) G[j * n + k] += wi * xj * x[i * n + k];
        }
      }
    }
    for (let j = 0; j < n; j++) G[j * n + j] += 1e-12 * (G[j * n + j] + 1e-6); // keeps unused features at 0
    b = nnls(G, h, n, b);
  }
  return b!;
}

function evaluate(samples: Sample[], X: Float64Array, b: Float64Array, e: Encoding) {
  const n = FEATURE_COUNT;
  const est = samples.map((_, i) => {
    let s = 0;
    for (let j = 0; j < n; j++) s += X[i * n + j] * b[j];
    return s;
  });
  const mape = (pick: (s: Sample) => boolean) => {
    let sum = 0;
    let k = 0;
    samples.forEach((s, i) => {
      if (s.exact[e] >= 50 && pick(s)) {
        sum += Math.abs(est[i] - s.exact[e]) / s.exact[e];
        k++;
      }
    });
    return { mape: k ? (sum / k) * 100 : NaN, texts: k };
  };
  const runTotals = (test: boolean | undefined) => {
    const byRun = new Map<string, [number, number]>();
    samples.forEach((s, i) => {
      if (s.source !== "corpus" || (test !== undefined && s.test !== test)) return;
      const t = byRun.get(s.run) ?? [0, 0];
      t[0] += est[i];
      t[1] += s.exact[e];
      byRun.set(s.run, t);
    });
    const errs = [...byRun.values()].filter(([, x]) => x > 0).map(([a, x]) => Math.abs(a - x) / x);
    return { mean: (errs.reduce((a, c) => a + c, 0) / errs.length) * 100, max: Math.max(...errs) * 100, runs: errs.length };
  };
  let estSum = 0;
  let exactSum = 0;
  samples.forEach((s, i) => {
    if (s.source === "corpus") {
      estSum += est[i];
      exactSum += s.exact[e];
    }
  });
  const perClass: Record<string, { corpus: ReturnType<typeof mape>; generated: ReturnType<typeof mape> }> = {};
  for (const c of kClasses) {
    perClass[c] = {
      corpus: mape((s) => s.source === "corpus" && s.test && s.cls === c),
      generated: mape((s) => s.source === "generated" && s.test && s.cls === c),
    };
  }
  return {
    perMessage: {
      all: mape((s) => s.source === "corpus"),
      heldOut: mape((s) => s.source === "corpus" && s.test),
      train: mape((s) => s.source === "corpus" && !s.test),
    },
    transcripts: { all: runTotals(undefined), heldOut: runTotals(true) },
    corpusBias: (estSum / exactSum - 1) * 100,
    perClass,
  };
}

/** The run totals' share of the fitting objective (scripts/calibrate.ts fit). */
const kRunShare = 1.0;

const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "–");

function main(): void {
  const t0 = Date.now();
  process.stderr.write("calibrate: tokenizing the corpus and generated texts with js-tiktoken...\n");
  const samples = loadSamples();
  const X = new Float64Array(samples.length * FEATURE_COUNT);
  const counts = getCore().featureCounts(samples.map((s) => s.text));
  X.set(counts);
  const n = FEATURE_COUNT;
  const weights = {} as Record<Encoding, Float64Array>;
  const report = {} as Record<Encoding, ReturnType<typeof evaluate>>;
  for (const e of kEncodings) {
    const train = samples.flatMap((s, i) => (!s.test && s.exact[e] >= 1 ? [i] : []));
    const texts: Rows = { x: new Float64Array(train.length * n), y: Float64Array.from(train, (i) => samples[i]!.exact[e]) };
    train.forEach((i, r) => texts.x.set(X.subarray(i * n, (i + 1) * n), r * n));
    const runIds = [...new Set(train.filter((i) => samples[i]!.source === "corpus").map((i) => samples[i]!.run))];
    const runIndex = new Map(runIds.map((id, r) => [id, r]));
    const runs: Rows = { x: new Float64Array(runIds.length * n), y: new Float64Array(runIds.length) };
    samples.forEach((s, i) => {
      const r = runIndex.get(s.run);
      if (r === undefined) return;
      runs.y[r] += s.exact[e];
      for (let j = 0; j < n; j++) runs.x[r * n + j] += X[i * n + j];
    });
    weights[e] = fit(texts, runs, kRunShare);
    report[e] = evaluate(samples, X, weights[e], e);
    process.stderr.write(
      `  ${e}: per-message MAPE ${f2(report[e].perMessage.heldOut.mape)}% held out, transcripts ${f2(report[e].transcripts.heldOut.mean)}% mean\n`,
    );
  }
  const corpusTexts = samples.filter((s) => s.source === "corpus").length;
  const corpusBytes = samples.filter((s) => s.source === "corpus").reduce((n, s) => n + Buffer.byteLength(s.text), 0);
  const summary = {
    date: new Date().toISOString().slice(0, 10),
    corpus: { texts: corpusTexts, bytes: corpusBytes },
    generatedTexts: samples.length - corpusTexts,
    features: FEATURE_NAMES,
    report,
  };
  const fmtW = (w: Float64Array) => `[\n${Array.from(w, (x, j) => `  ${x}, // ${FEATURE_NAMES[j]}`).join("\n")}\n]`;
  const o = report.o200k_base;
  writeFileSync(
    `${root}src/tokens/weights.generated.ts`,
    `// GENERATED by scripts/calibrate.ts (npm run calibrate) on ${summary.date}: do not edit.
// Fitted against js-tiktoken on ${corpusTexts} texts (${(corpusBytes / 1e6).toFixed(1)} MB) of ../shared/corpus/dev.jsonl.gz
// and ${summary.generatedTexts} generated texts; weights are non-negative, no intercept.
// o200k_base per-message MAPE (texts >= 50 tokens): ${f2(o.perMessage.heldOut.mape)}% held out, ${f2(o.perMessage.all.mape)}% all;
// whole-transcript error: ${f2(o.transcripts.heldOut.mean)}% mean held out (max ${f2(o.transcripts.heldOut.max)}%), bias ${f2(o.corpusBias)}%.

/** o200k_base weights, one per feature of src/tokens/feature-spec.ts, in its order. */
export const O200K_WEIGHTS: readonly number[] = ${fmtW(weights.o200k_base)};

/** cl100k_base weights, one per feature of src/tokens/feature-spec.ts, in its order. */
export const CL100K_WEIGHTS: readonly number[] = ${fmtW(weights.cl100k_base)};

/** What the calibration measured (see bench/results/calibration.json for every figure). */
export const CALIBRATION = ${JSON.stringify({ date: summary.date, o200k_base: { perMessageMapeHeldOut: o.perMessage.heldOut.mape, transcriptErrorHeldOut: o.transcripts.heldOut.mean }, cl100k_base: { perMessageMapeHeldOut: report.cl100k_base.perMessage.heldOut.mape, transcriptErrorHeldOut: report.cl100k_base.transcripts.heldOut.mean } }, null, 2)} as const;
`,
  );
  mkdirSync(`${root}bench/results`, { recursive: true });
  writeFileSync(`${root}bench/results/calibration.json`, JSON.stringify(summary, null, 2) + "\n");
  writeEstimatorSection(summary.date, corpusTexts, corpusBytes, summary.generatedTexts, report);
  process.stderr.write(`calibrate: done in ${((Date.now() - t0) / 1000).toFixed(0)} s; run \`npm run build\` to use the new weights\n`);
}

/** The estimator section of the docs (estimator:begin / estimator:end). */
function writeEstimatorSection(date: string, texts: number, bytes: number, generated: number, report: Record<Encoding, ReturnType<typeof evaluate>>): void {
  const row = (e: Encoding) => {
    const r = report[e];
    return `| ${e} | ${f2(r.perMessage.heldOut.mape)}% (${r.perMessage.heldOut.texts}) | ${f2(r.perMessage.all.mape)}% | ${f2(r.transcripts.heldOut.mean)}% / ${f2(r.transcripts.heldOut.max)}% | ${f2(r.transcripts.all.mean)}% | ${f2(r.corpusBias)}% |`;
  };
  const cls = (e: Encoding) =>
    `| ${e} | ${kClasses.map((c) => `${f2(report[e].perClass[c].corpus.mape)} / ${f2(report[e].perClass[c].generated.mape)}`).join(" | ")} |`;
  const md = `Calibrated by \`npm run calibrate\` on ${date} against js-tiktoken: ${texts} corpus texts (${(bytes / 1e6).toFixed(1)} MB)
and ${generated} generated ones, fitted on half the runs; "held out" is the other half.

| encoding | per-message MAPE, held out (texts ≥ 50 tokens) | all | whole transcript, held out: mean / max | all: mean | corpus bias |
|---|---:|---:|---:|---:|---:|
${row("o200k_base")}
${row("cl100k_base")}

Per content class, per-message MAPE % on held-out texts ≥ 50 tokens, corpus / generated ("–": none of that class):

| encoding | ${kClasses.join(" | ")} |
|---|${kClasses.map(() => "---:").join("|")}|
${cls("o200k_base")}
${cls("cl100k_base")}
`;
  rewriteDocSection("estimator", md);
}

main();
