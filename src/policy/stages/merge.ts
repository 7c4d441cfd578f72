import { compactionBoundary, holdsServerContext } from "../../adapters/server-context.js";
import { hashText, hashToHex } from "../../core/hash.js";
import { markOf, marked } from "../../model/marks.js";
import type { Message, Part, TextPart, ToolResultPart } from "../../model/schema.js";
import { messageTexts } from "../../model/texts.js";
import { mergeAdjacent } from "../../model/adjacent.js";
import { isStepSummaryPart, stepSummaryShrinks } from "../../steps/messages.js";
import { errorHead, extractExitCode, isFailedOutput, parseJsonOutput } from "../../steps/detect.js";
import { redactArgumentText } from "../../steps/redact.js";
import { resultPayload, resultText } from "../../steps/reducer.js";
import type { ReducedStep } from "../../steps/types.js";
import { indexedRefs, putMessages } from "../../store/messages.js";
import { summarizeExtractive } from "../../summarize/extractive.js";
import { standingInstructions } from "../relevance/instructions.js";
import { isLedgerPart } from "../relevance/ledger.js";
import { criticalIndices, criticalSet, exchangeTail, shrinkLedger, writeLedger, type StageKit, type Work } from "../work.js";
import { defineStage } from "./stage.js";
import { compactToolArgs } from "./tool-args.js";

/** Stage 4, only above the hard threshold, to the work's budget; skipped near the deadline. */
export const mergeOldestStage = defineStage({
  stage: 4,
  name: "merge_oldest",
  essential: false,
  when: (w, ctx) => w.total > ctx.settings.hardRatio * w.budget,
  run: (kit, w) => mergeOldest(kit, w, w.budget),
});

/**
 * Stage 4 (above hard only): the oldest context between the critical head (system prompt and
 * task) and the latest exchange is merged into one summary message, originals stored whole;
 * critical messages in between stay, a critical message's calls with their results, and so do
 * standing instructions. Stages 1–3 leave whole everything from a critical message that calls
 * tools on; the merge reaches past its exchange, so that what follows it is never what keeps
 * the work over the budget. If that is still not enough, the last resorts follow, in order,
 * while the work is over `budget`: every call's arguments, the latest tool outputs summarised
 * (with refs, never dropped), a merged summary tighter, the ledger down to its errors, a step
 * summary in a critical message shrunk, the tool outputs again down to 20 tokens each (their
 * refs and failure lines whole). With a provider's compaction in the messages, the merge
 * starts after the latest one (what precedes it is stage 0's) and a message holding one
 * stays, like a critical one.
 */
export async function mergeOldest(kit: StageKit, w: Work, budget: number): Promise<void> {
  await mergeMiddle(kit, w, budget);
  // Still over budget: the arguments of every remaining call, the latest exchange's included
  // (a critical message's text stays; its calls' arguments are trace, not critical text)…
  if (w.total > budget) compactToolArgs(kit, w, w.msgs.length, budget, true);
  // …then the remaining tool outputs, newest last, summarised within what is left…
  await summarizeOutputs(kit, w, budget);
  // …then a merged summary already in place (from an earlier pass) summarised tighter…
  tightenMerged(kit, w, budget);
  // …then the ledger keeps only its error lines (or goes, when it has none)…
  if (w.total > budget) shrinkLedger(kit, w);
  // …then a step summary that stage 3 merged into a critical message shrinks…
  shrinkStepSummaries(kit, w, budget);
  // …last, the outputs again, below the first pass's floor: the results a critical message's
  // calls need are all that may be left, and they are trace, not critical text.
  await summarizeOutputs(kit, w, budget, kLastOutputFloor);
}

/** The tokens an output keeps in the last resort's first pass, and in its last. */
const kOutputFloor = 60;
const kLastOutputFloor = 20;

/** What the merge takes in from the messages before the tail. */
interface Merged {
  /** The merged messages and, for a step summary taken in, the refs of the originals it names, in order. */
  items: (Message | string)[];
  /** The texts the merged summary is made of. */
  texts: string[];
  /** Failures stay visible through the merge: each failed step's call id and error head, on a line of its own. */
  failures: string[];
  /** The ledger parts of the merged messages: a ledger is not summarised again, it moves whole ahead of the summary. */
  carried: Part[];
  /** The steps of the merged messages. */
  steps: ReducedStep[];
}

/**
 * Stage 3's end: where stage 3 left the work above the soft threshold but within the hard one,
 * where stage 4 does not run (what must stay whole is most of the budget), the middle is merged
 * as stage 4 merges it, to the soft threshold, so that the epoch is a fixed point: the next call
 * appends to it instead of compacting again. What the middle holds is only what the seed's
 * pressure tier compacts (tool trace and older historical context): critical messages, their
 * calls' results and standing instructions stay, and none of stage 4's last resorts runs. Chosen on
 * both corpora (docs/eval.md, "Choosing the defaults"): the same evidence on every source, for
 * 2% less per call at 8k and 5% less at 32k.
 */
