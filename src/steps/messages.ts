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
    else
      this.#at.set(
        message,
        new Map([
          [m.id, m.value],
          [id, value],
        ]),
      );
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
  const untouched = (): StepMessagesResult => ({
    messages: [...messages],
    compacted: false,
    history: { recentSteps: steps, compactSteps: [], droppedCount: 0 },
    steps,
  });
  if (!options.force && !shouldCompact(steps, compactor.config)) return untouched();
  const history = compactor.compact(steps);
  const recent = new Set(history.recentSteps.map((s) => s.id));
  const gone = steps.filter((s) => !recent.has(s.id));
  if (gone.length === 0) return untouched();

  const removal = removeMarked(messages, markParts(gone, history.recentSteps, options.reduceRecent));
  const { ref: removedRef, refs: removedRefs } = putMessages(reducer.store, removal.removed);
  insertSummary(removal, stepSummary(messages, history, gone, removedRef));
  // Merge what removal made adjacent: user + user, assistant + assistant.
  return { messages: mergeAdjacent(removal.out, removal.gapBefore), compacted: true, history, steps, removedRef, removedRefs };
}

/** The parts a compaction touches: the calls and results of the steps that leave, and the recent results it reduces. */
interface PartMarks {
  removeCalls: PartSet;
  removeResults: PartSet;
  reduceRecent: PartSet<ReducedStep>;
}

/** Marks the parts of the steps that leave (`gone`), and with `reduceRecent` the recent results whose output was offloaded. */
function markParts(gone: readonly ReducedStep[], recentSteps: readonly ReducedStep[], reduceRecent: boolean | undefined): PartMarks {
  const removeCalls = new PartSet();
  const removeResults = new PartSet();
  for (const s of gone) {
    if (s.callId === undefined) continue;
    if (s.callMessage !== undefined) removeCalls.set(s.callMessage, s.callId, true);
    if (s.resultMessage !== undefined) removeResults.set(s.resultMessage, s.callId, true);
  }
  const recent = new PartSet<ReducedStep>();
  if (reduceRecent) {
    for (const s of recentSteps) {
      if (s.outcomeRef && s.callId !== undefined && s.resultMessage !== undefined) recent.set(s.resultMessage, s.callId, s);
    }
  }
  return { removeCalls, removeResults, reduceRecent: recent };
}

/**
 * Message i's parts without the marked calls and results, a reduced recent result as its
 * observation and ref: `changed` when a part left, `lostCalls` when a call did.
 */
function remainingParts(m: Message, i: number, marks: PartMarks): { parts: Part[]; changed: boolean; lostCalls: boolean } {
  const { removeCalls, removeResults, reduceRecent } = marks;
  if (!removeCalls.touches(i) && !removeResults.touches(i) && !reduceRecent.touches(i)) return { parts: m.parts, changed: false, lostCalls: false };
  const parts: Part[] = [];
  let changed = false;
  let lostCalls = false;
  for (const p of m.parts) {
    if (p.type === "tool-call" && removeCalls.get(i, p.id)) {
      lostCalls = true;
      changed = true;
      continue;
    }
    if (p.type === "tool-result" && removeResults.get(i, p.callId)) {
      changed = true;
      continue;
    }
    const recent = p.type === "tool-result" ? reduceRecent.get(i, p.callId) : undefined;
    if (p.type === "tool-result" && recent) {
      parts.push({ ...p, content: [{ type: "text", text: `${recent.observation}\n(full output: ${recent.outcomeRef})` }] });
      continue;
    }
    parts.push(p);
  }
  return { parts, changed, lostCalls };
}

/**
 * What is left of message i: its remaining parts, or undefined when it leaves whole (nothing
 * left, its calls all left, or only reasoning left), except that a message holding a provider's
 * compaction keeps that part alone; `changed` when a part left.
 */
