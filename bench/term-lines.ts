/**
 * `node dist/bench/term-lines.js [--runs N] [--time MS]`: the focus-lines term matcher on the
 * dev corpus's tool outputs, with each run's focus (src/policy/relevance/focus.ts focusTerms at the run's
 * last prompt). Contenders, all giving the same lines:
 *
 * - wasm batch: termLines over a run's outputs in one call (UTF-8 encoding into linear memory
 *   and the copies back included);
 * - wasm per output: one call per output, as stage 2 makes them;
 * - ts twin: the kernel's TypeScript twin (its UTF-8 encoding included);
 * - ts indexOf: no encoding at all: per term, String#indexOf over the whole output with the
 *   boundary rule (indexOfTerm), lines found by binary search over the line starts.
 *
 * Prints medians and ratios to "wasm per output" measured in the same process, for outputs of
 * any size and for those stage 2 replaces (above 120 estimated tokens). No timed assertion.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import { openaiChatAdapter } from "../src/adapters/index.js";
import { TermSet, termLines, type TermLineMatches } from "../src/policy/relevance/term-lines.js";
import { indexOfTerm } from "../src/model/terms.js";
import { focusTerms } from "../src/policy/relevance/focus.js";
import { resultText } from "../src/steps/reducer.js";
import { TokenCounter } from "../src/tokens/token-counter.js";
import { fmt, runCases, type Case } from "./lib.js";

const kCorpus = fileURLToPath(new URL("../../../shared/corpus/dev.jsonl.gz", import.meta.url));

/** termLines by String#indexOf per term: the plain TypeScript way, for comparison. */
function termLinesByIndexOf(texts: readonly string[], terms: readonly string[]): TermLineMatches {
  const pairs: number[] = [];
  const ends = new Uint32Array(texts.length);
  const found = new Uint8Array(terms.length);
  texts.forEach((text, i) => {
    const starts = [0];
    for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
    const counts = new Uint32Array(starts.length);
    terms.forEach((term, k) => {
      for (let at = indexOfTerm(text, term); at >= 0; ) {
        found[k] = 1;
        let lo = 0;
        let hi = starts.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >>> 1;
          if (starts[mid] <= at) lo = mid;
          else hi = mid - 1;
        }
        counts[lo]++;
        if (lo + 1 >= starts.length) break;
        at = indexOfTerm(text, term, starts[lo + 1]);
      }
    });
    counts.forEach((c, line) => {
      if (c > 0) pairs.push(line, c);
    });
    ends[i] = pairs.length / 2;
  });
  return { pairs: Uint32Array.from(pairs), ends, found };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: "string" }, time: { type: "string" } } });
  if (!existsSync(kCorpus)) throw new Error(`needs ${kCorpus} (../shared beside the checkout)`);
  const counter = new TokenCounter();
  const lines = gunzipSync(readFileSync(kCorpus)).toString("utf8").split("\n").filter(Boolean);
  const want = Number(values.runs ?? lines.length);
  const runs = Array.from({ length: Math.min(want, lines.length) }, (_, k) => {
    const r = JSON.parse(lines[Math.floor((k * lines.length) / Math.min(want, lines.length))]) as { id: string; messages: unknown[] };
    const messages = openaiChatAdapter.parse(r.messages, { source: r.id });
    const outputs = messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool-result" ? [resultText(p.content)] : [])));
    const terms = focusTerms(messages, messages.length);
    return { terms, set: new TermSet(terms), outputs, large: outputs.filter((o) => counter.estimate(o) > 120) };
  });
  // Same answers first: a bench of different results would compare nothing.
  for (const r of runs) {
    const a = termLines(r.outputs, r.set, { backend: "wasm" });
    const b = termLinesByIndexOf(r.outputs, r.terms);
    const c = termLines(r.outputs, r.set, { backend: "ts" });
    if (
      a.pairs.join() !== b.pairs.join() ||
      a.ends.join() !== b.ends.join() ||
      a.pairs.join() !== c.pairs.join() ||
      a.found.join() !== b.found.join() ||
      a.found.join() !== c.found.join()
    )
      throw new Error("contenders disagree");
  }
  const cases: Case[] = [];
  for (const which of ["outputs", "large"] as const) {
    const bytes = runs.reduce((n, r) => n + r[which].reduce((m, o) => m + Buffer.byteLength(o), 0), 0);
    const items = runs.reduce((n, r) => n + r[which].length, 0);
    const group = which === "outputs" ? "all outputs" : "outputs > 120 tokens";
    cases.push(
      { group, name: "wasm batch", bytes, items, fn: () => runs.forEach((r) => termLines(r[which], r.set, { backend: "wasm" })) },
      { group, name: "wasm per output", bytes, items, fn: () => runs.forEach((r) => r[which].forEach((o) => termLines([o], r.set, { backend: "wasm" }))) },
      { group, name: "ts twin", bytes, items, fn: () => runs.forEach((r) => termLines(r[which], r.set, { backend: "ts" })) },
      { group, name: "ts indexOf", bytes, items, fn: () => runs.forEach((r) => termLinesByIndexOf(r[which], r.terms)) },
    );
  }
  const meanTerms = runs.reduce((n, r) => n + r.terms.length, 0) / runs.length;
  process.stdout.write(`${runs.length} runs, ${fmt(meanTerms)} focus terms a run on average\n`);
  const results = await runCases(cases, { time: Number(values.time ?? 300), rounds: 3 });
  for (const group of ["all outputs", "outputs > 120 tokens"]) {
    const base = results.find((x) => x.group === group && x.name === "wasm per output")!;
    process.stdout.write(`${group}: ${base.items} outputs, ${fmt(base.bytes / 1e6)} MB\n`);
    for (const x of results.filter((y) => y.group === group)) {
      process.stdout.write(
        `  ${x.name.padEnd(16)} ${fmt(x.medianNs / 1e6).padStart(8)} ms  ${fmt(x.mbPerSec).padStart(7)} MB/s  ${fmt(x.nsPerItem / 1000).padStart(7)} us/output  ×${fmt(x.medianNs / base.medianNs)} of wasm per output\n`,
      );
    }
  }
}

await main();
