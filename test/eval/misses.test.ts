// `--misses`: a term the compacted prompt lacks is traced to the message it came from, the stage
// that lost it, and whether a ref or the ledger still carries it; on a hand-built run whose only
// compaction is a tool output shrunk (stage 2), and on a generated run whose early steps the
// step summary takes (stage 3); then the report's shape through evaluate.
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { ctxfoldContender, evaluate, missKind, MissTally, recordMisses, type EvalRun } from "../../src/eval/index.js";
import { nextStepEvidence } from "../../src/eval/evidence.js";
import { generateRun } from "../../src/gen/run.js";
import { marked } from "../../src/model/marks.js";
import type { Message } from "../../src/model/schema.js";

const sys: OpenAIChatMessage = { role: "system", content: "You are a careful coding agent." };
const task: OpenAIChatMessage = { role: "user", content: "Fix the failing test in utils.py." };
const call = (id: string, text: string, command: string): OpenAIChatMessage => ({
  role: "assistant",
  content: text,
  tool_calls: [{ id, type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } }],
});
const log = (word: string, lines: number) => Array.from({ length: lines }, (_, i) => `${word} line ${i} of the log`).join("\n");

/** The misses of one ctxfold call at `budget` on the prompt before `run`'s last message, diagnosed. */
async function diagnose(run: readonly OpenAIChatMessage[], budget: number) {
  const input = run.slice(0, -1);
  const evidence = nextStepEvidence(input, run.at(-1));
  const c = await ctxfoldContender();
  c.startRun?.();
  const out = await c.compact(input.slice(), budget);
  const t = new MissTally();
  recordMisses(t, "hand", input, evidence, out);
  return { out, evidence, report: t.report(budget, c.name) };
}