function leftOf(m: Message, i: number, marks: PartMarks): { parts: Part[] | undefined; changed: boolean } {
  const { parts, changed, lostCalls } = remainingParts(m, i, marks);
  const keepsCalls = parts.some((p) => p.type === "tool-call");
  const dropWhole = changed && (parts.length === 0 || (lostCalls && !keepsCalls) || !parts.some((p) => p.type !== "reasoning"));
  if (dropWhole && holdsServerContext(m)) return { parts: parts.filter((p) => serverContextKind(p) !== undefined), changed };
  return { parts: dropWhole ? undefined : parts, changed };
}

/** The messages with the marked parts removed, and where the summary goes. */
interface Removal {
  out: Message[];
  /** Output index → whether a removal happened right before it (for the adjacency merge). */
  gapBefore: boolean[];
  /** The original messages a part left, each whole. */
  removed: Message[];
  /** The output index of the first message a part left. */
  insertAt: number;
  /** Where the latest compaction's message is in `out` (-1: none), and whether a step after it is removed. */
  boundaryAt: number;
  removesAfterBoundary: boolean;
}

/** Removes the marked parts, message by message, and the messages left with nothing to stand for. */
function removeMarked(messages: readonly Message[], marks: PartMarks): Removal {
  const r: Removal = { out: [], gapBefore: [], removed: [], insertAt: -1, boundaryAt: -1, removesAfterBoundary: false };
  let gap = false;
  const boundary = compactionBoundary(messages);
  messages.forEach((m, i) => {
    const { parts, changed } = leftOf(m, i, marks);
    if (changed) {
      r.removed.push(m);
      if (r.insertAt < 0) r.insertAt = r.out.length;
      if (boundary >= 0 && i > boundary) r.removesAfterBoundary = true;
    }
    if (i === boundary) r.boundaryAt = r.out.length;
    if (parts === undefined) {
      gap = true;
      return;
    }
    r.out.push(parts === m.parts ? m : { ...m, parts });
    r.gapBefore.push(gap);
    gap = false;
  });
  return r;
}

/**
 * The summary message: the design's "Previous actions (summarized):" section of the compact and
 * dropped tiers, the failed steps' call ids, and the ref of the removed messages.
 */
function stepSummary(messages: readonly Message[], history: CompactedHistory, gone: readonly ReducedStep[], removedRef: string): Message {
  const section = formatForPrompt({ ...history, recentSteps: [] }).trimEnd();
  // Failed steps name their tool call ids too, so a failure stays traceable to its call.
  const failed = gone.filter((s) => !s.success && s.callId !== undefined).map((s) => s.callId!);
  // Each step's lines are redacted by the reducer; a step's output may also repeat another call's secret argument.
  const text = redactEchoes(
    `${section}\n${failed.length > 0 ? `  (failed calls: ${failed.join(", ")})\n` : ""}  (removed messages: ${removedRef})`,
    argumentSecrets(messages),
  );
  return {
    id: `ctxfold-steps-${hashToHex(hashText(text))}`,
    role: "user",
    parts: [marked({ type: "text", text }, { kind: kStepSummaryKind, ref: removedRef, failed })],
    meta: { ctxfold: { kind: kStepSummaryKind, steps: gone.map((s) => s.id), ref: removedRef } },
  };
}

/**
 * Puts the summary where the first removed step was; when it summarises steps after the latest
 * compaction and would stand before it, right after that message and the results answering it
 * instead. A removal counts on both sides of it for the adjacency merge.
 */
function insertSummary(r: Removal, summary: Message): void {
  let at = r.insertAt;
  if (r.removesAfterBoundary && at <= r.boundaryAt) {
    at = r.boundaryAt + 1;
    while (at < r.out.length && r.out[at].role === "tool") at++;
  }
  r.out.splice(at, 0, summary);
  r.gapBefore.splice(at, 0, true);
  if (at + 1 < r.gapBefore.length) r.gapBefore[at + 1] = true;
}
