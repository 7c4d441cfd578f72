import type { Part } from "../../model/schema.js";
import { compactStepMessages, isStepSummaryPart } from "../../steps/messages.js";
import type { ReducedStep } from "../../steps/types.js";
import type { StageKit, Work } from "../work.js";

/**
 * Stage 3: the steps before the tail grouped into one step summary (the step compactor; the
 * messages it removes are stored whole under the summary's ref), then long historical text
 * before the latest exchange summarised, each with the ref of its original.
 */
export async function compactHistory(kit: StageKit, w: Work, tail: number): Promise<void> {
  const s = kit.settings;
  const at = (x: (typeof w.steps)[number]) => x.callMessage ?? x.resultMessage ?? 0;
  // Steps in the settled prefix stay as they are.
  const live = w.steps.filter((x) => at(x) >= w.frozen);
  const recent = live.filter((x) => at(x) >= tail).length;
  const oldSteps = live.length - recent;
  if (oldSteps > 0) {
    kit.candidate(oldSteps);
    // Recent exchanges stay whole while they fit: only the oldest steps the target needs gone
    // leave for the step summary; if the estimate fell short, more of them, from the same start.
    const before = [...w.msgs];
    const sizes = stepSizes(kit, w, live.slice(0, oldSteps));
    let collapse = collapseCount(sizes, w.total - w.target);
    for (;;) {
      const r = compactStepMessages(before, { steps: live, force: true, compactor: kit.stepCompactor(live.length - collapse), reducer: kit.storeReducer });
      if (!r.compacted) break;
      const total = kit.measure.all(r.messages);
      if (total > w.target && collapse < oldSteps) {
        collapse = Math.min(oldSteps, collapse + collapseCount(sizes.slice(collapse), total - w.target));
        continue;
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
