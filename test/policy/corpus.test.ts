/** The tiered compactor's invariants over the corpus at 4k, 8k and 32k. */
import { describe, expect, it } from "vitest";
import { kFormats, openaiChatAdapter } from "../../src/adapters/index.js";
import { classify } from "../../src/policy/classify.js";
import { createCompactor } from "../../src/policy/index.js";
import { createMemoryStore, reachableRefs } from "../../src/store/index.js";
import { newViolations, validate } from "../../src/validate/index.js";
import { renderMessages } from "../../src/adapters/index.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";

// Every second run of each corpus file: all of them (dev and dev2) took twice as long.
describe.skipIf(!hasCorpus)(`tiered compaction on the corpus${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  const runs = hasCorpus
    ? corpusLines({ stride: 2 })
        .map((l) => JSON.parse(l) as CorpusRun)
        .map((r) => ({ id: r.id, messages: openaiChatAdapter.parse(r.messages, { source: r.id }) }))
    : [];

  it("budget (or BudgetInfeasible), validity, critical verbatim, recoverable, non-destructive", async () => {
    let compacted = 0;
    let infeasible = 0;
    for (const budget of [4000, 8000, 32000]) {
      const store = createMemoryStore();
      const compactor = createCompactor({ store });
      for (const run of runs) {
        const snapshot = JSON.stringify(run.messages);
        const r = await compactor.compactCanonical(run.messages, { budget });
        expect(JSON.stringify(run.messages)).toBe(snapshot);
        if (r.tier !== "normal") compacted++;
        if (r.status === "ok") expect(r.tokensAfter, `${run.id} ${budget}`).toBeLessThanOrEqual(budget);
        else {
          infeasible++;
          expect(r.infeasible!.criticalTokens, `${run.id} ${budget}`).toBeGreaterThan(budget * 0.5);
        }
        for (const f of ["openai-chat", "anthropic"] as const) {
          expect(newViolations(validate(run.messages, f), validate(r.canonical, f)), `${run.id} ${budget} ${f}`).toEqual([]);
        }
        const classes = classify(run.messages);
        const outParts = new Set(r.canonical.flatMap((m) => m.parts));
        run.messages.forEach((m, i) => {
          if (classes[i] === "critical") for (const p of m.parts) expect(outParts.has(p), `${run.id} ${budget} ${m.id}`).toBe(true);
        });
        for (const ref of r.refs) expect(() => store.get(ref)).not.toThrow();
        // Every original is reachable from the output: through the refs it names and the indexes they name.
        const reached = reachableRefs(store, [JSON.stringify(r.canonical)]);
        expect(
          r.refs.filter((ref) => !reached.has(ref)),
          `${run.id} ${budget}`,
        ).toEqual([]);
      }
    }
    expect(compacted).toBeGreaterThan(runs.length); // of 3 × runs.length compactions
    expect(kFormats.length).toBe(5);
    expect(infeasible).toBeLessThan(runs.length);
  }, 300_000);

  it("deterministic and idempotent at 8k", async () => {
    const a = createCompactor({ store: createMemoryStore() });
    const b = createCompactor({ store: createMemoryStore() });
    for (const run of runs) {
      const r = await a.compactCanonical(run.messages, { budget: 8000 });
      expect(JSON.stringify((await b.compactCanonical(run.messages, { budget: 8000 })).canonical), run.id).toBe(JSON.stringify(r.canonical));
      if (r.status === "ok") expect((await a.compactCanonical(r.canonical, { budget: 8000 })).canonical, run.id).toEqual(r.canonical);
    }
  }, 300_000);

  it("stable prefix: replayed prompt by prompt in a session, outputs within an epoch only append", async () => {
    let pairs = 0;
    for (const run of runs.slice(0, 120)) {
      const session = createCompactor({ store: createMemoryStore() }).session();
      let prev: string[] | undefined;
      let prevEpoch = -1;
      for (let i = 1; i < run.messages.length; i++) {
        if (run.messages[i].role !== "assistant") continue;
        const r = await session.compactCanonical(run.messages.slice(0, i), { budget: 8000 });
        const out = (renderMessages(r.canonical, "openai-chat") as unknown[]).map((m) => JSON.stringify(m));
        if (prev && r.epoch === prevEpoch) {
          expect(out.slice(0, prev.length), `${run.id} @${i}`).toEqual(prev);
          pairs++;
        }
        prev = out;
        prevEpoch = r.epoch;
      }
    }
    expect(pairs).toBeGreaterThan(1000);
  }, 300_000);
});
