import { hashText, hashToHex } from "../../core/hash.js";
import type { ResultContentPart, ToolResultPart } from "../../model/schema.js";
import { extractSteps, resultPayload, resultText } from "../../steps/reducer.js";
import type { ReducedStep } from "../../steps/types.js";
import { Focus, focusTerms } from "../relevance/focus.js";
import { findSuperseded, type Supersession } from "../relevance/supersede.js";
import { refLine, tailStart, type Replacement, type StageKit, type Work } from "../work.js";
import { skipWhenTracesSuperseded } from "./plan.js";
import { defineStage } from "./stage.js";

/** A part stage 2 gave focus lines: where it is, and its replacement without them. */
interface Focused {
  message: number;
  callId: string;
  plain: Replacement;
}

/** Stage 2, on the work before the preserved tail; no_gain where the plan found stage 3 would replace it. */
export const toolOutputsStage = defineStage({
  stage: 2,
  name: "tool_outputs",
  essential: true,
  skip: skipWhenTracesSuperseded,
  run: (kit, w, ctx) => compactToolOutputs(kit, w, tailStart(w, ctx.preserve)),
});

/**
 * Stage 2: tool outputs above outputTokens before the tail become shorter stand-ins with the
 * ref of the original, oldest first, until the work is at its target: each its step's
 * observation with its lines on the work's focus (relevance/focus.ts; settings.focusTokens). Critical
 * messages keep theirs. When every candidate is replaced and the work is still above its
 * target, the focus lines go again, oldest first, until it is at the target: stage 3 would
 * otherwise replace the whole history where the observations alone would have done.
 * With `supersede`, an output a later step made stale (relevance/supersede.ts: read again, run again,
 * listed again, edited) becomes one line naming what superseded it instead, and once stage 2
 * runs every stale output before the tail goes, whatever its age, target reached or not: what
 * a later step shows again is not worth its tokens. The outputs still current go oldest first
 * as before, so an epoch's compacted prefix still grows from the front and the next epoch keeps
 * it (taking the stale ones first instead would leave older current outputs whole, for the next
 * epoch to change early in the prompt). Supersession compares the calls' arguments as the agent
 * wrote them: the work's input, while it is index for index the work's list (whose calls stage
 * 1 may have shortened).
 */
export function compactToolOutputs(kit: StageKit, w: Work, tail: number): void {
  const s = kit.settings;
  const stale = new Map<string, Supersession>();
  if (s.supersede)
    for (const x of findSuperseded(w.steps, w.input.length === w.msgs.length ? w.input : w.msgs, w.classes, tail)) stale.set(`${x.message}:${x.callId}`, x);
  // The observations were made once, from the original outputs (w.steps); a result whose step
  // is not there (its call was compacted away) is reduced on its own.
  const reduced = new Map<string, ReducedStep>();
  for (const st of w.steps) if (st.callId !== undefined && st.resultMessage !== undefined) reduced.set(`${st.resultMessage}:${st.callId}`, st);
  let calls: Map<string, { name: string; args: string }> | undefined;
  const focus = s.focusTokens > 0 ? new Focus(focusTerms(w.msgs, tail)) : undefined;
  const focused: Focused[] = [];
  for (let i = 0; i < w.msgs.length && w.total > w.target; i++) {
    const m = w.msgs[i];
    if (!m.parts.some((p) => p.type === "tool-result")) continue;
    if (i >= tail || w.classes[i] === "critical") {
      kit.skip("policy_preserve");
      continue;
    }
    let changed = false;
    const parts = m.parts.map((p) => {
      if (p.type !== "tool-result") return p;
      kit.candidate();
      const { data, json } = resultPayload(p.content);
      if (data.startsWith("[ctxfold]") || kit.measure.text(resultText(p.content)) <= s.outputTokens) {
        kit.skip("no_gain");
        return p;
      }
      const sup = stale.get(`${i}:${p.callId}`);
      const plain = sup
        ? supersededLine(kit, sup.reason, w.steps[sup.step], p.callId, data, json)
        : kit.observation(p, data, json, () => {
            const step = reduced.get(`${i}:${p.callId}`);
            if (step) return step;
            calls ??= new Map(extractSteps(w.msgs).steps.map(({ call }) => [call.id, { name: call.name, args: call.args }]));
            const call = calls.get(p.callId) ?? { name: p.name ?? "unknown_tool", args: "{}" };
            return kit.reducer.reduce(call.name, call.args, p.content, { isError: p.isError });
          });
      const replacement = focus && !sup ? kit.withFocusLines(p, data, json, plain, focus) : plain;
      if (replacement !== plain) focused.push({ message: i, callId: p.callId, plain });
      kit.addRefs(w, replacement.ref);
      changed = true;
      return withText(p, replacement.text);
    });
    if (changed) kit.replace(w, i, parts);
  }
  for (const f of focused) {
    if (w.total <= w.target) break;
    const parts = w.msgs[f.message].parts.map((p) => (p.type === "tool-result" && p.callId === f.callId ? withText(p, f.plain.text) : p));
    kit.replace(w, f.message, parts, false);
  }
  if (stale.size > 0) replaceStale(kit, w, stale);
}

/** The superseded outputs above outputTokens still whole, each replaced by its line. */
function replaceStale(kit: StageKit, w: Work, stale: ReadonlyMap<string, Supersession>): void {
  for (const sup of stale.values()) {
    const m = w.msgs[sup.message];
    const k = m.parts.findIndex((p) => p.type === "tool-result" && p.callId === sup.callId);
    if (k < 0) continue;
    const p = m.parts[k] as ToolResultPart;
    const { data, json } = resultPayload(p.content);
    if (data.startsWith("[ctxfold]")) continue;
    kit.candidate();
    if (kit.measure.text(resultText(p.content)) <= kit.settings.outputTokens) {
      kit.skip("no_gain");
      continue;
    }
    const replacement = supersededLine(kit, sup.reason, w.steps[sup.step], p.callId, data, json);
    kit.addRefs(w, replacement.ref);
    const parts = [...m.parts];
    parts[k] = withText(p, replacement.text);
    kit.replace(w, sup.message, parts);
  }
}

/**
 * A superseded output's stand-in (memoised): what superseded it, for a failure its error head
 * and call id (a failure stays visible), and the ref of the output.
 */
function supersededLine(kit: StageKit, reason: string, st: ReducedStep, callId: string, data: string, json: boolean): Replacement {
  const head = `[ctxfold] superseded: ${reason}${st.success ? "" : ` (failed: ${st.error ?? "error"}; call ${callId})`}`;
  const key = `${hashToHex(hashText(data))}:superseded:${callId}:${head}`;
  let replacement = kit.memoGet(key);
  if (replacement === undefined) {
    const ref = kit.store.put(data, { kind: "output", ext: json ? "json" : "txt" });
    replacement = { text: `${head}\n${refLine("full output", ref)}`, ref };
    kit.memoSet(key, replacement);
  }
  return replacement;
}

const withText = (p: ToolResultPart, text: string): ToolResultPart => {
  const content: ResultContentPart[] = [{ type: "text", text }];
  return { ...p, content };
};
