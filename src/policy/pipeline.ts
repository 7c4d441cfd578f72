import { markOf } from "../model/marks.js";
import type { Message, Part } from "../model/schema.js";
import { argumentSecrets, redactEchoes } from "../steps/redact.js";
import { remainingMs } from "./options.js";
import { hintedBudget, placeRecallHint } from "./recall-hint.js";
import { kStages, type RegisteredStage } from "./stages/index.js";
import { mergeOldest } from "./stages/merge.js";
import { makePlan } from "./stages/plan.js";
import type { StageContext } from "./stages/stage.js";
import { keepThinkingOpener } from "./stages/thinking-opener.js";
import type { CompactCallOptions, StageReport, Tier } from "./types.js";
import { criticalSet, openWork, type StageKit, type Work } from "./work.js";

/** What the tiered pipeline gives back: the work, the stages' reports, its exact total, and the verdict. */
export interface PipelineResult {
  work: Work;
  stages: StageReport[];
  tokensAfter: number;
  status: "ok" | "budget_infeasible";
  /** Exact tokens of the critical set, when infeasible. */
  criticalTokens?: number;
}

/** The clock of one call: now, and the milliseconds left before its deadline. */
export interface CallClock {
  now(): number;
  remaining(): number;
}

/**
 * The tiered policy over messages above the soft threshold, as named steps: the work opened
 * (classified, to the budget less the recall hint's room, which goes in last); the registry's
 * stages run (stages/index.ts: each re-measured after it runs, until the total is at or below
 * the target); a thinking turn's opener put back; the exact finish; the echoes of secrets in
 * what the stages wrote redacted; the recall hint placed; the verdict.
 */
export async function runPipeline(
  kit: StageKit,
  messages: readonly Message[],
  total: number,
  callBudget: number,
  tier: Tier,
  deadline: CompactCallOptions["deadline"],
  now: () => number,
  started: number,
  hint?: string,
): Promise<PipelineResult> {
  const w = openWork(kit, messages, total, hintedBudget(callBudget, hint, kit.counter));
  const preserve = tier === "critical" ? Math.min(1, kit.settings.keepRecent) : kit.settings.keepRecent;
  const clock: CallClock = { now, remaining: () => remainingMs(deadline, now(), started) };
  const stages = await runStages(kit, w, { settings: kit.settings, tier, preserve }, clock);
  keepThinkingOpener(kit, w);
  let tokensAfter = await finishExact(kit, w);
  const before = w.total;
  redactWrittenEchoes(kit, w);
  tokensAfter += w.total - before;
  if (hint !== undefined) tokensAfter = placeHint(kit, w, hint, tokensAfter, callBudget);
  if (tokensAfter <= callBudget) return { work: w, stages, tokensAfter, status: "ok" };
  return { work: w, stages, tokensAfter, status: "budget_infeasible", criticalTokens: ownCriticalTokens(kit, w) };
}

/**
 * Exact tokens of the critical messages as the caller gave them, for a refusal: the work's
 * critical set (with the results their calls need, as kept) without the parts ctxfold wrote into
 * those messages (a merged summary, a step summary or a ledger, found by their marks). Where
 * this fits the budget, the refusal is for those parts: the refs they carry keep what was
 * removed recoverable, and there is no room for them.
 */
function ownCriticalTokens(kit: StageKit, w: Work): number {
  const own = criticalSet(w.msgs, w.classes).flatMap((m) => {
    if (!m.parts.some((p) => markOf(p) !== undefined)) return [m];
    const parts = m.parts.filter((p) => markOf(p) === undefined);
    return parts.length > 0 ? [{ ...m, parts }] : [];
  });
  return kit.measure.exact(own);
}

/**
 * The registry's stages in its order, each with its turn (and report) while the work is above
 * its target and the stage's `when` holds. The plan is made once, after stage 0 (which works on
 * the input as given) and before every other stage, whether or not they then have a turn.
 */
