/**
 * The stage rows explain and the eval report print (policy/stage-rows.ts): a stage skipped whole
 * reads "not run: …", one that found nothing "nothing to compact"; the rows of a real compaction
 * chain from the result's tokens before to its tokens after, a "finish" row taking what the steps
 * after the stages changed; the totals a header states are the rows' own.
 */
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import { createCompactor } from "../../src/policy/index.js";
import { notRunReason, stageRow, stageRows, stageTotals, type StageFigures } from "../../src/policy/stage-rows.js";
import type { CompactResult } from "../../src/policy/types.js";
import { createMemoryStore } from "../../src/store/index.js";

const figures = (over: Partial<StageFigures>): StageFigures => ({
  stage: 1,
  name: "tool_args",
  candidates: 0,
  compacted: 0,
  skipped: {},
  tokensBefore: 9000,
  tokensAfter: 9000,
  durationMs: 0.5,
  ...over,
});

/** A compactor result's stages as rows, with the result's own tokens. */
const rowsOf = (r: CompactResult) =>
  stageRows(
    r.stages.map((s) => ({ ...s, candidates: s.candidateCount })),
    r,
  );

describe("stageRow", () => {
  it("says a stage skipped whole was not run, and why, with no candidates or compactions to count", () => {
    expect(stageRow(figures({ skipped: { no_gain: 1 } }))).toEqual({
      label: "1 tool_args",
      candidates: null,
      compacted: null,
      skipped: "not run: stage 3 replaces what it would shorten (no_gain)",
      tokensBefore: 9000,
      tokensAfter: 9000,
      durationMs: 0.5,
    });
    expect(stageRow(figures({ stage: 3, name: "historical_text", skipped: { deadline: 1 } })).skipped).toBe("not run: too near the deadline (deadline)");
  });

  it("keeps the counts of a stage that ran: its skips, or nothing to compact", () => {
    // A no_gain counted after its candidate: the stage ran and found one part not worth it.
    expect(stageRow(figures({ candidates: 1, skipped: { no_gain: 1 } }))).toMatchObject({ candidates: 1, compacted: 0, skipped: "no_gain 1" });
    // A part preserved by policy is counted before any candidate: the stage ran.
    expect(notRunReason(figures({ skipped: { policy_preserve: 1 } }))).toBeUndefined();
    expect(stageRow(figures({ skipped: { policy_preserve: 1 } }))).toMatchObject({ candidates: 0, skipped: "policy_preserve 1" });
    expect(stageRow(figures({}))).toMatchObject({ candidates: 0, compacted: 0, skipped: "nothing to compact" });
    expect(stageRow(figures({ skipped: undefined }))).toMatchObject({ skipped: "nothing to compact" });
    expect(stageRow(figures({ candidates: 12, compacted: 12, tokensAfter: 3000 }))).toMatchObject({ candidates: 12, compacted: 12, skipped: "–" });
    expect(stageRow(figures({ stage: undefined, name: "steps" })).label).toBe("steps");
  });
});

describe("stageRows and stageTotals", () => {
  const stages = [figures({ skipped: { no_gain: 1 } }), figures({ stage: 3, name: "historical_text", candidates: 9, compacted: 9, tokensAfter: 7400 })];

  it("add a finish row where the result ends elsewhere than the last stage, an ahead row where it starts elsewhere", () => {
    expect(stageRows(stages, { tokensBefore: 9000, tokensAfter: 7400 }).map((r) => r.label)).toEqual(["1 tool_args", "3 historical_text"]);
    const rows = stageRows(stages, { tokensBefore: 9400, tokensAfter: 7900 });
    expect(rows.map((r) => [r.label, r.tokensBefore, r.tokensAfter])).toEqual([
      ["ahead", 9400, 9000],
      ["1 tool_args", 9000, 9000],
      ["3 historical_text", 9000, 7400],
      ["finish", 7400, 7900],
    ]);
    expect(rows.at(-1)).toMatchObject({
      candidates: null,
      compacted: null,
      durationMs: null,
      skipped: "after the stages: exact recount, recall hint, last merges",
    });
    expect(stageTotals(rows, { tokensBefore: 1, tokensAfter: 1 })).toEqual({ tokensBefore: 9400, tokensAfter: 7900, durationMs: 1 });
    expect(stageRows([], { tokensBefore: 9400, tokensAfter: 7900 })).toEqual([]);
    expect(stageTotals([], { tokensBefore: 9400, tokensAfter: 7900 })).toEqual({ tokensBefore: 9400, tokensAfter: 7900, durationMs: 0 });
  });

  it("chain a real compaction's rows from its tokens before to its tokens after, the finish row where the exact recount moved them", async () => {
    // Seed 11's 30 steps at 3,000: the stages end near the budget, where the exact recount decides.
    const messages = renderMessages(generateRun({ seed: 11, steps: 30 }).messages, "openai-chat");
    const r = await createCompactor({ store: createMemoryStore() }).compact(messages, { budget: 3000, format: "openai-chat" });
    expect(r.stages.at(-1)!.tokensAfter).not.toBe(r.tokensAfter);
    const rows = rowsOf(r);
    expect(rows.at(-1)!.label).toBe("finish");
    expect(rows[0].tokensBefore).toBe(r.tokensBefore);
    expect(rows.at(-1)!.tokensAfter).toBe(r.tokensAfter);
    for (let i = 1; i < rows.length; i++) expect(rows[i].tokensBefore).toBe(rows[i - 1].tokensAfter);
    expect(stageTotals(rows, r)).toMatchObject({ tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter });
  });

  it("reads a real whole-stage skip near the deadline as not run", async () => {
    const messages = renderMessages(generateRun({ seed: 3, steps: 30 }).messages, "openai-chat");
    const r = await createCompactor({ store: createMemoryStore() }).compact(messages, { budget: 3000, format: "openai-chat", deadline: { remainingMs: 0 } });
    const skipped = r.stages.filter((s) => s.skipped.deadline);
    expect(skipped.length).toBeGreaterThan(0);
    for (const s of skipped) expect(stageRow({ ...s, candidates: s.candidateCount }).skipped).toBe("not run: too near the deadline (deadline)");
  });
});
