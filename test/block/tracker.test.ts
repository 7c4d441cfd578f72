import { describe, expect, it } from "vitest";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { messageTexts } from "../../src/model/texts.js";
import { ContextTracker, kCorrectionBounds } from "../../src/block/tracker.js";
import { kMessageOverhead, TokenCounter } from "../../src/tokens/token-counter.js";
import { thrown } from "../helpers.js";

const counter = new TokenCounter();

/**
 * The expected count, computed text by text (independent of the batching and the memo): per
 * message, its overheads and role (one token) plus its texts' estimates, rounded up.
 */
function expected(messages: readonly Message[]): number {
  const o = kMessageOverhead.openai;
  let total = 0;
  for (const m of messages) {
    let n = o.perMessage + 1;
    for (const t of messageTexts([m])) n += counter.estimateMany([t])[0];
    for (const p of m.parts) n += p.type === "tool-call" ? o.perToolCall : p.type === "tool-result" ? o.perToolResult : 0;
    total += Math.ceil(n);
  }
  return total;
}

/** A counter whose every text costs its length: exact control over the totals. */
const lengthCounter = {
  provider: "openai",
  count: (t: string) => t.length,
  estimate: (t: string) => t.length,
  estimateMany: (ts: readonly string[]) => Float64Array.from(ts, (t) => t.length),
} as unknown as TokenCounter;

/** One user message worth exactly `tokens` under lengthCounter (3 overhead + 1 for the role). */
function userMessage(tokens: number): Message {
  return { id: `u${tokens}`, role: "user", parts: [{ type: "text", text: "x".repeat(tokens - 4) }], meta: {} };
}