export async function runStages(
  kit: StageKit,
  w: Work,
  call: StageContext,
  clock: CallClock,
  stages: readonly RegisteredStage[] = kStages,
): Promise<StageReport[]> {
  const reports: StageReport[] = [];
  let ctx = call;
  for (const def of stages) {
    if (def.stage > 0 && ctx.plan === undefined) ctx = { ...ctx, plan: makePlan(kit, w, ctx, clock.remaining()) };
    if (w.total <= w.target || (def.when !== undefined && !def.when(w, ctx))) continue;
    reports.push(await runStage(kit, w, def, ctx, clock));
  }
  return reports;
}

/**
 * One stage's turn, timed and emitted: skipped whole near the deadline unless the stage is
 * essential, or for the reason its `skip` gives; otherwise run, counting into its report.
 */
async function runStage(kit: StageKit, w: Work, def: RegisteredStage, ctx: StageContext, clock: CallClock): Promise<StageReport> {
  const before = w.total;
  const t0 = clock.now();
  const report: StageReport = {
    stage: def.stage,
    name: def.name,
    candidateCount: 0,
    compacted: 0,
    skipped: {},
    tokensBefore: before,
    tokensAfter: before,
    durationMs: 0,
  };
  const skip = !def.essential && clock.remaining() < ctx.settings.deadlineReserveMs ? "deadline" : def.skip?.(w, ctx);
  if (skip) report.skipped[skip] = 1;
  else await kit.tally(report, () => def.run(kit, w, ctx));
  report.tokensAfter = w.total;
  report.durationMs = clock.now() - t0;
  kit.emit({ type: "compaction_stage", tier: ctx.tier, ...report });
  return report;
}

/**
 * The exact finish: near the budget the exact count decides; where it is over, stage 4's merge
 * runs again (at most twice, unreported) against the budget scaled by how far the estimate was
 * off. The request's tokens after it.
 */
async function finishExact(kit: StageKit, w: Work): Promise<number> {
  const budget = w.budget;
  let tokensAfter = w.total;
  if (tokensAfter > 0.9 * budget) tokensAfter = kit.measure.exact(w.msgs);
  for (let retry = 0; retry < 2 && tokensAfter > budget; retry++) {
    const scaled = Math.max(1, Math.floor((budget * w.total) / tokensAfter) - 8);
    await mergeOldest(kit, w, scaled);
    tokensAfter = kit.measure.exact(w.msgs);
  }
  return tokensAfter;
}

/**
 * Every part the stages wrote (any part that is not one of the input's own) with the values of
 * the input's secret-named call arguments redacted where it echoes them: a summary, a focus
 * line, a ledger fact or an observation read from a tool's output or the agent's text that
 * repeated one. The parts kept from the input are the caller's own and stay as they are.
 */
function redactWrittenEchoes(kit: StageKit, w: Work): void {
  const secrets = argumentSecrets(w.input);
  if (secrets.length === 0) return;
  const own = new Set<Part>(w.input.flatMap((m) => m.parts));
  w.msgs.forEach((m, i) => {
    const parts = m.parts.map((p) => (own.has(p) ? p : redactEchoes(p, secrets)));
    if (parts.some((p, k) => p !== m.parts[k])) kit.replace(w, i, parts, false);
  });
}

/**
 * The recall hint placed (recall-hint.ts), within the room the stages left it: the request's
 * tokens after it, counted exactly near the call's budget.
 */
function placeHint(kit: StageKit, w: Work, hint: string, tokensAfter: number, callBudget: number): number {
  const hinted = placeRecallHint(w.msgs, w.input, kit.store.prefix, hint);
  if (!hinted) return tokensAfter;
  const before = w.total;
  kit.replace(w, hinted.index, hinted.parts, false);
  const after = tokensAfter + w.total - before;
  return after > 0.9 * callBudget ? kit.measure.exact(w.msgs) : after;
}
