import { compactionBoundary, holdsServerContext, serverContextKind } from "../adapters/server-context.js";
import type { Message, Part } from "../model/schema.js";
import { putMessages } from "../store/messages.js";
import { hashText, hashToHex } from "../core/hash.js";
import { mergeAdjacent } from "../model/adjacent.js";
import { markOf, marked } from "../model/marks.js";
import { StepCompactor, formatForPrompt, shouldCompact, type CompactedHistory } from "./compactor.js";
import type { StepCompactionInput } from "./config.js";
import { StepReducer, type StepReducerOptions } from "./reducer.js";
import { argumentSecrets, redactEchoes } from "./redact.js";
import type { ReducedStep } from "./types.js";

export interface StepMessagesOptions {
  /** The reducer (its store receives the offloads), or options for a new one. @default a new StepReducer with its defaults */
  reducer?: StepReducer | StepReducerOptions;
  /** The compactor, or its config. @default a new StepCompactor with its defaults */
  compactor?: StepCompactor | StepCompactionInput;
  /**
   * Also reduce the recent steps: a recent result whose output was offloaded becomes its
   * observation and ref. Off: the step compactor keeps recent steps in full detail.
   * @default false
   */
  reduceRecent?: boolean;
  /** Compact even at or below the compactor's trigger (the step compactor: more than 5 steps). @default false */
  force?: boolean;
  /**
   * The steps of `messages`, already reduced (ids, callMessage / resultMessage indices into
   * `messages`): the tiered policy reduces the original outputs once and compacts messages whose
   * outputs it has already shortened.
   * @default those reduced from `messages` by the reducer
   */
  steps?: readonly ReducedStep[];
}

export interface StepMessagesResult {
  messages: Message[];
  /** Whether anything was compacted (false below the trigger). */
  compacted: boolean;
  history: CompactedHistory;
  /** Every step, reduced (ids, observations, refs). */
  steps: ReducedStep[];
  /**
   * The ref of the removed messages when anything was removed: an index of them, each stored
   * whole (`getMessages(store, removedRef)` gives them back); `removedRefs` are the messages' own refs.
   */
  removedRef?: string;
  removedRefs?: string[];
}

/** Marks the summary message a compaction inserted (in `meta.ctxfold`). */
export const kStepSummaryKind = "step-summary" as const;

/** Whether `p` is the text of a step summary (which stays a part of its own when merged into a message). */
export const isStepSummaryPart = (p: Part): boolean => markOf(p)?.kind === kStepSummaryKind;

/**
 * A step summary's text made shorter, step by step, for a prompt that must shrink further: its
 * failure lines and refs (failed steps, failed calls, removed messages, the omitted count); then
 * the failed call ids and the ref of the removed messages; then that ref alone. The heading
 * line always stays.
 */
