import type { ResultContentPart } from "../../model/schema.js";
import { extractSteps, resultPayload, resultText } from "../../steps/reducer.js";
import type { ReducedStep } from "../../steps/types.js";
import type { StageKit, Work } from "../work.js";

/**
 * Stage 2: tool outputs before the tail, oldest first, become their step's observation plus the
 * ref of the original output, until the work is at its target. Critical messages keep theirs.
 */
export function compactToolOutputs(kit: StageKit, w: Work, tail: number): void {
  const s = kit.settings;
  // The observations were made once, from the original outputs (w.steps); a result whose step
  // is not there (its call was compacted away) is reduced on its own.
  const reduced = new Map<string, ReducedStep>();
  for (const st of w.steps) if (st.callId !== undefined && st.resultMessage !== undefined) reduced.set(`${st.resultMessage}:${st.callId}`, st);
  let calls: Map<string, { name: string; args: string }> | undefined;
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
      const replacement = kit.observation(p, data, json, () => {
        const step = reduced.get(`${i}:${p.callId}`);
        if (step) return step;
        calls ??= new Map(extractSteps(w.msgs).steps.map(({ call }) => [call.id, { name: call.name, args: call.args }]));
        const call = calls.get(p.callId) ?? { name: p.name ?? "unknown_tool", args: "{}" };
        return kit.reducer.reduce(call.name, call.args, p.content, { isError: p.isError });
      });
      w.refs.push(replacement.ref);
      changed = true;
      const content: ResultContentPart[] = [{ type: "text", text: replacement.text }];
      return { ...p, content };
    });
    if (changed) kit.replace(w, i, parts);
  }
}