export async function mergeToSoft(kit: StageKit, w: Work): Promise<void> {
  const s = kit.settings;
  if (w.total <= s.softRatio * w.budget || w.total > s.hardRatio * w.budget) return;
  await mergeMiddle(kit, w, Math.floor(s.softRatio * w.budget));
}

/**
 * The middle (see middleOf) merged into one summary message where its first message stood, its
 * originals stored whole under one index; what they established goes into the ledger.
 */
async function mergeMiddle(kit: StageKit, w: Work, budget: number): Promise<void> {
  const tail = exchangeTail(w, 1);
  const { middle, stays, instructions } = middleOf(kit, w, tail);
  kit.candidate(middle.length);
  if (middle.length === 0) return;
  const gone = new Set(middle);
  const merged = gatherMerged(kit, w, tail, gone, stays, instructions);
  const { ref, refs } = putMessages(kit.store, merged.items);
  kit.addRefs(w, ref, ...refs.filter((_, k) => typeof merged.items[k] !== "string"));
  const summary = (await kit.summarize(merged.texts.join("\n"), mergeTarget(kit, w, budget), "merge")).text;
  kit.relist(w, withMerged(w.msgs, middle[0], gone, mergedMessage(merged, ref, summary)), false);
  writeLedger(kit, w, { messages: merged.items.filter((x): x is Message => typeof x !== "string"), steps: merged.steps });
  kit.countCompactions(w, middle.length);
}

/**
 * What stage 4 merges: `middle`, the messages between the critical head (system prompt and task,
 * or the latest provider compaction) and `tail` but those that stay and those holding a
 * provider's context; `stays`, the critical messages (a critical call's results with them) and
 * those holding standing instructions; and `instructions`, those instructions' parts
 * (relevance/instructions.ts).
 */
function middleOf(kit: StageKit, w: Work, tail: number): { middle: number[]; stays: Set<number>; instructions: Map<number, Part[]> } {
  const head = Math.max(w.msgs.findIndex((m) => m.role === "user") + 1, compactionBoundary(w.msgs) + 1);
  const stays = criticalIndices(w.msgs, w.classes);
  const instructions = standingInstructions(w.msgs, w.classes, kit.settings, w.budget, (t) => kit.measure.text(t));
  for (const i of instructions.keys()) stays.add(i);
  const middle: number[] = [];
  for (let i = Math.max(head, 0); i < tail; i++) if (!stays.has(i) && !holdsServerContext(w.msgs[i])) middle.push(i);
  return { middle, stays, instructions };
}

/**
 * What the merge takes in before `tail`, in order: the messages `gone`, each step summary that
 * stage 3 merged into a message that `stays` (see takeStepSummary), and the other turns stage 3
 * joined to a standing instruction (see takeOtherTurns). The failures come from the merged
 * steps first, then from each step summary, in order.
 */
function gatherMerged(
  kit: StageKit,
  w: Work,
  tail: number,
  gone: ReadonlySet<number>,
  stays: ReadonlySet<number>,
  instructions: ReadonlyMap<number, readonly Part[]>,
): Merged {
  const steps = w.steps.filter((st) => gone.has(st.resultMessage ?? st.callMessage ?? -1));
  const merged: Merged = { items: [], texts: [], failures: [], carried: [], steps };
  for (const st of steps) if (!st.success) merged.failures.push(`${st.callId ?? st.id} (${st.error ?? "failed"})`);
  for (let i = 0; i < tail; i++) {
    if (gone.has(i)) takeMessage(merged, w.msgs[i]);
    else if (stays.has(i)) {
      takeStepSummary(kit, w, i, merged);
      const own = instructions.get(i);
      if (own) takeOtherTurns(kit, w, i, own, merged);
    }
  }
  return merged;
}

/**
 * The turns of message `i` besides its standing instructions (`parts`), when stage 3 joined
 * such turns to one (a longer turn, or one past the instructions' room): merged with the rest,
 * as a message of those parts, and gone from message `i`, which keeps its instructions.
 */
function takeOtherTurns(kit: StageKit, w: Work, i: number, parts: readonly Part[], merged: Merged): void {
  const m = w.msgs[i];
  const others = m.parts.filter((p) => !parts.includes(p) && markOf(p) === undefined);
  if (others.length === 0) return;
  takeMessage(merged, { ...m, parts: others });
  kit.replace(
    w,
    i,
    m.parts.filter((p) => !others.includes(p)),
  );
}

