import type { Part } from "../../model/schema.js";
import { compactStepMessages, isStepSummaryPart } from "../../steps/messages.js";
import type { StageKit, Work } from "../work.js";

/**
 * Stage 3: the steps before the tail grouped into one step summary (the step compactor; the
 * messages it removes are stored whole under the summary's ref), then long historical text
 * before the latest exchange summarised, each with the ref of its original.
 */
export async function compactHistory(kit: StageKit, w: Work, tail: number): Promise<void> {
  const s = kit.settings;
  const recent = w.steps.filter((x) => (x.callMessage ?? x.resultMessage ?? 0) >= tail).length;
  const oldSteps = w.steps.length - recent;
  if (oldSteps > 0) {
    kit.candidate(oldSteps);
    const r = compactStepMessages(w.msgs, { steps: w.steps, force: true, compactor: kit.stepCompactor(recent), reducer: kit.storeReducer });
    if (r.compacted) {
      w.msgs.splice(0, w.msgs.length, ...r.messages);
      kit.relist(w);
      w.steps = kit.steps.reduce(w.msgs);
      if (r.removedRef) w.refs.push(r.removedRef, ...(r.removedRefs ?? []));
      w.compacted += oldSteps;
      if (kit.report) kit.report.compacted += oldSteps;
    }
  }
  const tailNow = kit.tailStart(w, Math.min(1, s.preserveRecentSteps));
  for (let i = 0; i < w.msgs.length && w.total > w.target; i++) {
    if (w.classes[i] !== "historical_context" && w.classes[i] !== "background_extraction") continue;
    if (i >= tailNow) {
      kit.skip("policy_preserve");
      continue;
    }
    const m = w.msgs[i];
    let changed = false;
    const parts: Part[] = [];
    for (const p of m.parts) {
      if (p.type !== "text" || isStepSummaryPart(p)) {
        parts.push(p);
        continue;
      }
      kit.candidate();
      const tokens = kit.measure.text(p.text);
      if (tokens <= s.textTokens) {
        kit.skip("no_gain");
        parts.push(p);
        continue;
      }
      const target = Math.max(40, Math.floor(tokens * s.textRatio));
      const summary = await kit.summarize(p.text, target, `text:${m.role}`);
      parts.push({ ...p, text: summary.text });
      w.refs.push(summary.ref);
      changed = true;
    }
    if (changed) kit.replace(w, i, parts);
  }
}
