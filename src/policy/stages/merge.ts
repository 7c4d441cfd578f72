import { compactionBoundary, holdsServerContext } from "../../adapters/server-context.js";
import { hashText, hashToHex } from "../../core/hash.js";
import { markOf, marked } from "../../model/marks.js";
import type { Message, Part } from "../../model/schema.js";
import { messageTexts } from "../../model/texts.js";
import { mergeAdjacent } from "../../model/adjacent.js";
import { isStepSummaryPart, stepSummaryShrinks } from "../../steps/messages.js";
import { errorHead, extractExitCode, isFailedOutput, parseJsonOutput } from "../../steps/detect.js";
import { redactArgumentText } from "../../steps/redact.js";
import { resultPayload, resultText } from "../../steps/reducer.js";
import { indexedRefs, putMessages } from "../../store/messages.js";
import { summarizeExtractive } from "../../summarize/extractive.js";
import { isLedgerPart } from "../relevance/ledger.js";
import { shrinkLedger, writeLedger, type StageKit, type Work } from "../work.js";
import { compactToolArgs } from "./tool-args.js";

/**
 * Stage 4 (above hard only): the oldest context between the critical head (system prompt and
 * task) and the latest exchange is merged into one summary message, originals stored whole;
 * critical messages in between stay. If that is still not enough, the latest tool outputs
 * are summarised (with refs) — never dropped. With a provider's compaction in the messages, the
 * merge starts after the latest one (what precedes it is stage 0's) and a message holding one
 * stays, like a critical one.
 */