/** A merged message: itself as an item, its texts, its ledger carried, its step summaries' failures. */
function takeMessage(merged: Merged, m: Message): void {
  merged.items.push(m);
  merged.carried.push(...m.parts.filter(isLedgerPart));
  // A call's secret-named argument values never reach the summary (shapes are the summariser's to redact).
  const parts = m.parts.filter((p) => !isLedgerPart(p)).map((p) => (p.type === "tool-call" ? { ...p, args: redactArgumentText(p.args) } : p));
  merged.texts.push(...messageTexts([{ ...m, parts }]));
  for (const p of m.parts) {
    const mark = markOf(p);
    if (mark?.kind === "step-summary") merged.failures.push(...mark.failed);
  }
}

/**
 * A step summary that stage 3 merged into message `i`, which stays (critical, or a standing
 * instruction; the summary is ours, not the caller's text), is
 * merged too: its text with the rest, and the originals it names listed where it stood, so
 * that the merge's one index names everything before the tail. It leaves the message.
 */
function takeStepSummary(kit: StageKit, w: Work, i: number, merged: Merged): void {
  const m = w.msgs[i];
  const at = m.parts.length > 1 ? m.parts.findIndex(isStepSummaryPart) : -1;
  if (at < 0) return;
  const summary = markOf(m.parts[at]);
  if (summary?.kind !== "step-summary") return;
  merged.items.push(...indexedRefs(kit.store, summary.ref));
  merged.texts.push((m.parts[at] as TextPart).text);
  merged.failures.push(...summary.failed);
  kit.replace(
    w,
    i,
    m.parts.filter((_, k) => k !== at),
  );
  // Its index is superseded by the merge's, which names the same messages.
  kit.dropRef(w, summary.ref);
}

/** The merged summary's room: a quarter of what the critical messages leave of `budget` (at least 60), at most mergeTokens. */
function mergeTarget(kit: StageKit, w: Work, budget: number): number {
  return Math.min(kit.settings.mergeTokens, Math.max(60, Math.floor((budget - kit.measure.all(criticalSet(w.msgs, w.classes))) / 4)));
}

/** The message that stands for the merged ones: the ledger carried, then a header naming the index, the failures, the summary. */
function mergedMessage(merged: Merged, ref: string, summary: string): Message {
  const { items, failures, carried } = merged;
  const failLine =
    failures.length === 0 ? "" : `\nFailed: ${[...new Set(failures)].slice(0, 20).join("; ")}${failures.length > 20 ? `; +${failures.length - 20} more` : ""}`;
  return {
    id: `ctxfold-merge-${hashToHex(hashText(summary)).slice(0, 12)}`,
    role: "user",
    parts: [
      ...carried,
      marked(
        { type: "text", text: `[Earlier context, merged: ${items.length} messages; originals: ${ref}]${failLine}\n${summary}` },
        { kind: "merge", ref, failed: [...new Set(failures)] },
      ),
    ],
    meta: { ctxfold: { kind: "merge", ref } },
  };
}

/** `msgs` without the messages `gone`, `merged` where message `first` stood; neighbours meeting across a gap joined. */
function withMerged(msgs: readonly Message[], first: number, gone: ReadonlySet<number>, merged: Message): Message[] {
  const out: Message[] = [];
  const gapBefore: boolean[] = [];
  let gap = false;
  msgs.forEach((m, i) => {
    if (i === first) {
      out.push(merged);
      gapBefore.push(true);
      gap = true;
    }
    if (gone.has(i)) {
      gap = true;
      return;
    }
    out.push(m);
    gapBefore.push(gap);
    gap = false;
  });
  return mergeAdjacent(out, gapBefore);
}

/** The remaining tool outputs, oldest first, each summarised within what the work is over the last resort's aim (at least `floor` tokens). */
async function summarizeOutputs(kit: StageKit, w: Work, budget: number, floor = kOutputFloor): Promise<void> {
  if (w.total <= budget) return;
  const aim = lastResortAim(kit, w, budget);
  for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
    const m = w.msgs[i];
    if (!m.parts.some((p) => p.type === "tool-result")) continue;
    const over = w.total - aim;
    const parts: Part[] = [];
    let changed = false;
    for (const p of m.parts) {
      const next = p.type === "tool-result" ? await summarizedOutput(kit, w, p, over, floor) : p;
      parts.push(next);
      changed ||= next !== p;
    }
    if (changed) kit.replace(w, i, parts);
  }
}

