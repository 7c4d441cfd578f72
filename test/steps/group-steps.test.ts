import { describe, expect, it } from "vitest";
import { getCore } from "../../src/core/core-instance.js";
import { groupSteps, kToolCategories, type ToolCategory } from "../../src/steps/group-steps.js";
import { groupCategoriesReference } from "../../src/steps/group-categories.reference.js";
import { CtxfoldError } from "../../src/errors.js";
import { createRng } from "../helpers.js";

const steps = (spec: string) =>
  spec.split(" ").map((t) => ({
    category: ({ f: "file", s: "shell", q: "search", w: "web", o: "other" } as Record<string, ToolCategory>)[t[0]],
    success: !t.endsWith("!"),
  }));

describe("groupSteps (the step compactor's grouping)", () => {
  it("groups consecutive same-category steps and counts failures", () => {
    const { runs, alternating } = groupSteps(steps("f f f s! s q f"));
    expect(alternating).toBe(false);
    expect(runs).toEqual([
      { start: 0, count: 3, failures: 0, category: "file" },
      { start: 3, count: 2, failures: 1, category: "shell" },
      { start: 5, count: 1, failures: 0, category: "search" },
      { start: 6, count: 1, failures: 0, category: "file" },
    ]);
  });

  it("seed test: 3 file ops grouped, then the shell step (recent window handled by the compactor)", () => {
    const { runs } = groupSteps(steps("f f f s"));
    expect(runs.map((r) => [r.category, r.count])).toEqual([
      ["file", 3],
      ["shell", 1],
    ]);
  });

  it("reports alternating sequences and keeps each step on its own", () => {
    const { runs, alternating } = groupSteps(steps("f q f q f"));
    expect(alternating).toBe(true);
    expect(runs.every((r) => r.count === 1)).toBe(true);
  });

  it("group_similar off keeps every step on its own (Debugging preset)", () => {
    const { runs } = groupSteps(steps("f f f! s"), { groupSimilar: false });
    expect(runs.map((r) => [r.count, r.failures])).toEqual([
      [1, 0],
      [1, 0],
      [1, 1],
      [1, 0],
    ]);
  });

  it("no steps, no runs; one step is not alternating", () => {
    expect(groupSteps([])).toEqual({ runs: [], alternating: false });
    expect(groupSteps(steps("w")).alternating).toBe(false);
  });

  it("rejects an unknown category naming the step", () => {
    let err: unknown;
    try {
      groupSteps([
        { category: "file", success: true },
        { category: "database" as ToolCategory, success: true },
      ]);
    } catch (e) {
      err = e;
    }
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_BAD_CATEGORY");
    expect((err as Error).message).toMatch(/^steps\[1\]\.category: unknown tool category "database"/);
  });

  it("differential: WASM equals the TypeScript twin on 10,000 seeded inputs", () => {
    const r = createRng(8);
    for (let i = 0; i < 10_000; i++) {
      const n = r.int(i % 500 === 0 ? 3000 : 40);
      const packed = new Uint8Array(n);
      const sticky = r.next();
      let cat = r.int(kToolCategories.length);
      for (let j = 0; j < n; j++) {
        if (r.next() > sticky) cat = r.int(kToolCategories.length);
        packed[j] = cat | (r.next() < 0.15 ? 0x80 : 0);
      }
      const flags = r.int(4);
      const a = getCore().groupCategories(packed, flags);
      const b = groupCategoriesReference(packed, flags);
      if (a.start.join() !== b.start.join() || a.count.join() !== b.count.join() || a.failures.join() !== b.failures.join() || a.status !== b.status) {
        expect.fail(`input ${i} flags ${flags}: ${packed.join(",")}`);
      }
    }
  });
});
