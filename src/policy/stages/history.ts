import type { Message, Part } from "../../model/schema.js";
import { compactStepMessages, isStepSummaryPart } from "../../steps/messages.js";
import type { ReducedStep } from "../../steps/types.js";
import { standingInstructions } from "../relevance/instructions.js";
import { isLedgerPart } from "../relevance/ledger.js";
import { tailStart, writeLedger, type StageKit, type Work } from "../work.js";
import { mergeToSoft } from "./merge.js";
import { defineStage } from "./stage.js";

/** Stage 3, on the work before the preserved tail, ending at a fixed point (mergeToSoft); skipped near the deadline. */
export const historicalTextStage = defineStage({
  stage: 3,
  name: "historical_text",
  essential: false,
  run: async (kit, w, ctx) => {
    await compactHistory(kit, w, tailStart(w, ctx.preserve));
    await mergeToSoft(kit, w);
  },
});

/**
 * Stage 3: the steps before the tail grouped into one step summary (the step compactor; the
 * messages it removes are stored whole under the summary's ref), then long historical text
 * before the latest exchange summarised, each with the ref of its original (a standing
 * instruction stays: relevance/instructions.ts); last, what those removed messages and texts
 * established goes into the ledger before the summary's lines.
 */
export async function compactHistory(kit: StageKit, w: Work, tail: number): Promise<void> {
  const s = kit.settings;
  const recent = w.steps.filter((x) => (x.callMessage ?? x.resultMessage ?? 0) >= tail).length;
  const oldSteps = w.steps.length - recent;
  const removed: Message[] = [];
  let gone: ReducedStep[] = [];
  if (oldSteps > 0) {
    kit.candidate(oldSteps);
    const r = compactStepMessages(w.msgs, { steps: w.steps, force: true, compactor: kit.stepCompactor(recent), reducer: kit.storeReducer });
    if (r.compacted) {
      if (s.ledgerRatio > 0) {
        const kept = new Set(r.history.recentSteps.map((x) => x.id));
        gone = w.steps.filter((x) => !kept.has(x.id));
        removed.push(...removedOriginals(w, gone));
      }
      kit.relist(w, r.messages, true);
      if (r.removedRef) kit.addRefs(w, r.removedRef, ...(r.removedRefs ?? []));
      kit.countCompactions(w, oldSteps);
    }
  }
  const tailNow = tailStart(w, Math.min(1, s.keepRecent));
  const instructions = standingInstructions(w.msgs, w.classes, s, w.budget, (t) => kit.measure.text(t));
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
      if (p.type !== "text" || isStepSummaryPart(p) || isLedgerPart(p) || instructions.get(i)?.includes(p)) {
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
      kit.addRefs(w, summary.ref);
      changed = true;
    }
    if (changed) {
      removed.push(m);
      kit.replace(w, i, parts);
    }
  }
  if (removed.length > 0) writeLedger(kit, w, { messages: inputOrder(w, removed), steps: gone }, kit.facts);
}

/**
 * The messages that removing `gone` takes out of `w.msgs` (before the removal), as the caller
 * sent them: stages 1 and 2 may have shortened their arguments and outputs, and the ledger
 * reads the originals.
 */
function removedOriginals(w: Work, gone: readonly ReducedStep[]): Message[] {
  const at = new Set<number>();
  for (const st of gone) {
    if (st.callMessage !== undefined) at.add(st.callMessage);
    if (st.resultMessage !== undefined) at.add(st.resultMessage);
  }
  const aligned = w.input.length === w.msgs.length;
  return [...at].sort((a, b) => a - b).map((i) => (aligned && w.input[i]?.id === w.msgs[i].id ? w.input[i] : w.msgs[i]));
}

/** `messages` in the order of the call's input (the ledger ranks recent facts higher); those not in it last. */
function inputOrder(w: Work, messages: readonly Message[]): Message[] {
  const pos = new Map(w.input.map((m, i) => [m.id, i]));
  return messages
    .map((m, k) => ({ m, at: pos.get(m.id) ?? w.input.length + k }))
    .sort((a, b) => a.at - b.at)
    .map((x) => x.m);
}
