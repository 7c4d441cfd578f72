import { tailStart, type StageKit, type Work } from "../work.js";
import type { Plan, StageContext } from "./stage.js";

/**
 * The plan, made once after stage 0: when even the best case of stages 1 and 2 leaves the
 * request above the target and stage 3 will run (`remaining` ms are not within the deadline
 * reserve), their work would be superseded: stage 3 replaces every old step (arguments and
 * outputs included, stored whole) by the step summary.
 */
export function makePlan(kit: StageKit, w: Work, ctx: StageContext, remaining: number): Plan {
  return { tracesSuperseded: remaining >= ctx.settings.deadlineReserveMs && bestCaseTraceSavings(kit, w, tailStart(w, ctx.preserve)) < w.total - w.target };
}

/** Stages 1 and 2 skip as no_gain where the plan found stage 3 would replace their work. */
export function skipWhenTracesSuperseded(_w: Work, ctx: StageContext): "no_gain" | undefined {
  return ctx.plan?.tracesSuperseded ? "no_gain" : undefined;
}

/**
 * An upper bound of what stages 1 and 2 can save: every tool-trace message before the tail
 * shrunk to 40 tokens a part (a replacement is an observation or minimal arguments plus a ref,
 * rarely less).
 */
function bestCaseTraceSavings(kit: StageKit, w: Work, tail: number): number {
  let saving = 0;
  for (let i = 0; i < tail; i++) {
    if (w.classes[i] !== "tool_trace") continue;
    const m = w.msgs[i];
    const trace = m.parts.filter((p) => p.type === "tool-call" || p.type === "tool-result").length;
    saving += Math.max(0, kit.measure.of(m) - 40 * Math.max(1, trace));
  }
  return saving;
}
