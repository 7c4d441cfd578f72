/**
 * Compactor.warmup: the exact counter's table, then once per thread a few compactions of a
 * synthetic run by a throwaway compactor, so a latency-sensitive first call does not pay the
 * code's first runs. It must touch nothing of the caller's compactor, never reject, and its
 * run must reach what a real session's calls run (or it warms the wrong code).
 */
import { describe, expect, it } from "vitest";
import { parseMessages } from "../../src/adapters/index.js";
import { createCompactor, type PolicyEvent, type Summarizer } from "../../src/policy/index.js";
import { kPrimeBudgets, kPrimeSteps } from "../../src/policy/compactor.js";
import { primeRun } from "../../src/policy/prime-run.js";
import { isLedgerPart } from "../../src/policy/relevance/ledger.js";
import { createMemoryStore } from "../../src/store/index.js";
import { validate } from "../../src/validate/index.js";

describe("Compactor.warmup", () => {
  it("never rejects, even where a compaction of its settings would throw", async () => {
    const clock = () => {
      throw new Error("clock broken");
    };
    await expect(createCompactor({ now: clock }).warmup()).resolves.toBeUndefined();
  });

  it("touches nothing of the caller's compactor: its store, events, stats, summariser", async () => {
    const store = createMemoryStore();
    const events: PolicyEvent[] = [];
    let summarised = 0;
    const summarizer: Summarizer = () => {
      summarised++;
      return "summary";
    };
    const compactor = createCompactor({ store, onEvent: (e) => events.push(e), summarizer });
    const before = compactor.stats();
    await compactor.warmup();
    expect(store.refs?.()).toEqual([]);
    expect(events).toEqual([]);
    expect(summarised).toBe(0);
    expect(compactor.stats()).toEqual(before);
  });

  it("runs what a real session's calls run: whole epochs, calls within an epoch, the ledger, refs, failures kept", async () => {
    const store = createMemoryStore();
    const compactor = createCompactor({ store });
    let withinEpoch = 0;
    let wholeEpochs = 0;
    let ledger = 0;
    for (const budget of kPrimeBudgets) {
      const session = compactor.session();
      let epoch = 0;
      for (const steps of kPrimeSteps) {
        const input = primeRun(steps);
        const r = await session.compact(input, { format: "openai-chat", budget });
        expect(r.status).toBe("ok");
        expect(r.tokensAfter).toBeLessThanOrEqual(budget);
        expect(validate(r.messages, { format: "openai-chat" }).issues.filter((i) => i.severity === "error")).toEqual([]);
        if (r.epoch > epoch) wholeEpochs++;
        else if (r.epoch > 0) withinEpoch++;
        epoch = r.epoch;
        if (r.canonical.some((m) => m.parts.some(isLedgerPart))) ledger++;
        if (r.tokensBefore > budget) {
          expect(r.refs.length).toBeGreaterThan(0);
          // The failed edit (step 6's, then step 14's) stays visible.
          if (steps > 6) expect(JSON.stringify(r.messages)).toContain("No replacement was performed");
        }
      }
    }
    expect(wholeEpochs).toBeGreaterThanOrEqual(3);
    expect(withinEpoch).toBeGreaterThanOrEqual(2);
    expect(ledger).toBeGreaterThan(0);
    expect(store.refs?.().length).toBeGreaterThan(0);
  });

  it("is a run whose shorter forms are prefixes of the longer (a session's growing conversation)", () => {
    const long = parseMessages(primeRun(kPrimeSteps[kPrimeSteps.length - 1]), { format: "openai-chat" }).messages;
    for (const steps of kPrimeSteps) {
      const short = parseMessages(primeRun(steps), { format: "openai-chat" }).messages;
      expect(long.slice(0, short.length)).toEqual(short);
    }
  });
});
