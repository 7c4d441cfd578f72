import { hashText, hashToHex } from "../../core/hash.js";
import type { Message, ResultContentPart, ToolResultPart } from "../../model/schema.js";
import { extractSteps, resultPayload, resultText } from "../../steps/reducer.js";
import type { ReducedStep } from "../../steps/types.js";
import { findSuperseded } from "../supersede.js";
import { refLine, type Replacement, type StageKit, type Work } from "../work.js";

/**
 * Stage 2: tool outputs above outputTokens before the tail become shorter stand-ins with the
 * ref of the original, until the work is at its target. With `supersede`, the outputs later
 * steps made stale (supersede.ts: read again, run again, listed again, edited) go first,
 * whatever their age, each as one line saying what superseded it; then the rest, oldest first,
 * as their step's observation. Critical messages keep theirs. `input` is the list as the call
 * gave it (index for index the work's, whose calls stage 1 may have shortened): supersession
 * compares the calls' arguments as the agent wrote them.
 */
export function compactToolOutputs(kit: StageKit, w: Work, tail: number, input: readonly Message[] = w.msgs): void {
  const s = kit.settings;
  if (s.supersede) replaceSuperseded(kit, w, tail, input.length === w.msgs.length ? input : w.msgs);
  // The observations were made once, from the original outputs (w.steps); a result whose step
  // is not there (its call was compacted away) is reduced on its own.
  const reduced = new Map<string, ReducedStep>();
  for (const st of w.steps) if (st.callId !== undefined && st.resultMessage !== undefined) reduced.set(`${st.resultMessage}:${st.callId}`, st);
  let calls: Map<string, { name: string; args: string }> | undefined;
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
      const replacement = kit.observation(p, data, json, () => {
        const step = reduced.get(`${i}:${p.callId}`);
        if (step) return step;
        calls ??= new Map(extractSteps(w.msgs).steps.map(({ call }) => [call.id, { name: call.name, args: call.args }]));
        const call = calls.get(p.callId) ?? { name: p.name ?? "unknown_tool", args: "{}" };
        return kit.reducer.reduce(call.name, call.args, p.content, { isError: p.isError });
      });
      w.refs.push(replacement.ref);
      changed = true;
      return withText(p, replacement.text);
    });
    if (changed) kit.replace(w, i, parts);
  }
}

function withText(p: ToolResultPart, text: string): ToolResultPart {
  const content: ResultContentPart[] = [{ type: "text", text }];
  return { ...p, content };
}

/**
 * The superseded outputs above outputTokens before the tail, oldest first, each replaced by one
 * line, until the work is at its target. The same threshold as the observations': a smaller
 * stale output left whole would otherwise be all that stands between stage 2 reaching the
 * target and stage 3 collapsing the old steps, and which of the two happens decides the cost
 * of the epochs after.
 */
function replaceSuperseded(kit: StageKit, w: Work, tail: number, input: readonly Message[]): void {
  for (const sup of findSuperseded(w.steps, input, w.classes, tail)) {
    if (w.total <= w.target) break;
    const m = w.msgs[sup.message];
    const k = m.parts.findIndex((p) => p.type === "tool-result" && p.callId === sup.callId);
    if (k < 0) continue;
    const p = m.parts[k] as ToolResultPart;
    kit.candidate();
    const { data, json } = resultPayload(p.content);
    if (data.startsWith("[ctxfold]") || kit.measure.text(resultText(p.content)) <= kit.settings.outputTokens) {
      kit.skip("no_gain");
      continue;
    }
    const replacement = supersededLine(kit, sup.reason, w.steps[sup.step], p.callId, data, json);
    w.refs.push(replacement.ref);
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
