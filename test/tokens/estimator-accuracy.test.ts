import { describe, expect, it } from "vitest";
import { hashText } from "../../src/core/hash.js";
import { generateRun } from "../../src/gen/run.js";
import { messageTexts } from "../../src/model/texts.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { corpusLines } from "../helpers-corpus.js";
import { hasCorpus, kCorpusPath, kNoCorpusReason } from "../helpers.js";

const counter = new TokenCounter({ encoding: "o200k_base" });

describe("estimator accuracy on generated transcripts", () => {
  it("whole-transcript estimates are within 5% of exact o200k_base", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const texts = messageTexts(generateRun({ seed, steps: 25 }).messages);
      const est = counter.estimateMany(texts).reduce((a, b) => a + b, 0);
      const exact = texts.reduce((n, t) => n + counter.exact(t), 0);
      expect(Math.abs(est - exact) / exact).toBeLessThan(0.05);
    }
  });
});

// The targets, on the runs the calibration held out: per-message MAPE <= 3% (texts of 50 tokens
// or more) and whole-transcript error <= 1% on average. Of dev.jsonl.gz only, the corpus the
// weights were fitted on: dev2.jsonl.gz's Claude Code and Aider texts were not in the fit (their
// per-message error is about 4%, for a recalibration to bring down).
describe.skipIf(!hasCorpus)(`estimator accuracy on ../shared/corpus (held-out runs)${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  it("meets the per-message and whole-transcript targets", () => {
    const runs = corpusLines({ files: [kCorpusPath] }).map(
      (l) => JSON.parse(l) as { id: string; messages: { content?: unknown; tool_calls?: { function: { name: string; arguments: string } }[] }[] },
    );
    let apeSum = 0;
    let apeN = 0;
    const runErrors: number[] = [];
    for (const run of runs) {
      if ((hashText(run.id) & 1n) !== 1n) continue; // the calibration's held-out half
      const texts: string[] = [];
      for (const m of run.messages) {
        if (typeof m.content === "string" && m.content) texts.push(m.content);
        for (const c of m.tool_calls ?? []) texts.push(c.function.name, c.function.arguments);
      }
      const est = counter.estimateMany(texts);
      let e = 0;
      let x = 0;
      texts.forEach((t, i) => {
        const exact = counter.exact(t);
        e += est[i];
        x += exact;
        if (exact >= 50) {
          apeSum += Math.abs(est[i] - exact) / exact;
          apeN++;
        }
      });
      if (x > 0) runErrors.push(Math.abs(e - x) / x);
    }
    const mape = apeSum / apeN;
    const transcript = runErrors.reduce((a, b) => a + b, 0) / runErrors.length;
    expect(mape).toBeLessThanOrEqual(0.03);
    expect(transcript).toBeLessThanOrEqual(0.01);
  }, 300_000);
});
