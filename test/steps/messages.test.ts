import { describe, expect, it } from "vitest";
import { kFormats } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import { StepCompactor } from "../../src/steps/compactor.js";
import { markOf } from "../../src/model/marks.js";
import { compactStepMessages, isStepSummaryPart, kStepSummaryKind } from "../../src/steps/messages.js";
import { buildReactPrompt, thoughtStepsFromMessages } from "../../src/steps/react.js";
import { StepReducer } from "../../src/steps/reducer.js";
import { createMemoryStore } from "../../src/store/index.js";
import { getMessages } from "../../src/store/messages.js";
import { newViolations, validate } from "../../src/validate/index.js";

const reducer = () => new StepReducer({ store: createMemoryStore() });

describe("compactStepMessages on generated runs", () => {
  it("leaves runs at or below the trigger untouched", () => {
    const run = generateRun({ seed: 3, steps: 3, parallel: 0 });
    const r = compactStepMessages(run.messages, { reducer: reducer() });
    expect(r.compacted).toBe(false);
    expect(r.messages).toEqual(run.messages);
  });

  it("replaces older steps by one summary, keeps recent steps verbatim and every format valid", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const run = generateRun({ seed, steps: 8 + (seed % 30) });
      const red = reducer();
      const r = compactStepMessages(run.messages, { reducer: red });
      expect(r.compacted).toBe(true);
      for (const format of kFormats) {
        expect(newViolations(validate(run.messages, format), validate(r.messages, format)), `gen-${seed} ${format}`).toEqual([]);
      }
      const summaries = r.messages.filter((m) => m.parts.some((p) => p.type === "text" && p.text.startsWith("Previous actions (summarized):")));
      expect(summaries).toHaveLength(1);
      // Recent steps: their call and result parts are the originals, untouched.
      const parts = new Set(r.messages.flatMap((m) => m.parts));
      const original = new Map(
        run.messages
          .flatMap((m) => m.parts)
          .filter((p) => p.type === "tool-call")
          .map((p) => [(p as { id: string }).id, p]),
      );
      for (const s of r.history.recentSteps) expect(parts.has(original.get(s.callId!)!)).toBe(true);
      // Compacted steps are gone, and stored whole.
      const callIds = new Set(
        r.messages
          .flatMap((m) => m.parts)
          .filter((p) => p.type === "tool-call")
          .map((p) => (p as { id: string }).id),
      );
      const gone = r.steps.filter((s) => !r.history.recentSteps.includes(s));
      for (const s of gone) expect(callIds.has(s.callId!)).toBe(false);
      const removed = getMessages(red.store, r.removedRef!);
      for (const s of gone) expect(removed.some((m) => m.parts.some((p) => p.type === "tool-call" && p.id === s.callId))).toBe(true);
      // The system prompt and task are kept verbatim, first.
      expect(r.messages[0]).toEqual(run.messages[0]);
    }
  });

  it("names the removed-messages ref in the summary and marks it in meta when not merged", () => {
    const run = generateRun({ seed: 11, steps: 12, steering: 0 });
    const r = compactStepMessages(run.messages, { reducer: reducer() });
    const text = r.messages.flatMap((m) => m.parts).find((p) => p.type === "text" && p.text.startsWith("Previous actions"));
    expect(text && text.type === "text" && text.text).toContain(`(removed messages: ${r.removedRef})`);
    const marked = r.messages.find((m) => (m.meta.ctxfold as { kind?: string } | undefined)?.kind === kStepSummaryKind);
    if (marked) expect((marked.meta.ctxfold as { steps: string[] }).steps.length).toBe(r.steps.length - r.history.recentSteps.length);
  });

  it("marks the summary part itself (ref, failed calls), through message merges, and nothing else that reads like one", () => {
    const run = generateRun({ seed: 11, steps: 12, steering: 0, failures: 0.4 });
    const r = compactStepMessages(run.messages, { reducer: reducer() });
    const summaries = r.messages.flatMap((m) => m.parts).filter(isStepSummaryPart);
    expect(summaries).toHaveLength(1);
    const mark = markOf(summaries[0])!;
    expect(mark).toMatchObject({ kind: kStepSummaryKind, ref: r.removedRef });
    const failed = r.steps.filter((st) => !st.success && !r.history.recentSteps.includes(st) && st.callId).map((st) => st.callId);
    expect(failed.length).toBeGreaterThan(0);
    expect(mark.failed).toEqual(failed);
    // The mark is not in the part's JSON: outputs and stored messages are the bytes they were.
    expect(JSON.stringify(summaries[0])).not.toContain("step-summary");
    // The same text, not written by the step compactor (e.g. parsed back from a provider format), is plain text.
    expect(isStepSummaryPart(JSON.parse(JSON.stringify(summaries[0])))).toBe(false);
    expect(isStepSummaryPart({ ...summaries[0], text: "changed" } as never)).toBe(true);
  });

  it("reduceRecent swaps offloaded recent outputs for their observation and ref", () => {
    const run = generateRun({ seed: 5, steps: 20, failures: 0 });
    const red = reducer();
    const r = compactStepMessages(run.messages, { reducer: red, reduceRecent: true, compactor: { keepRecent: 8 } });
    const offloaded = r.history.recentSteps.filter((s) => s.outcomeRef);
    expect(offloaded.length).toBeGreaterThan(0);
    for (const s of offloaded) {
      const result = r.messages.flatMap((m) => m.parts).find((p) => p.type === "tool-result" && p.callId === s.callId);
      expect(result && result.type === "tool-result" && result.content).toEqual([{ type: "text", text: `${s.observation}\n(full output: ${s.outcomeRef})` }]);
    }
  });

  it("a compactor config under the deprecated recentWindow compacts as keepRecent does", () => {
    const run = generateRun({ seed: 5, steps: 20, failures: 0.2 });
    const compact = (compactor: object) => compactStepMessages(run.messages, { reducer: reducer(), force: true, compactor });
    expect(compact({ recentWindow: 3 })).toEqual(compact({ keepRecent: 3 }));
  });

  it("force compacts below the trigger", () => {
    const run = generateRun({ seed: 9, steps: 4, parallel: 0 });
    expect(compactStepMessages(run.messages, { reducer: reducer(), force: true, compactor: { keepRecent: 1 } }).compacted).toBe(true);
  });
});

