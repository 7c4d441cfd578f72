import { getEncoding } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import { TokenCounter } from "../../src/tokens/token-counter.js";

// This file runs in a thread of its own: nothing counted exactly before it, so the rank table is
// built here, by the warm-up.
const kTexts = ["hello world", 'const x = await fetch("/api/v1/items?id=" + id);', "naïve café — 東京 🚀", " ".repeat(40) + "indented"];

describe("TokenCounter.warmup", () => {
  it("builds the exact counter a slice per turn of the event loop, and the counts are js-tiktoken's", async () => {
    const counter = new TokenCounter({ encoding: "o200k_base" });
    let turns = 0;
    let warm = false;
    const ticking = (async () => {
      while (!warm) {
        await new Promise<void>((r) => setImmediate(r));
        turns++;
      }
    })();
    await counter.warmup();
    warm = true;
    await ticking;
    // o200k_base's ranks are ~200k lines, 8,192 a slice: the loop turned between slices.
    expect(turns).toBeGreaterThanOrEqual(20);
    const reference = getEncoding("o200k_base");
    for (const t of kTexts) expect(counter.exact(t), t).toBe(reference.encode(t, [], []).length);
    await expect(counter.warmup()).resolves.toBeUndefined();
  });

  it("an exact count made while a warm-up runs finishes the table, and the warm-up resolves", async () => {
    const counter = new TokenCounter({ encoding: "cl100k_base" });
    const warming = counter.warmup();
    await new Promise<void>((r) => setImmediate(r));
    await new Promise<void>((r) => setImmediate(r));
    const reference = getEncoding("cl100k_base");
    for (const t of kTexts) expect(counter.exact(t), t).toBe(reference.encode(t, [], []).length);
    await expect(warming).resolves.toBeUndefined();
  });
});
