import type { Message, Part } from "../../model/schema.js";
import { compactStepMessages, isStepSummaryPart } from "../../steps/messages.js";
import type { ReducedStep } from "../../steps/types.js";
import { isLedgerPart, writeLedger } from "../ledger.js";
import type { StageKit, Work } from "../work.js";

/**
 * Stage 3: the steps before the tail grouped into one step summary (the step compactor; the
 * messages it removes are stored whole under the summary's ref), then long historical text
 * before the latest exchange summarised, each with the ref of its original; last, what those
 * removed messages and texts established goes into the ledger before the summary's lines.
 */
export async function compactHistory(kit: StageKit, w: Work, tail: number): Promise<void> {
  const s = kit.settings;
  const at = (x: (typeof w.steps)[number]) => x.callMessage ?? x.resultMessage ?? 0;
  // Steps in the settled prefix stay as they are.
  const live = w.steps.filter((x) => at(x) >= w.frozen);
  const recent = live.filter((x) => at(x) >= tail).length;
  const oldSteps = live.length - recent;
  const removed: Message[] = [];
  let gone: ReducedStep[] = [];
  if (oldSteps > 0) {
    kit.candidate(oldSteps);
    // Recent exchanges stay whole while they fit: only the oldest steps the target needs gone
    // leave for the step summary (room kept for the ledger that will stand for them); if the
    // estimate fell short, more of them, from the same start.
    const before = [...w.msgs];
    const goal = w.target - Math.floor((s.ledgerRatio * w.budget) / 2);
    const sizes = stepSizes(kit, w, live.slice(0, oldSteps));
    let collapse = collapseCount(sizes, w.total - goal);
    for (;;) {
      const r = compactStepMessages(before, { steps: live, force: true, compactor: kit.stepCompactor(live.length - collapse), reducer: kit.storeReducer });
      if (!r.compacted) break;
      const total = kit.measure.all(r.messages);
      if (total > goal && collapse < oldSteps) {
        collapse = Math.min(oldSteps, collapse + collapseCount(sizes.slice(collapse), total - goal));
        continue;
      }
      if (s.ledgerRatio > 0) {
        const kept = new Set(r.history.recentSteps.map((x) => x.id));
        gone = live.filter((x) => !kept.has(x.id));
        removed.push(...removedOriginals(w, gone));
      }
      w.msgs.splice(0, w.msgs.length, ...r.messages);
      kit.relist(w);
      w.steps = kit.steps.reduce(w.msgs);
      if (r.removedRef) w.refs.push(r.removedRef, ...(r.removedRefs ?? []));
      w.compacted += collapse;
      if (kit.report) kit.report.compacted += collapse;
      break;
    }
  }
  const tailNow = kit.tailStart(w, Math.min(1, s.preserveRecentSteps));
  for (let i = w.frozen; i < w.msgs.length && w.total > w.target; i++) {
    if (w.classes[i] !== "historical_context" && w.classes[i] !== "background_extraction") continue;
    if (i >= tailNow) {
      kit.skip("policy_preserve");
      continue;
    }
    const m = w.msgs[i];
    let changed = false;
    const parts: Part[] = [];
    for (const p of m.parts) {
      if (p.type !== "text" || isStepSummaryPart(p) || isLedgerPart(p)) {
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
    if (changed) {
      removed.push(m);
      kit.replace(w, i, parts);
    }
  }
  if (removed.length > 0) writeLedger(kit, w, { messages: inputOrder(w, removed), steps: gone });
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
  return messages.map((m, k) => ({ m, at: pos.get(m.id) ?? w.input.length + k })).sort((a, b) => a.at - b.at).map((x) => x.m);
}

/** A step summary line's rough cost in tokens (what a collapsed step still costs). */
const kLineTokens = 20;

/** Estimated tokens each of `steps` holds now (a message shared by several of them split between them). */
function stepSizes(kit: StageKit, w: Work, steps: readonly ReducedStep[]): number[] {
  const share = new Map<number, number>();
  const at = (s: ReducedStep) => [...new Set([s.callMessage, s.resultMessage].filter((i): i is number => i !== undefined))];
  for (const st of steps) for (const i of at(st)) share.set(i, (share.get(i) ?? 0) + 1);
  return steps.map((st) => at(st).reduce((n, i) => n + kit.measure.of(w.msgs[i]) / share.get(i)!, 0));
}

/** How many of the oldest steps (sizes in order) must collapse into summary lines to save `need` tokens; at least 1. */
function collapseCount(sizes: readonly number[], need: number): number {
  let saved = -kLineTokens;
  for (let k = 0; k < sizes.length; k++) {
    saved += sizes[k] - kLineTokens;
    if (saved >= need) return k + 1;
  }
  return Math.max(1, sizes.length);
}