describe("ContextTracker", () => {
  const run = generateRun({ seed: 21, steps: 12 }).messages;
  const a = run.slice(0, 10);
  const b = run.slice(10);

  it("estimates each loop as the sum of its messages' texts and overheads, and the session as the sum of loops", () => {
    const t = new ContextTracker({ maxContextTokens: 200_000, counter });
    t.setLoop("a", a);
    t.setLoop(2, b);
    expect(t.loopTokens("a")).toBe(expected(a));
    expect(t.loopTokens(2)).toBe(expected(b));
    expect(t.loopTokens("2")).toBe(0);
    expect(t.loopTokens("a")).toBeGreaterThan(a.length * 4);
    expect(t.sessionTokens()).toBe(expected(a) + expected(b));
    expect(t.loopIds()).toEqual(["a", 2]);
    // No usage reported yet: used = estimate.
    expect(t.usedTokens()).toBe(t.sessionTokens());
  });

  it("adds messages incrementally to the same total as setting them at once", () => {
    const whole = new ContextTracker({ maxContextTokens: 200_000 });
    whole.setLoop(0, run);
    const inc = new ContextTracker({ maxContextTokens: 200_000 });
    for (let i = 0; i < run.length; i += 3) inc.addMessages(0, run.slice(i, i + 3));
    expect(inc.loopTokens(0)).toBe(whole.loopTokens(0));
    expect(inc.sessionTokens()).toBe(expected(run));
  });

  it("setLoop replaces a loop's estimate; deleteLoop forgets it", () => {
    const t = new ContextTracker({ maxContextTokens: 200_000 });
    t.setLoop("a", run);
    t.setLoop("b", b);
    t.setLoop("a", a);
    expect(t.loopTokens("a")).toBe(expected(a));
    expect(t.sessionTokens()).toBe(expected(a) + expected(b));
    t.setLoop("a", []);
    expect(t.sessionTokens()).toBe(expected(b));
    expect(t.deleteLoop("b")).toBe(true);
    expect(t.deleteLoop("b")).toBe(false);
    expect(t.sessionTokens()).toBe(0);
  });

  it("recordUsage moves usedTokens toward the provider's reported count", () => {
    const t = new ContextTracker({ maxContextTokens: 1_000_000, counter: lengthCounter });
    t.setLoop(0, [userMessage(10_000)]);
    expect(t.usedTokens()).toBe(10_000);
    const reported = 15_000;
    let prevGap = Math.abs(t.usedTokens() - reported);
    for (let i = 0; i < 8; i++) {
      t.recordUsage({ promptTokens: reported });
      const gap = Math.abs(t.usedTokens() - reported);
      expect(gap).toBeLessThan(prevGap);
      prevGap = gap;
    }
    expect(t.correction).toBeCloseTo(1.5, 2);
    expect(t.usedTokens()).toBeGreaterThan(14_900);
    // The first report moves halfway (alpha 0.5): 1 → 1.25.
    const fresh = new ContextTracker({ maxContextTokens: 1_000_000, counter: lengthCounter });
    fresh.setLoop(0, [userMessage(10_000)]);
    fresh.recordUsage({ promptTokens: 15_000 });
    expect(fresh.usedTokens()).toBe(12_500);
    // The factor scales loops added later too.
    fresh.addMessages(1, [userMessage(2_000)]);
    expect(fresh.usedTokens()).toBe(15_000);
  });

  it("compares the report with the estimate of what was sent, and clamps outliers", () => {
    const t = new ContextTracker({ maxContextTokens: 1_000_000, counter: lengthCounter });
    t.setLoop(0, [userMessage(10_000)]);
    // The call sent 4000 estimated tokens (e.g. before compaction), reported 2000: ratio 0.5.
    t.recordUsage({ promptTokens: 2_000, estimatedTokens: 4_000 });
    expect(t.correction).toBe(0.75);
    for (let i = 0; i < 30; i++) t.recordUsage({ promptTokens: 1_000_000 });
    expect(t.correction).toBeLessThanOrEqual(kCorrectionBounds[1]);
    expect(t.correction).toBeGreaterThan(1.99);
    for (let i = 0; i < 30; i++) t.recordUsage({ promptTokens: 0 });
    expect(t.correction).toBeGreaterThanOrEqual(kCorrectionBounds[0]);
    expect(t.correction).toBeLessThan(0.51);
    // Nothing estimated: no ratio, factor unchanged.
    const before = t.correction;
    t.recordUsage({ promptTokens: 500, estimatedTokens: 0 });
    expect(t.correction).toBe(before);
  });

  it("shouldCompact flips at seed 002's threshold: max 100000 and defaults fire above 85000 used", () => {
    const t = new ContextTracker({ maxContextTokens: 100_000, counter: lengthCounter });
    t.setLoop(0, [userMessage(85_000)]);
    expect(t.usedTokens()).toBe(85_000);
    expect(t.headroom()).toBe(5_000);
    expect(t.shouldCompact()).toBe(false);
    t.addMessages(0, [userMessage(8)]);
    expect(t.usedTokens()).toBe(85_008);
    expect(t.shouldCompact()).toBe(true);
    // The correction counts: the same estimate with the provider reporting less is under the threshold.
    t.recordUsage({ promptTokens: 68_006 });
    expect(t.usedTokens()).toBeLessThan(85_000);
    expect(t.shouldCompact()).toBe(false);
    // Config moves the threshold.
    const eager = new ContextTracker({ maxContextTokens: 100_000, counter: lengthCounter, config: { compactAtPct: 0.5 } });
    eager.setLoop(0, [userMessage(45_001)]);
    expect(eager.shouldCompact()).toBe(true);
    eager.setLoop(0, [userMessage(45_000)]);
    expect(eager.shouldCompact()).toBe(false);
  });

  it("validates its inputs, naming the field", () => {
    expect(thrown(() => new ContextTracker({ maxContextTokens: -1 }), "E_BAD_INPUT").path).toBe("maxContextTokens");
    expect(thrown(() => new ContextTracker({ maxContextTokens: Number.NaN }), "E_BAD_INPUT").path).toBe("maxContextTokens");
    expect(thrown(() => new ContextTracker({ maxContextTokens: 0 }), "E_BAD_INPUT").path).toBe("maxContextTokens");
    expect(thrown(() => new ContextTracker({ maxContextTokens: 1000, config: { compactAtPct: 2 } }), "E_BAD_INPUT").path).toBe("config.compactAtPct");
    expect(thrown(() => new ContextTracker({ maxContextTokens: 1000, config: { bogus: 1 } as object }), "E_BAD_INPUT").path).toBe("config.bogus");
    const t = new ContextTracker({ maxContextTokens: 1000 });
    expect(thrown(() => t.recordUsage({ promptTokens: -5 }), "E_BAD_INPUT").path).toBe("promptTokens");
    expect(thrown(() => t.recordUsage({ promptTokens: Infinity }), "E_BAD_INPUT").path).toBe("promptTokens");
    expect(thrown(() => t.recordUsage({ promptTokens: 5, estimatedTokens: -1 }), "E_BAD_INPUT").path).toBe("estimatedTokens");
    expect(thrown(() => t.setLoop(1.5, []), "E_BAD_INPUT").path).toBe("loopId");
    expect(thrown(() => t.setLoop(1, [null as unknown as Message]), "E_BAD_INPUT").path).toBe("messages[0]");
  });
});