export async function mergeOldest(kit: StageKit, w: Work, budget: number): Promise<void> {
  const s = kit.settings;
  const head = Math.max(w.msgs.findIndex((m) => m.role === "user") + 1, compactionBoundary(w.msgs) + 1);
  const tail = kit.tailStart(w, 1);
  const middle: number[] = [];
  for (let i = Math.max(head, 0); i < tail; i++) if (w.classes[i] !== "critical" && !holdsServerContext(w.msgs[i])) middle.push(i);
  kit.candidate(middle.length);
  if (middle.length > 0) {
    // A step summary that stage 3 merged into a critical message before the tail (ours, not
    // the caller's text) is merged too: its text with the rest, and the originals it names
    // listed where it stood, so that the merge's one index names everything before the tail.
    const gone = new Set(middle);
    const items: (Message | string)[] = [];
    const texts: string[] = [];
    // Failures stay visible through the merge: each failed step's call id and error head (from
    // the steps, then the failed calls of each step summary merged, in order) on a line of its own.
    const failures: string[] = [];
    const carried: Part[] = [];
    const goneSteps = w.steps.filter((st) => gone.has(st.resultMessage ?? st.callMessage ?? -1));
    for (const st of goneSteps) if (!st.success) failures.push(`${st.callId ?? st.id} (${st.error ?? "failed"})`);
    for (let i = 0; i < tail; i++) {
      const m = w.msgs[i];
      if (gone.has(i)) {
        items.push(m);
        // A ledger is not summarised again: it moves, whole, ahead of the merged summary.
        carried.push(...m.parts.filter(isLedgerPart));
        // A call's secret-named argument values never reach the summary (shapes are the summariser's to redact).
        const parts = m.parts.filter((p) => !isLedgerPart(p)).map((p) => (p.type === "tool-call" ? { ...p, args: redactArgumentText(p.args) } : p));
        texts.push(...messageTexts([{ ...m, parts }]));
        for (const p of m.parts) {
          const mark = markOf(p);
          if (mark?.kind === "step-summary") failures.push(...mark.failed);
        }
        continue;
      }
      const at = w.classes[i] === "critical" && m.parts.length > 1 ? m.parts.findIndex(isStepSummaryPart) : -1;
      if (at < 0) continue;
      const summary = markOf(m.parts[at]);
      if (summary?.kind !== "step-summary") continue;
      items.push(...indexedRefs(kit.store, summary.ref));
      texts.push((m.parts[at] as { text: string }).text);
      failures.push(...summary.failed);
      kit.replace(w, i, m.parts.filter((_, k) => k !== at));
      // Its index is superseded by the merge's, which names the same messages.
      w.refs = w.refs.filter((r) => r !== summary.ref);
    }
    const { ref, refs } = putMessages(kit.store, items);
    w.refs.push(ref, ...refs.filter((_, k) => typeof items[k] !== "string"));
    const text = texts.join("\n");
    const failLine = failures.length === 0 ? "" : `\nFailed: ${[...new Set(failures)].slice(0, 20).join("; ")}${failures.length > 20 ? `; +${failures.length - 20} more` : ""}`;
    const target = Math.min(s.mergeTokens, Math.max(60, Math.floor((budget - kit.measure.all(kit.criticalSet(w.msgs, w.classes))) / 4)));
    const summary = (await kit.summarize(text, target, "merge")).text;
    const merged: Message = {
      id: `ctxfold-merge-${hashToHex(hashText(summary)).slice(0, 12)}`,
      role: "user",
      parts: [...carried, marked({ type: "text", text: `[Earlier context, merged: ${items.length} messages; originals: ${ref}]${failLine}\n${summary}` }, { kind: "merge", ref, failed: [...new Set(failures)] })],
      meta: { ctxfold: { kind: "merge", ref } },
    };
    const out: Message[] = [];
    const gapBefore: boolean[] = [];
    let gap = false;
    w.msgs.forEach((m, i) => {
      if (i === middle[0]) {
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
    w.msgs.splice(0, w.msgs.length, ...mergeAdjacent(out, gapBefore));
    kit.relist(w);
    writeLedger(kit, w, { messages: items.filter((x): x is Message => typeof x !== "string"), steps: goneSteps });
    w.compacted += middle.length;
    if (kit.report) kit.report.compacted += middle.length;
  }
  // Still over budget: the arguments of every remaining call, the latest exchange's included
  // (a critical message's text stays; its calls' arguments are trace, not critical text)…
  if (w.total > budget) {
    const target = w.target;
    w.target = budget;
    compactToolArgs(kit, w, w.msgs.length, true);
    w.target = target;
  }
  // …then the remaining tool outputs, newest last, summarised within what is left.
  for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
    const m = w.msgs[i];
    if (!m.parts.some((p) => p.type === "tool-result")) continue;
    const over = w.total - Math.floor(s.targetRatio * budget);
    const parts: Part[] = [];
    let changed = false;
    for (const p of m.parts) {
      if (p.type !== "tool-result") {
        parts.push(p);
        continue;
      }
      const text = resultText(p.content);
      const tokens = kit.measure.text(text);
      if (tokens <= 60) {
        parts.push(p);
        continue;
      }
      // A failed output keeps its failure visible whole (call id and error head) above the
      // summary, which gets the rest of the room: an error line cut to fit is not visible.
      const failure = failureLine(p, text);
      const room = Math.max(60, tokens - over) - (failure ? kit.measure.text(failure) + 1 : 0);
      const summary = await kit.summarize(resultPayload(p.content).data, Math.max(20, room), `output:${p.name ?? "tool"}`);
      w.refs.push(summary.ref);
      parts.push({ ...p, content: [{ type: "text", text: failure ? `${failure}\n${summary.text}` : summary.text }] });
      changed = true;
    }
    if (changed) kit.replace(w, i, parts);
  }
  // Then a merged summary already in place (from an earlier pass) is summarised tighter,
  // keeping its header and failure line…
  for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
    const m = w.msgs[i];
    const at = m.parts.findIndex((p) => markOf(p)?.kind === "merge");
    const mark = at < 0 ? undefined : markOf(m.parts[at]);
    if (mark?.kind !== "merge") continue;
    const old = (m.parts[at] as { text: string }).text;
    const lines = old.split("\n");
    // The header, and the failure line when there were failures.
    const head = mark.failed.length > 0 ? 2 : 1;
    const body = lines.slice(head).join("\n");
    const tokens = kit.measure.text(body);
    const want = Math.max(20, tokens - (w.total - budget) - 8);
    if (want >= tokens) continue;
    const shorter = summarizeExtractive(body, want, "merge", kit.counter);
    const parts = [...m.parts];
    parts[at] = { ...(m.parts[at] as { type: "text"; text: string }), text: [...lines.slice(0, head), shorter].join("\n") };
    kit.replace(w, i, parts);
  }
  // Then the ledger keeps only its error lines (or goes, when it has none)…
  if (w.total > budget) shrinkLedger(kit, w);
  // Last, a step summary that stage 3 merged into a critical message shrinks (it is ours, not
  // the caller's critical text): to its failure lines and refs, then to the failed call ids and
  // the ref of the removed messages, then to that ref alone. It never goes: that ref is how
  // the messages it stands for are reached from the output (where there was a middle to
  // merge, the merge above took it in, with them); the budget may then be infeasible.
  for (let level = 0; level < 3; level++) {
    for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
      const m = w.msgs[i];
      const at = m.parts.findIndex(isStepSummaryPart);
      if (at < 0) continue;
      const old = (m.parts[at] as { text: string }).text;
      const kept = stepSummaryShrinks(old)[level];
      if (kept.length >= old.length) continue;
      const parts = [...m.parts];
      parts[at] = { ...(m.parts[at] as { type: "text"; text: string }), text: kept };
      kit.replace(w, i, parts);
    }
  }
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
