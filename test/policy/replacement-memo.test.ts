/**
 * The compactor's memo of replacements keeps the latest entries within its bounds of entries and
 * characters, forgetting the oldest first, and counts what it holds exactly.
 */
import { describe, expect, it } from "vitest";
import { ReplacementMemo } from "../../src/policy/replacement-memo.js";

describe("ReplacementMemo", () => {
  it("forgets the oldest entries once its characters pass 8M, keeping the latest", () => {
    const memo = new ReplacementMemo();
    const text = "x".repeat(1 << 20); // 1M characters a replacement
    for (let i = 0; i < 12; i++) memo.set(`k${i}`, { text, ref: `r${i}` });
    expect(memo.chars).toBeLessThanOrEqual(8 << 20);
    expect(memo.get("k0")).toBeUndefined();
    expect(memo.get("k11")).toEqual({ text, ref: "r11" });
    const kept = Array.from({ length: 12 }, (_, i) => memo.get(`k${i}`) !== undefined);
    // What is kept is a run of the latest.
    expect(kept.indexOf(true)).toBe(12 - memo.size);
    const held = Array.from({ length: 12 }, (_, i) => i)
      .filter((i) => kept[i])
      .reduce((n, i) => n + `k${i}`.length + text.length + `r${i}`.length, 0);
    expect(memo.chars).toBe(held);
  });

  it("keeps one entry larger than its bound, and counts a key set again once", () => {
    const memo = new ReplacementMemo();
    const huge = "y".repeat((8 << 20) + 10);
    memo.set("a", { text: huge, ref: "r" });
    expect(memo.size).toBe(1);
    memo.set("b", { text: "small", ref: "r2" });
    expect(memo.get("a")).toBeUndefined();
    memo.set("b", { text: "smaller!", ref: "r2" });
    expect(memo.size).toBe(1);
    expect(memo.chars).toBe(1 + "smaller!".length + 2);
  });

  it("holds at most 50,000 entries", () => {
    const memo = new ReplacementMemo();
    for (let i = 0; i < 50_010; i++) memo.set(`k${i}`, { text: "t", ref: "r" });
    expect(memo.size).toBe(50_000);
    expect(memo.get("k9")).toBeUndefined();
    expect(memo.get("k10")).toBeDefined();
  });
});