describe("buildReactPrompt (seed 000)", () => {
  const run = generateRun({ seed: 21, steps: 12, parallel: 0 });
  const steps = thoughtStepsFromMessages(run.messages, reducer());

  it("derives one ThoughtStep per call with its reasoning, action and observation", () => {
    expect(steps.map((s) => s.step)).toEqual(steps.map((_, i) => i + 1));
    expect(steps.every((s) => s.reducedStep !== undefined)).toBe(true);
    expect(steps[0].toolCall.arguments.length).toBeGreaterThan(0);
  });

  it("compacts above 5 steps in the seed's layout", () => {
    const compactor = new StepCompactor({ keepRecent: 3 });
    const prompt = buildReactPrompt({ systemPrompt: "SYS", goal: "GOAL", availableTools: "TOOLS", steps, compactor });
    expect(prompt.startsWith("SYS\nGOAL\nTOOLS\n\nPrevious actions (summarized):\n  [")).toBe(true);
    expect(prompt).toContain("\nRecent steps (detailed):\n");
    for (const s of steps.slice(-3)) {
      expect(prompt).toContain(`\nThought ${s.step}: ${s.reasoning}\nAction: ${s.toolCall.name}(${s.toolCall.arguments})\n`);
      expect(prompt).toContain(s.reducedStep!.outcomeRef ? `Observation: (See ${s.reducedStep!.outcomeRef})` : `Observation: ${s.observation.output}`);
    }
    expect(prompt).not.toContain(`Thought ${steps[0].step}:`);
  });

  it("writes every step in full without compaction or at 5 steps", () => {
    const full = buildReactPrompt({ systemPrompt: "S", goal: "G", availableTools: "T", steps, useCompaction: false, compactor: new StepCompactor() });
    for (const s of steps)
      expect(full).toContain(
        `\nStep ${s.step}:\nThought: ${s.reasoning}\nAction: ${s.toolCall.name}(${s.toolCall.arguments})\nObservation: ${s.observation.output}`,
      );
    const five = buildReactPrompt({ systemPrompt: "S", goal: "G", availableTools: "T", steps: steps.slice(0, 5), compactor: new StepCompactor() });
    expect(five).not.toContain("Previous actions");
  });
});