export function stepSummaryShrinks(text: string): string[] {
  const lines = text.split("\n");
  return [/✗|\(failed calls|\(removed messages|earlier steps omitted/, /\(failed calls|\(removed messages/, /\(removed messages/].map((keep) =>
    lines.filter((l, k) => k === 0 || keep.test(l)).join("\n"),
  );
}

/**
 * Call ids per message index: which tool-call or tool-result parts of which message. A message
 * with one such part (the common case) holds its entry as is, without a map of its own.
 */
class PartSet<T = true> {
  readonly #at = new Map<number, { id: string; value: T } | Map<string, T>>();
  set(message: number, id: string, value: T): void {
    const m = this.#at.get(message);
    if (m === undefined || (!(m instanceof Map) && m.id === id)) this.#at.set(message, { id, value });
    else if (m instanceof Map) m.set(id, value);
    else this.#at.set(message, new Map([[m.id, m.value], [id, value]]));
  }
  get(message: number, id: string): T | undefined {
    const m = this.#at.get(message);
    return m === undefined ? undefined : m instanceof Map ? m.get(id) : m.id === id ? m.value : undefined;
  }
  /** Whether anything is recorded for this message (the common case: no). */
  touches(message: number): boolean {
    return this.#at.has(message);
  }
}

/**
 * The step compactor at message level: the steps of the compact and dropped tiers
 * leave the message list and one summary message takes the place of the first of them, with
 * the design's "Previous actions (summarized):" section and the ref under which the removed
 * messages are stored whole (nothing removed is lost). Recent steps stay as they were.
 *
 * Tool-pair validity is kept by construction: a call and its result always leave together;
 * an assistant message whose calls all left goes with them (its text is that step's thought,
 * which the summary line replaces); messages that are not steps (user turns, assistant text)
 * stay in place. Where removal would put two user or two assistant messages side by side, the
 * later is merged into the earlier, so role alternation holds wherever it held before.
 *
 * A provider's compaction (adapters/server-context.ts) never leaves: a message holding one
 * whose calls all left keeps that part alone (the step's reasoning and text go with the step),
 * and the summary never stands before the latest one when it summarises steps after it (the
 * provider reads from there on): it goes right after that message and the results answering
 * it.
 */
export function compactStepMessages(messages: readonly Message[], options: StepMessagesOptions = {}): StepMessagesResult {
  const reducer = options.reducer instanceof StepReducer ? options.reducer : new StepReducer(options.reducer);
  const compactor = options.compactor instanceof StepCompactor ? options.compactor : new StepCompactor(options.compactor);
  const steps = options.steps ? [...options.steps] : reducer.reduceMessages(messages);
  const untouched = (): StepMessagesResult => ({ messages: [...messages], compacted: false, history: { recentSteps: steps, compactSteps: [], droppedCount: 0 }, steps });
  if (!options.force && !shouldCompact(steps, compactor.config)) return untouched();
  const history = compactor.compact(steps);
  const recent = new Set(history.recentSteps.map((s) => s.id));
  const gone = steps.filter((s) => !recent.has(s.id));
  if (gone.length === 0) return untouched();

  const removeCalls = new PartSet();
  const removeResults = new PartSet();
  for (const s of gone) {
    if (s.callId === undefined) continue;
    if (s.callMessage !== undefined) removeCalls.set(s.callMessage, s.callId, true);
    if (s.resultMessage !== undefined) removeResults.set(s.resultMessage, s.callId, true);
  }
  const reduceRecent = new PartSet<ReducedStep>();
  if (options.reduceRecent) {
    for (const s of history.recentSteps) {
      if (s.outcomeRef && s.callId !== undefined && s.resultMessage !== undefined) reduceRecent.set(s.resultMessage, s.callId, s);
    }
  }

  const out: Message[] = [];
  const removed: Message[] = [];
  /** Output index → whether a removal happened right before it (for the adjacency merge). */
  const gapBefore: boolean[] = [];
  let insertAt = -1;
  let gap = false;
  const boundary = compactionBoundary(messages);
  /** Where the latest compaction's message is in `out`, and whether a step after it is removed. */
  let boundaryAt = -1;
  let after = false;
  messages.forEach((m, i) => {
    let parts: Part[] = m.parts;
    let changed = false;
    let lostCalls = false;
    if (removeCalls.touches(i) || removeResults.touches(i) || reduceRecent.touches(i)) {
      parts = [];
      for (const p of m.parts) {
        if (p.type === "tool-call" && removeCalls.get(i, p.id)) { lostCalls = true; changed = true; continue; }
        if (p.type === "tool-result" && removeResults.get(i, p.callId)) { changed = true; continue; }
        const recent = p.type === "tool-result" ? reduceRecent.get(i, p.callId) : undefined;
        if (p.type === "tool-result" && recent) {
          parts.push({ ...p, content: [{ type: "text", text: `${recent.observation}\n(full output: ${recent.outcomeRef})` }] });
          continue;
        }
        parts.push(p);
      }
    }
    const keepsCalls = parts.some((p) => p.type === "tool-call");
    let dropWhole = changed && (parts.length === 0 || (lostCalls && !keepsCalls) || !parts.some((p) => p.type !== "reasoning"));
    if (dropWhole && holdsServerContext(m)) {
      parts = parts.filter((p) => serverContextKind(p) !== undefined);
      dropWhole = false;
    }
    if (changed) {
      removed.push(m);
      if (insertAt < 0) insertAt = out.length;
      if (boundary >= 0 && i > boundary) after = true;
    }
    if (i === boundary) boundaryAt = out.length;
    if (dropWhole) {
      gap = true;
      return;
    }
    out.push(parts === m.parts ? m : { ...m, parts });
    gapBefore.push(gap);
    gap = false;
  });

  const store = reducer.store;
  const { ref: removedRef, refs: removedRefs } = putMessages(store, removed);
  const section = formatForPrompt({ ...history, recentSteps: [] }).trimEnd();
  // Failed steps name their tool call ids too, so a failure stays traceable to its call.
  const failed = gone.filter((s) => !s.success && s.callId !== undefined).map((s) => s.callId!);
  // Each step's lines are redacted by the reducer; a step's output may also repeat another call's secret argument.
  const text = redactEchoes(`${section}\n${failed.length > 0 ? `  (failed calls: ${failed.join(", ")})\n` : ""}  (removed messages: ${removedRef})`, argumentSecrets(messages));
  const summary: Message = {
    id: `ctxfold-steps-${hashToHex(hashText(text))}`,
    role: "user",
    parts: [marked({ type: "text", text }, { kind: kStepSummaryKind, ref: removedRef, failed })],
    meta: { ctxfold: { kind: kStepSummaryKind, steps: gone.map((s) => s.id), ref: removedRef } },
  };
  if (after && insertAt <= boundaryAt) {
    insertAt = boundaryAt + 1;
    while (insertAt < out.length && out[insertAt].role === "tool") insertAt++;
  }
  out.splice(insertAt, 0, summary);
  gapBefore.splice(insertAt, 0, true);
  if (insertAt + 1 < gapBefore.length) gapBefore[insertAt + 1] = true;

  // Merge what removal made adjacent: user + user, assistant + assistant.
  return { messages: mergeAdjacent(out, gapBefore), compacted: true, history, steps, removedRef, removedRefs };
}