/**
 * What the last resort's output summaries bring the work down to: the budget's target, as the
 * stages before do, leaving the band up to the soft threshold for the next calls' appends to
 * fit in with their prefix cached; but the budget itself where the critical messages' own text
 * (their calls and results aside, which the last resort shortens) leaves under the soft
 * threshold a band no wider than the margin the threshold leaves under the budget (soft −
 * critical ≤ 1 − soft: the critical text at 2 × softRatio − 1 of the budget or more, 0.7 by
 * default). There a step or two fills the band whatever the outputs keep, the next call compacts
 * again, and the band buys little: the latest outputs keep what fits (often what the next step
 * edits, such as the lines of the file it opened). On both corpora this changes only such
 * prompts: SWE-agent runs whose demonstration and issue take 95% of 8,000 tokens keep 96.4% of
 * next-step evidence (the tail baseline's) instead of 89.1%, mini-gemini3pro 99.1% → 99.3%,
 * pooled 90.59% → 90.71% for 1,493.0 → 1,494.6 a call (docs/eval.md, "Choosing the defaults").
 */
function lastResortAim(kit: StageKit, w: Work, budget: number): number {
  const s = kit.settings;
  const fixed = criticalSet(w.msgs, w.classes).map((m) => ({ ...m, parts: m.parts.filter((p) => p.type !== "tool-call" && p.type !== "tool-result") }));
  return kit.measure.all(fixed) >= (2 * s.softRatio - 1) * budget ? budget : Math.floor(s.targetRatio * budget);
}

/**
 * A tool output above `floor` tokens summarised to `over` tokens fewer (at least `floor`), with its ref.
 * A failed output keeps its failure visible whole (call id and error head) above the summary,
 * which gets the rest of the room: an error line cut to fit is not visible.
 */
async function summarizedOutput(kit: StageKit, w: Work, p: ToolResultPart, over: number, floor: number): Promise<ToolResultPart> {
  const text = resultText(p.content);
  const tokens = kit.measure.text(text);
  if (tokens <= floor) return p;
  const failure = failureLine(p, text);
  const room = Math.max(floor, tokens - over) - (failure ? kit.measure.text(failure) + 1 : 0);
  const summary = await kit.summarize(resultPayload(p.content).data, Math.max(kLastOutputFloor, room), `output:${p.name ?? "tool"}`);
  kit.addRefs(w, summary.ref);
  return { ...p, content: [{ type: "text", text: failure ? `${failure}\n${summary.text}` : summary.text }] };
}

/**
 * For a tool result that failed (flagged as an error, reads as a failure, or reports a non-zero
 * exit code): one line naming its call and its error head, kept whole wherever the result is
 * shortened to fit. Undefined for a result that did not fail.
 */
function failureLine(p: { callId: string; isError?: boolean }, text: string): string | undefined {
  const json = parseJsonOutput(text);
  const code = extractExitCode(text, json);
  if (!isFailedOutput(text, json, p.isError, code)) return undefined;
  const head = errorHead(text);
  return `[ctxfold] call ${p.callId} failed${code ? ` (exit ${code})` : ""}${head ? `: ${head}` : ""}`;
}

/** A merged summary already in place (from an earlier pass) summarised tighter, keeping its header and failure line. */
function tightenMerged(kit: StageKit, w: Work, budget: number): void {
  for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
    const m = w.msgs[i];
    const at = m.parts.findIndex((p) => markOf(p)?.kind === "merge");
    const mark = at < 0 ? undefined : markOf(m.parts[at]);
    if (mark?.kind !== "merge") continue;
    const lines = (m.parts[at] as TextPart).text.split("\n");
    // The header, and the failure line when there were failures.
    const head = mark.failed.length > 0 ? 2 : 1;
    const body = lines.slice(head).join("\n");
    const tokens = kit.measure.text(body);
    const want = Math.max(20, tokens - (w.total - budget) - 8);
    if (want >= tokens) continue;
    const shorter = summarizeExtractive(body, want, "merge", kit.counter);
    kit.replace(w, i, withPartText(m, at, [...lines.slice(0, head), shorter].join("\n")));
  }
}

/**
 * A step summary that stage 3 merged into a critical message shrinks (it is ours, not the
 * caller's critical text): to its failure lines and refs, then to the failed call ids and the
 * ref of the removed messages, then to that ref alone. It never goes: that ref is how the
 * messages it stands for are reached from the output (where there was a middle to merge, the
 * merge took it in, with them); the budget may then be infeasible.
 */
function shrinkStepSummaries(kit: StageKit, w: Work, budget: number): void {
  for (let level = 0; level < 3; level++) {
    for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
      const m = w.msgs[i];
      const at = m.parts.findIndex(isStepSummaryPart);
      if (at < 0) continue;
      const old = (m.parts[at] as TextPart).text;
      const kept = stepSummaryShrinks(old)[level];
      if (kept.length >= old.length) continue;
      kit.replace(w, i, withPartText(m, at, kept));
    }
  }
}

/** The parts of `m` with text part `at` given `text`. */
function withPartText(m: Message, at: number, text: string): Part[] {
  const parts = [...m.parts];
  parts[at] = { ...(m.parts[at] as TextPart), text };
  return parts;
}
