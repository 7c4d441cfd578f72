import { describe, expect, it } from "vitest";
import { inputTokensOf, kUsageFeedback, UsageCorrection } from "../../src/tokens/usage.js";

describe("UsageCorrection (the integrations' feedback settings)", () => {
  it("has no ratio until the first report, which it takes as observed (not a moving average from 1)", () => {
    const c = new UsageCorrection(kUsageFeedback);
    expect(c.ratio).toBeUndefined();
    expect(c.observe(1300, 1000)).toEqual({ status: "applied", observed: 1.3, before: undefined, after: 1.3 });
    expect(c.ratio).toBe(1.3);
  });

  it("rises to a higher observation at once and decays slowly toward a lower one", () => {
    const c = new UsageCorrection(kUsageFeedback);
    c.observe(1200, 1000);
    expect(c.observe(1500, 1000).after).toBe(1.5);
    // One low report moves it a tenth of the way.
    const down = c.observe(1000, 1000);
    expect(down).toMatchObject({ status: "applied", observed: 1, before: 1.5 });
    expect(down.after).toBeCloseTo(1.45, 12);
    // A steady lower ratio is reached only over many reports.
    for (let i = 0; i < 10; i++) c.observe(1000, 1000);
    expect(c.ratio!).toBeGreaterThan(1.1);
    for (let i = 0; i < 100; i++) c.observe(1000, 1000);
    expect(c.ratio!).toBeCloseTo(1, 3);
  });

  it("clamps an absurd observation to its bounds and says so", () => {
    const c = new UsageCorrection(kUsageFeedback);
    expect(c.observe(1e12, 1000)).toEqual({ status: "clamped", observed: 1e9, before: undefined, after: 4 });
    const low = new UsageCorrection(kUsageFeedback);
    expect(low.observe(1, 1_000_000)).toEqual({ status: "clamped", observed: 1e-6, before: undefined, after: 0.25 });
  });

  it("a caller's floor raises the lower bound for one report, and the step says the floor held", () => {
    const c = new UsageCorrection(kUsageFeedback);
    expect(c.observe(1, 1_000_000, 0.9)).toEqual({ status: "clamped", limit: "floor", observed: 1e-6, before: undefined, after: 0.9 });
    // Above the floor a report is taken as it is; a floor below the bounds changes nothing.
    expect(c.observe(1_100_000, 1_000_000, 0.9)).toMatchObject({ status: "applied", after: 1.1 });
    expect(new UsageCorrection(kUsageFeedback).observe(1, 1_000_000, 0.1)).toEqual({ status: "clamped", observed: 1e-6, before: undefined, after: 0.25 });
  });

  it("ignores what cannot be a report, with a reason, and keeps its ratio", () => {
    const c = new UsageCorrection(kUsageFeedback);
    c.observe(1100, 1000);
    const cases: [unknown, unknown, string][] = [
      [undefined, 1000, "no_usage"],
      [null, 1000, "no_usage"],
      ["1200", 1000, "not_a_number"],
      [{}, 1000, "not_a_number"],
      [Number.NaN, 1000, "not_finite"],
      [Infinity, 1000, "not_finite"],
      [-5, 1000, "negative"],
      [0, 1000, "zero"],
      [1200, undefined, "no_estimate"],
      [1200, 0, "no_estimate"],
      [1200, Number.NaN, "no_estimate"],
    ];
    for (const [reported, estimated, reason] of cases) {
      expect(c.observe(reported, estimated), `${String(reported)} / ${String(estimated)}`).toEqual({ status: "ignored", reason, before: 1.1, after: 1.1 });
    }
    expect(c.ratio).toBe(1.1);
  });

  it("as the ContextTracker's moving average: from 1, half way either way, within [0.5, 2], a 0 report counted", () => {
    const c = new UsageCorrection({ initial: 1, bounds: [0.5, 2], rise: 0.5, fall: 0.5, zeroReports: "counted" });
    expect(c.observe(2000, 1000).after).toBe(1.5);
    expect(c.observe(500, 1000).after).toBe(1);
    expect(c.observe(0, 1000)).toEqual({ status: "clamped", observed: 0, before: 1, after: 0.75 });
  });

  it("rejects settings that cannot work", () => {
    expect(() => new UsageCorrection({ bounds: [2, 1], rise: 1, fall: 0.1 })).toThrow(RangeError);
    expect(() => new UsageCorrection({ bounds: [0.5, 2], rise: 0, fall: 0.1 })).toThrow(RangeError);
    expect(() => new UsageCorrection({ initial: 3, bounds: [0.5, 2], rise: 1, fall: 1 })).toThrow(RangeError);
  });
});

describe("inputTokensOf (every provider's usage shape)", () => {
  it("reads the input tokens, cached ones included", () => {
    expect(inputTokensOf(1234)).toBe(1234);
    // OpenAI Chat Completions (cached tokens are part of prompt_tokens).
    expect(inputTokensOf({ prompt_tokens: 900, completion_tokens: 20, total_tokens: 920, prompt_tokens_details: { cached_tokens: 800 } })).toBe(900);
    // OpenAI Responses: input_tokens includes the cached ones (no Anthropic cache fields to add).
    expect(inputTokensOf({ input_tokens: 900, input_tokens_details: { cached_tokens: 800 }, output_tokens: 20 })).toBe(900);
    // Anthropic: input_tokens excludes cache writes and reads.
    expect(inputTokensOf({ input_tokens: 12, cache_creation_input_tokens: 300, cache_read_input_tokens: 5000, output_tokens: 20 })).toBe(5312);
    expect(inputTokensOf({ input_tokens: 12, cache_creation_input_tokens: null, cache_read_input_tokens: 40 })).toBe(52);
    // AI SDK: LanguageModelUsage / V2 (a number), V3 ({ total }).
    expect(inputTokensOf({ inputTokens: 700, outputTokens: 3, inputTokenDetails: { cacheReadTokens: 600 } })).toBe(700);
    expect(inputTokensOf({ inputTokens: { total: 700, noCache: 100, cacheRead: 600, cacheWrite: 0 } })).toBe(700);
    // LangChain's usage_metadata (total), whole messages and responses, Gemini.
    expect(inputTokensOf({ usage_metadata: { input_tokens: 321, output_tokens: 5, total_tokens: 326, input_token_details: { cache_read: 300 } } })).toBe(321);
    expect(inputTokensOf({ id: "chatcmpl-1", choices: [], usage: { prompt_tokens: 77 } })).toBe(77);
    expect(inputTokensOf({ usageMetadata: { promptTokenCount: 55, candidatesTokenCount: 2 } })).toBe(55);
  });

  it("gives back undefined for no usage, and a field that is not a number as it is", () => {
    for (const u of [undefined, null, "900", {}, { outputTokens: 3 }, { inputTokens: undefined }, { inputTokens: { total: undefined } }])
      expect(inputTokensOf(u)).toBeUndefined();
    expect(inputTokensOf({ prompt_tokens: "900" })).toBe("900");
    expect(inputTokensOf({ input_tokens: 10, cache_read_input_tokens: "5" })).toBe("5");
    expect(inputTokensOf({ inputTokens: Number.NaN })).toBeNaN();
  });
});
