import type { ResultContentPart, ToolResultPart } from "../../model/schema.js";
import { extractSteps, resultPayload, resultText } from "../../steps/reducer.js";
import type { ReducedStep } from "../../steps/types.js";
import { Focus, focusTerms } from "../focus.js";
import type { Replacement, StageKit, Work } from "../work.js";

/** A part stage 2 gave focus lines: where it is, and its replacement without them. */
interface Focused {
  message: number;
  callId: string;
  plain: Replacement;
}

/**
 * Stage 2: tool outputs before the tail, oldest first, become their step's observation, their
 * lines on the work's focus (focus.ts; settings.focusTokens) and the ref of the original output,
 * until the work is at its target. Critical messages keep theirs. When every candidate is
 * replaced and the work is still above its target, the focus lines go again, oldest first,
 * until it is at the target: stage 3 would otherwise replace the whole history where the
 * observations alone would have done.
 */
export function compactToolOutputs(kit: StageKit, w: Work, tail: number): void {
  const s = kit.settings;
  // The observations were made once, from the original outputs (w.steps); a result whose step
  // is not there (its call was compacted away) is reduced on its own.
  const reduced = new Map<string, ReducedStep>();
  for (const st of w.steps) if (st.callId !== undefined && st.resultMessage !== undefined) reduced.set(`${st.resultMessage}:${st.callId}`, st);
  let calls: Map<string, { name: string; args: string }> | undefined;
  const focus = s.focusTokens > 0 ? new Focus(focusTerms(w.msgs, tail)) : undefined;
  const focused: Focused[] = [];
  for (let i = w.frozen; i < w.msgs.length && w.total > w.target; i++) {
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
      const plain = kit.observation(p, data, json, () => {
        const step = reduced.get(`${i}:${p.callId}`);
        if (step) return step;
        calls ??= new Map(extractSteps(w.msgs).steps.map(({ call }) => [call.id, { name: call.name, args: call.args }]));
        const call = calls.get(p.callId) ?? { name: p.name ?? "unknown_tool", args: "{}" };
        return kit.reducer.reduce(call.name, call.args, p.content, { isError: p.isError });
      });
      const replacement = focus ? kit.withFocusLines(p, data, json, plain, focus) : plain;
      if (replacement !== plain) focused.push({ message: i, callId: p.callId, plain });
      w.refs.push(replacement.ref);
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
}

const withText = (p: ToolResultPart, text: string): ToolResultPart => {
  const content: ResultContentPart[] = [{ type: "text", text }];
  return { ...p, content };
};
