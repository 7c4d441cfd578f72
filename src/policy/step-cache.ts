import type { Message, ToolCallPart } from "../model/schema.js";
import { prepareMessages } from "../store/messages.js";
import { StepReducer } from "../steps/reducer.js";
import type { ReducedStep } from "../steps/types.js";

/**
 * The step reduction of the messages the tiered policy compacts, memoised so that a growing
 * conversation reduces each step once: per step object pair, and per list (a list that starts
 * with a recent list's messages reuses that list's steps up to its first unanswered call).
 */
export class StepCache {
  /** The reducer of the policy (offloading nothing: observations and minimal arguments only). */
  readonly reducer = new StepReducer({ offload: false });
  /** prepare()'s reducer: the same reductions as `reducer`'s, without touching its step numbering. */
  readonly #prepReducer = new StepReducer({ offload: false });

  /**
   * The two latest lists `reduce` reduced (an epoch reduces its input, then its output) and
   * their steps: `kept` steps sit before message `cut`, from which a longer list is scanned again.
   */
  readonly #lists: { messages: Message[]; steps: ReducedStep[]; cut: number; kept: number }[] = [];

  /** Reduced steps by result part (by call part while unanswered), then by call part. */
  readonly #reduced = new WeakMap<object, WeakMap<object, ReducedStep>>();

  /** The steps of `messages`, reduced. */
  reduce(messages: readonly Message[]): ReducedStep[] {
    // A list that starts with the messages of a recent call (a growing conversation) keeps that
    // call's steps up to its first unanswered call and scans only from there.
    let head: ReducedStep[] = [];
    let from = 0;
    for (const prev of this.#lists) {
      if (prev.messages.length > messages.length || !prev.messages.every((m, i) => m === messages[i])) continue;
      head = prev.steps.slice(0, prev.kept);
      from = prev.cut;
      break;
    }
    // Step ids number the steps of this history from step_001, whatever came before (determinism).
    const tail = this.reducer.restartNumbering(head.length + 1).reduceMessagesWith(
      messages,
      (call, result, reduce) => {
        const byCall = this.#reducedFor(call, result);
        const hit = byCall.get(call);
        if (hit) return hit;
        const r = reduce();
        byCall.set(call, r);
        return r;
      },
      (call, result, placed) => this.#reduced.get(result ?? call)?.set(call, placed),
      from,
    );
    const out = head.length === 0 ? tail : [...head, ...tail];
    // Where a later, longer list must scan from: the last place no step straddles (a call not
    // answered yet, or answered at or after it, would pair differently in a scan from there).
    let cut = messages.length;
    for (let moved = true; moved; ) {
      moved = false;
      for (const st of out) {
        if (st.callMessage === undefined || st.callMessage >= cut || (st.resultMessage !== undefined && st.resultMessage < cut)) continue;
        cut = st.callMessage;
        moved = true;
      }
    }
    let kept = out.findIndex((st) => (st.callMessage ?? st.resultMessage ?? 0) >= cut);
    if (kept < 0) kept = out.length;
    this.#lists.unshift({ messages: [...messages], steps: out, cut, kept });
    this.#lists.length = Math.min(this.#lists.length, 2);
    return out;
  }

  /** The memo of the steps of `result` (of `call` while unanswered), by call part. */
  #reducedFor(call: object, result: object | undefined): WeakMap<object, ReducedStep> {
    const key = result ?? call;
    let byCall = this.#reduced.get(key);
    if (!byCall) this.#reduced.set(key, (byCall = new WeakMap()));
    return byCall;
  }

  /**
   * Work a later epoch over `messages` will need, done ahead (a session calls it in idle time):
   * each step answered in `messages[from..]` reduced and memoised as `reduce` memoises it (the
   * epoch then only places it), and each tool message rendered as putMessages stores it. Stops
   * once `sliceMs` have passed (after one message at least) and returns the index it reached
   * (`messages.length` when done). Output does not depend on whether it ran.
   */
  prepare(messages: readonly Message[], from: number, sliceMs = 2): number {
    const t0 = performance.now();
    let i = from;
    while (i < messages.length) {
      const m = messages[i];
      let trace = false;
      for (const p of m.parts) {
        if (p.type === "tool-call") trace = true;
        if (p.type !== "tool-result") continue;
        trace = true;
        const call = callOf(messages, i, p.callId);
        if (call === undefined) continue;
        const byCall = this.#reducedFor(call.part, p);
        if (!byCall.has(call.part)) byCall.set(call.part, this.#prepReducer.reduceStep({ call: call.part, callMessage: call.at, result: p, resultMessage: i }));
      }
      if (trace) prepareMessages([m]);
      i++;
      if (performance.now() - t0 >= sliceMs) break;
    }
    return i;
  }
}

/** The tool-call part `id` names, searched backwards from message `at` (at most 64 messages). */
function callOf(messages: readonly Message[], at: number, id: string): { part: ToolCallPart; at: number } | undefined {
  for (let i = at - 1; i >= 0 && i >= at - 64; i--) {
    if (messages[i].role !== "assistant") continue;
    for (const p of messages[i].parts) if (p.type === "tool-call" && p.id === id) return { part: p, at: i };
  }
  return undefined;
}
