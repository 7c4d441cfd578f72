// The tail baseline contender (src/eval/tail-baseline.ts): system / developer messages and the
// task, then the newest whole units that fit, on hand-built prompts whose right output is known,
// then through replayRuns on generated runs (within budget, provider-valid, anchors verbatim).
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { evaluate, type EvalRun } from "../../src/eval/index.js";
import { messageTokens, promptTokens } from "../../src/eval/contenders.js";
import { anchorIndices } from "../../src/eval/metrics.js";
import { messageUnits, tailBaseline, trimTail } from "../../src/eval/tail-baseline.js";
import { replayRuns } from "../../src/eval/replay.js";
import { generateRun } from "../../src/gen/run.js";

type M = OpenAIChatMessage;
const call = (id: string) => ({ id, type: "function" as const, function: { name: "bash", arguments: JSON.stringify({ command: `run ${id}` }) } });
const pad = (label: string, n: number) => `${label}\n${"some output line\n".repeat(n)}`;

const sys: M = { role: "system", content: "You are a coding agent." };
const task: M = { role: "user", content: "Make the tests pass." };
const a1: M = { role: "assistant", content: "Two things at once.", tool_calls: [call("c1"), call("c2")] };
const t1a: M = { role: "tool", tool_call_id: "c1", content: pad("first", 40) };
const t1b: M = { role: "tool", tool_call_id: "c2", content: pad("second", 40) };
const u2: M = { role: "user", content: "Focus on the parser." };
const a2: M = { role: "assistant", content: null, tool_calls: [call("c3")] };
const t3: M = { role: "tool", tool_call_id: "c3", content: pad("third", 60) };
const a3: M = { role: "assistant", content: "The parser reads the header twice." };
const a4: M = { role: "assistant", content: null, tool_calls: [call("c4")] };
const t4: M = { role: "tool", tool_call_id: "c4", content: pad("fourth", 20) };
const prompt = [sys, task, a1, t1a, t1b, u2, a2, t3, a3, a4, t4];

const tokensOf = (ms: M[]) => promptTokens(ms);
const ids = (ms: readonly M[]) => ms.map((m) => prompt.indexOf(m));

describe("trimTail", () => {
  it("splits the rest into units: an assistant message with calls and its results are one", () => {
    expect([...anchorIndices(prompt)]).toEqual([0, 1]);
    expect(messageUnits(prompt, anchorIndices(prompt))).toEqual([[2, 3, 4], [5], [6, 7], [8], [9, 10]]);
  });

  it("passes a prompt that fits through unchanged, the very objects", () => {
    const out = trimTail(prompt, tokensOf(prompt));
    expect(out.infeasible).toBeUndefined();
    expect(out.messages).toHaveLength(prompt.length);
    out.messages.forEach((m, i) => expect(m).toBe(prompt[i]));
  });

  it("keeps the anchors and the newest units that fit, stopping at the first that does not", () => {
    const fromU2 = [sys, task, u2, a2, t3, a3, a4, t4];
    expect(ids(trimTail(prompt, tokensOf(fromU2)).messages)).toEqual([0, 1, 5, 6, 7, 8, 9, 10]);
    // One token less: the steering message no longer fits, and nothing older is tried after it.
    expect(ids(trimTail(prompt, tokensOf(fromU2) - 1).messages)).toEqual([0, 1, 6, 7, 8, 9, 10]);
  });

  it("keeps a call and its results whole or drops them whole", () => {
    // Room for a3 and the last unit, and for a2 alone, but not for a2 with its result.
    const budget = tokensOf([sys, task, a2, a3, a4, t4]);
    expect(budget).toBeLessThan(tokensOf([sys, task, a2, t3, a3, a4, t4]));
    expect(ids(trimTail(prompt, budget).messages)).toEqual([0, 1, 8, 9, 10]);
    // The parallel call's two results come with it or not at all.
    const all = trimTail(prompt, tokensOf(prompt) - 1).messages;
    expect(ids(all)).toEqual([0, 1, 5, 6, 7, 8, 9, 10]);
  });

  it("never opens the tail on a tool result, even one already orphaned in the input", () => {
    const orphan: M = { role: "tool", tool_call_id: "gone", content: pad("orphan", 5) };
    const input = [sys, task, a1, t1a, t1b, orphan, a3, a4, t4];
    const budget = tokensOf([sys, task, orphan, a3, a4, t4]);
    const out = trimTail(input, budget).messages;
    expect(out).toEqual([sys, task, a3, a4, t4]);
  });

  it("keeps every system and developer message and only the first user message as anchors", () => {
    const dev: M = { role: "developer", content: "Prefer small diffs." };
    const late: M = { role: "system", content: "Reminder: run the linter." };
    const input = [sys, dev, task, a1, t1a, t1b, late, u2, a3];
    const out = trimTail(input, tokensOf([sys, dev, task, late, a3])).messages;
    expect(out).toEqual([sys, dev, task, late, a3]);
  });

  it("refuses when the anchors alone are above the budget", () => {
    expect(trimTail(prompt, tokensOf([sys, task]) - 1)).toEqual({ messages: [], infeasible: true });
    expect(trimTail(prompt, tokensOf([sys, task])).messages).toEqual([sys, task]);
  });

  it("is always within the budget, and maximal: the next older unit would not fit", () => {
    const anchors = tokensOf([sys, task]);
    for (let budget = anchors; budget <= tokensOf(prompt); budget += 7) {
      const out = trimTail(prompt, budget).messages;
      expect(promptTokens(out), `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(out.slice(0, 2)).toEqual([sys, task]);
      const tail = ids(out.slice(2));
      const units = messageUnits(prompt, new Set([0, 1]));
      const first = units.findIndex((u) => u[0] === tail[0]);
      if (tail.length === 0) {
        // Not even the newest unit fits.
        expect(anchors + [9, 10].reduce((n, i) => n + messageTokens(prompt[i]), 0)).toBeGreaterThan(budget);
        continue;
      }
      expect(tail).toEqual(units.slice(first).flat());
      if (first > 0) expect(promptTokens(out) + units[first - 1].reduce((n, i) => n + messageTokens(prompt[i]), 0)).toBeGreaterThan(budget);
      expect(tail.at(-1)).toBe(prompt.length - 1);
    }
  });
});

describe("the tail baseline contender", () => {
  const runs: EvalRun[] = [21, 22, 23].map((seed) => ({
    id: `gen-${seed}`,
    messages: renderMessages(generateRun({ seed, steps: 30 }).messages, "openai-chat") as M[],
  }));

  it("on generated runs: within budget, no new provider-rule violation, system and task verbatim", async () => {
    const c = tailBaseline();
    const r = await replayRuns(runs, [c], { budgets: [3000, 8000], points: 16 });
    for (const budget of [3000, 8000]) {
      const m = r.metrics.get(budget)!.get(c)!;
      expect(m.overBudget, `budget ${budget}`).toBeGreaterThan(0);
      expect(m).toMatchObject({ withinBudget: 1, errors: 0, newViolationPrompts: 0, violationFree: 1, recoverable: null });
      expect(m.criticalVerbatimByKind).toMatchObject({ system: 1, task: 1 });
      expect(m.budgetFill.p95!).toBeLessThanOrEqual(1);
    }
  });

  it("is always in the eval's report, after the ctxfold configs", async () => {
    const report = await evaluate(runs.slice(0, 1), [], { input: "generated", budgets: [8000], points: 4, trace: 0 });
    expect(report.contenders.map((c) => c.name)).toEqual(["ctxfold", "tail baseline"]);
    expect(report.budgets[0].rows[1].metrics.withinBudget).toBe(1);
  });
});