describe("missed evidence", () => {
  it("a failure line lost when its tool output is shrunk: tool_outputs, tool output, recoverable from the output's ref", async () => {
    const run: OpenAIChatMessage[] = [
      sys,
      task,
      call("c1", "Running the tests.", "pytest -q"),
      { role: "tool", tool_call_id: "c1", content: `${log("alpha", 400)}\nFAILED test_quux_marker_zeta - AssertionError\n${log("beta", 400)}` },
      call("c2", "Looking at the source.", "cat utils.py"),
      { role: "tool", tool_call_id: "c2", content: "x = 1\n" },
      { role: "assistant", content: "The failure test_quux_marker_zeta comes from utils.py." },
    ];
    const { out, evidence, report } = await diagnose(run, 2000);
    expect(evidence).toContain("test_quux_marker_zeta");
    // The known stage: only tool_outputs compacted.
    expect(out.stages?.filter((s) => s.compacted > 0).map((s) => s.name)).toEqual(["tool_outputs"]);
    expect(report.rows).toEqual([
      {
        stage: "tool_outputs",
        kind: "tool output",
        count: 1,
        share: 1,
        recoverable: 1,
        ledger: 0,
        examples: [{ term: "test_quux_marker_zeta", runId: "hand", point: 6, message: 3 }],
      },
    ]);
    expect(report).toMatchObject({ budget: 2000, contender: "ctxfold", terms: evidence.length, missed: 1 });
  });

  it("a term of an early assistant text of a generated run, gone into the step summary: historical_text, assistant text, recoverable", async () => {
    const messages = renderMessages(generateRun({ seed: 5, steps: 24 }).messages, "openai-chat") as OpenAIChatMessage[];
    const first = messages.findIndex((m) => m.role === "assistant");
    messages[first] = { ...messages[first], content: "First I open the helper_quux_zeta module." };
    const run = [...messages, { role: "assistant", content: "Back to helper_quux_zeta now." } as OpenAIChatMessage];
    const { out, report } = await diagnose(run, 2000);
    expect(out.stages?.find((s) => s.name === "historical_text")?.compacted).toBeGreaterThan(0);
    const row = report.rows.find((r) => r.examples.some((e) => e.term === "helper_quux_zeta"));
    expect(row).toMatchObject({ stage: "historical_text", kind: "assistant text" });
    expect(row!.examples.find((e) => e.term === "helper_quux_zeta")).toEqual({
      term: "helper_quux_zeta",
      runId: "hand",
      point: messages.length,
      message: first,
    });
    expect(row!.recoverable).toBeGreaterThan(0);
  });

  it("a merge that took in a step summary: the summary's messages count for historical_text, the merge's own for merge_oldest", () => {
    const stored: Record<string, string> = {
      "s/history_top.json": JSON.stringify({ ctxfold: "messages", refs: ["s/message_m2.json", "s/message_m3.json"] }),
      "s/history_steps.json": JSON.stringify({ ctxfold: "messages", refs: ["s/message_m1.json"] }),
      "s/message_m1.json": JSON.stringify({ id: "m1", role: "tool", parts: [{ type: "tool-result", output: "found alpha_zeta_one" }] }),
      "s/message_m2.json": JSON.stringify({
        id: "m2",
        role: "user",
        parts: [{ type: "text", text: "Previous actions (summarized):\n  (removed messages: s/history_steps.json)" }],
      }),
      "s/message_m3.json": JSON.stringify({ id: "m3", role: "assistant", parts: [{ type: "text", text: "then beta_zeta_two" }] }),
    };
    const resolve = (ref: string) =>
      stored[ref] ??
      (() => {
        throw new Error(`no ${ref}`);
      })();
    const merge: Message = {
      id: "ctxfold-merge-1",
      role: "user",
      parts: [marked({ type: "text", text: "[Earlier context, merged]" }, { kind: "merge", ref: "s/history_top.json", failed: [] })],
      meta: {},
    };
    const input: OpenAIChatMessage[] = [
      task,
      { role: "tool", tool_call_id: "c1", content: "found alpha_zeta_one" },
      { role: "user", content: "go on" },
      { role: "assistant", content: "then beta_zeta_two" },
    ];
    const out = {
      messages: [task, { role: "user", content: "[Earlier context, merged]" }] as OpenAIChatMessage[],
      canonical: [merge],
      refs: ["s/history_top.json", "s/message_m1.json"],
      resolve,
    };
    const t = new MissTally();
    recordMisses(t, "fake", input, ["alpha_zeta_one", "beta_zeta_two"], out);
    expect(t.report(1000, "ctxfold").rows.map((r) => [r.stage, r.kind, r.count, r.recoverable])).toEqual([
      ["historical_text", "tool output", 1, 1],
      ["merge_oldest", "assistant text", 1, 0],
    ]);
  });

  it("kinds: tool output, tool arguments (not in the text), assistant text, user text, system", () => {
    const a = call("c1", "Reading notes.", "cat notes_zeta.md");
    expect(missKind({ role: "tool", tool_call_id: "c1", content: "notes_zeta.md" }, "notes_zeta.md")).toBe("tool output");
    expect(missKind(a, "notes_zeta.md")).toBe("tool arguments");
    expect(missKind({ ...a, content: "Reading notes_zeta.md." }, "notes_zeta.md")).toBe("assistant text");
    expect(missKind({ role: "user", content: "see notes_zeta.md" }, "notes_zeta.md")).toBe("user text");
    expect(missKind({ role: "developer", content: "see notes_zeta.md" }, "notes_zeta.md")).toBe("system");
  });

  it("evaluate reports misses per budget only when asked; the rest of the report is the same", async () => {
    const runs: EvalRun[] = [3, 4].map((seed) => ({
      id: `gen-${seed}`,
      messages: renderMessages(generateRun({ seed, steps: 30 }).messages, "openai-chat") as OpenAIChatMessage[],
    }));
    const options = { input: "generated", budgets: [3000, 8000], points: 8, trace: 0 };
    const plain = await evaluate(runs, [], options);
    const diagnosed = await evaluate(runs, [], { ...options, misses: true });
    expect(plain).not.toHaveProperty("misses");
    expect(diagnosed.misses?.map((m) => [m.budget, m.contender])).toEqual([
      [3000, "ctxfold"],
      [8000, "ctxfold"],
    ]);
    for (const [i, m] of diagnosed.misses!.entries()) {
      const e = diagnosed.budgets[i].rows[0].metrics.evidence;
      expect([m.terms, m.missed]).toEqual([e.terms, e.terms - e.kept]);
      expect(m.rows.reduce((n, r) => n + r.count, 0)).toBe(m.missed);
      for (const r of m.rows) expect(r.examples.length).toBeLessThanOrEqual(3);
    }
    // Timings aside (latency and throughput, pooled and per source), the reports are the same.
    const timeless = (budgets: typeof plain.budgets) => budgets.map((b) => b.rows.map((x) => ({ ...x.metrics, latencyMs: 0, throughput: 0 })));
    const strip = (r: typeof plain) =>
      JSON.stringify({
        ...r,
        date: "",
        budgets: timeless(r.budgets),
        sources: { ...r.sources, groups: r.sources.groups.map((g) => ({ ...g, budgets: timeless(g.budgets) })) },
      });
    const { misses: _, ...rest } = diagnosed;
    expect(strip(rest)).toBe(strip(plain));
  }, 120_000);
});
