/**
 * Step reduction and compaction over the corpus (every file of ../shared/corpus): every offloaded ref resolves to the
 * identical original, every failed step stays visible in the compacted history, and message-
 * level compaction introduces no provider-rule violation.
 */
import { describe, expect, it } from "vitest";
import { kFormats, openaiChatAdapter } from "../../src/adapters/index.js";
import type { Message } from "../../src/model/schema.js";
import { createMemoryStore } from "../../src/store/index.js";
import { getMessages } from "../../src/store/messages.js";
import { StepCompactor, formatForPrompt } from "../../src/steps/compactor.js";
import { compactStepMessages } from "../../src/steps/messages.js";
import { StepReducer, extractSteps, resultPayload } from "../../src/steps/reducer.js";
import { newViolations, validate } from "../../src/validate/index.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { hasCorpus, kCorpusPath, kNoCorpusReason } from "../helpers.js";

describe.skipIf(!hasCorpus)(`step reduction on the corpus${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  const runs: { id: string; messages: Message[] }[] = hasCorpus
    ? corpusLines()
        .map((l) => JSON.parse(l) as CorpusRun)
        .map((r) => ({ id: r.id, messages: openaiChatAdapter.parse(r.messages, { source: r.id }) }))
    : [];

  it("every offloaded ref resolves to the identical original", () => {
    const store = createMemoryStore();
    let offloaded = 0;
    for (const run of runs) {
      const reducer = new StepReducer({ store });
      const { steps } = extractSteps(run.messages);
      for (const s of steps) {
        const r = reducer.reduceStep(s);
        if (!r.outcomeRef) continue;
        offloaded++;
        expect(store.getText(r.outcomeRef), `${run.id} ${r.id}`).toBe(resultPayload(s.result!.content).data);
      }
    }
    expect(offloaded).toBeGreaterThan(1000);
  });

  it("every failed step appears in the compacted history; failures match the recorded counts", () => {
    const devLines = corpusLines({ files: [kCorpusPath] });
    const devIds = new Set(devLines.map((l) => (JSON.parse(l) as CorpusRun).id));
    let devFailures = 0;
    let recorded = 0;
    for (const run of runs) {
      const reducer = new StepReducer({ store: createMemoryStore() });
      const steps = reducer.reduceMessages(run.messages);
      const history = new StepCompactor().compact(steps);
      const text = formatForPrompt(history);
      const shown = new Set([...history.recentSteps.map((s) => s.id), ...history.compactSteps.filter((c) => c.failed).flatMap((c) => c.stepIds)]);
      for (const s of steps.filter((x) => !x.success)) {
        if (devIds.has(run.id)) devFailures++;
        expect(shown.has(s.id), `${run.id} ${s.id} ${s.observation}`).toBe(true);
        expect(text).toContain(`[${s.id}]`);
      }
    }
    for (const line of devLines) {
      const meta = (JSON.parse(line) as { meta?: Record<string, number> }).meta ?? {};
      recorded += meta.tool_errors ?? meta.tool_nonzero_exit ?? 0;
    }
    // The recorded counts come from the sources' own flags; detection from the text finds at least
    // most of them on dev.jsonl.gz. Not on dev2.jsonl.gz: many results Claude Code flagged as
    // errors do not read as failures (over both files 521 found for 766 recorded).
    expect(devFailures).toBeGreaterThan(recorded * 0.9);
  });

  it("message-level compaction keeps tool pairs valid in every format and loses nothing", () => {
    let compacted = 0;
    for (const run of runs) {
      const store = createMemoryStore();
      const r = compactStepMessages(run.messages, { reducer: { store } });
      if (!r.compacted) continue;
      compacted++;
      for (const format of kFormats) {
        expect(newViolations(validate(run.messages, format), validate(r.messages, format)), `${run.id} ${format}`).toEqual([]);
      }
      // Everything removed is stored whole under removedRef.
      const removed = getMessages(store, r.removedRef!);
      const kept = new Set(r.messages.map((m) => m.id));
      // A message that is neither kept nor removed was merged into its neighbour: its parts are there.
      const outParts = new Set(r.messages.flatMap((m) => m.parts));
      for (const m of run.messages) {
        if (kept.has(m.id) || removed.some((x) => x.id === m.id)) continue;
        for (const p of m.parts) expect(outParts.has(p), `${run.id} ${m.id}`).toBe(true);
      }
      expect(r.messages.length).toBeLessThan(run.messages.length);
    }
    expect(compacted).toBeGreaterThan(150);
  });
});
