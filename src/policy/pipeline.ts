import type { Message, Part } from "../model/schema.js";
import { argumentSecrets, redactEchoes } from "../steps/redact.js";
import { remainingMs } from "./options.js";
import { compactHistory } from "./stages/history.js";
import { mergeOldest } from "./stages/merge.js";
import { hintedBudget, placeRecallHint } from "./recall-hint.js";
import { dropSuperseded, supersededHistory } from "./stages/superseded.js";
import { keepThinkingOpener } from "./stages/thinking-opener.js";
import { compactToolArgs } from "./stages/tool-args.js";
import { compactToolOutputs } from "./stages/tool-outputs.js";
import type { CompactCallOptions, StageReport, Tier } from "./types.js";
import { criticalSet, openWork, tailStart, type StageKit, type Work } from "./work.js";

/** What the tiered pipeline gives back: the work, the stages' reports, its exact total, and the verdict. */
export interface PipelineResult {
  work: Work;
  stages: StageReport[];
  tokensAfter: number;
  status: "ok" | "budget_infeasible";
  /** Exact tokens of the critical set, when infeasible. */
  criticalTokens?: number;
}

interface StageDef {
  stage: StageReport["stage"];
  name: StageReport["name"];
  run: () => Promise<void> | void;
  /** Whether it runs even when the deadline is near (cheap, and what the budget most depends on). */
  essential: boolean;
}

/**
 * The tiered policy over messages above the soft threshold: classify; when the input carries a
 * provider's compaction, move out the history it supersedes first (stage 0); plan (where the
 * preserved tail starts, which stages can pay), run the stages in order until the total is at
 * or below the target (stage 4 only above the hard threshold), each re-measured after it runs;
 * then put back a thinking turn's opener, and finish: near the budget the exact count decides,
 * and where it is over, stage 4 runs again against the budget scaled by how far the estimate
 * was off.
 */
export async function runPipeline(
  kit: StageKit, messages: readonly Message[], total: number, callBudget: number, tier: Tier, deadline: CompactCallOptions["deadline"], now: () => number, started: number,
  hint?: string,
): Promise<PipelineResult> {
  const s = kit.settings;
  // The recall hint goes in last, so the stages work to the budget less its room (recall-hint.ts).
  const budget = hintedBudget(callBudget, hint, kit.counter);
  const w = openWork(kit, messages, total, budget);
  const reports: StageReport[] = [];
  const remaining = () => remainingMs(deadline, now(), started);
  /** Runs one stage with its report (timed, emitted), unless the deadline or `skip` says otherwise. */
  const runStage = async ({ stage, name, run, essential }: StageDef, skip?: "no_gain"): Promise<void> => {
    const before = w.total;
    const t0 = now();
    const report: StageReport = { stage, name, candidateCount: 0, compacted: 0, skipped: {}, tokensBefore: before, tokensAfter: before, durationMs: 0 };
    reports.push(report);
    if (!essential && remaining() < s.deadlineReserveMs) {
      report.skipped.deadline = 1;
    } else if (skip) {
      report.skipped[skip] = 1;
    } else {
      await kit.tally(report, run);
    }
    report.tokensAfter = w.total;
    report.durationMs = now() - t0;
    kit.emit({ type: "compaction_stage", tier, ...report });
  };
  // Only an input that carries a provider's compaction has a stage 0 (and its report).
  if (w.total > w.target && supersededHistory(w.msgs).length > 0) await runStage({ stage: 0, name: "superseded_history", run: () => dropSuperseded(kit, w), essential: true });
  const preserve = tier === "critical" ? Math.min(1, s.preserveRecentSteps) : s.preserveRecentSteps;
  // Stages 1–3 leave the preserved tail alone, found anew when each runs (a stage moves messages).
  const stages: StageDef[] = [
    { stage: 1, name: "tool_args", run: () => compactToolArgs(kit, w, tailStart(w, preserve), w.target), essential: true },
    { stage: 2, name: "tool_outputs", run: () => compactToolOutputs(kit, w, tailStart(w, preserve), messages), essential: true },
    { stage: 3, name: "historical_text", run: () => compactHistory(kit, w, tailStart(w, preserve)), essential: false },
    { stage: 4, name: "merge_oldest", run: () => mergeOldest(kit, w, budget), essential: false },
  ];
  // When even the best case of stages 1 and 2 leaves the request above the target and stage 3
  // will run, their work would be superseded: stage 3 replaces every old step (arguments and
  // outputs included, stored whole) by the step summary. They are then skipped as no_gain.
  const superseded = remaining() >= s.deadlineReserveMs && bestCaseTraceSavings(kit, w, tailStart(w, preserve)) < w.total - w.target;
  for (const def of stages) {
    if (w.total <= w.target) break;
    if (def.stage === 4 && w.total <= s.hardRatio * budget) break; // only above hard
    await runStage(def, superseded && def.stage <= 2 ? "no_gain" : undefined);
  }
  keepThinkingOpener(kit, w, messages, budget);
  let tokensAfter = w.total;
  if (tokensAfter > 0.9 * budget) tokensAfter = kit.measure.exact(w.msgs);
  for (let retry = 0; retry < 2 && tokensAfter > budget; retry++) {
    const scaled = Math.max(1, Math.floor((budget * w.total) / tokensAfter) - 8);
    await mergeOldest(kit, w, scaled);
    tokensAfter = kit.measure.exact(w.msgs);
  }
  const before = w.total;
  redactWrittenEchoes(kit, w, messages);
  tokensAfter += w.total - before;
  const hinted = hint === undefined ? undefined : placeRecallHint(w.msgs, messages, kit.store.prefix, hint);
  if (hinted) {
    const before = w.total;
    kit.replace(w, hinted.index, hinted.parts, false);
    tokensAfter = tokensAfter + w.total - before;
    if (tokensAfter > 0.9 * callBudget) tokensAfter = kit.measure.exact(w.msgs);
  }
  if (tokensAfter <= callBudget) return { work: w, stages: reports, tokensAfter, status: "ok" };
  return { work: w, stages: reports, tokensAfter, status: "budget_infeasible", criticalTokens: kit.measure.exact(criticalSet(w.msgs, w.classes)) };
}

/**
 * Every part the stages wrote (any part that is not one of the input's own) with the values of
 * the input's secret-named call arguments redacted where it echoes them: a summary, a focus
 * line, a ledger fact or an observation read from a tool's output or the agent's text that
 * repeated one. The parts kept from the input are the caller's own and stay as they are.
 */
function redactWrittenEchoes(kit: StageKit, w: Work, input: readonly Message[]): void {
  const secrets = argumentSecrets(input);
  if (secrets.length === 0) return;
  const own = new Set<Part>(input.flatMap((m) => m.parts));
  w.msgs.forEach((m, i) => {
    const parts = m.parts.map((p) => (own.has(p) ? p : redactEchoes(p, secrets)));
    if (parts.some((p, k) => p !== m.parts[k])) kit.replace(w, i, parts, false);
  });
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
