import { hashText, hashToHex } from "../../core/hash.js";
import type { ToolCallPart } from "../../model/schema.js";
import { tailStart, type StageKit, type Work } from "../work.js";
import { skipWhenTracesSuperseded } from "./plan.js";
import { defineStage } from "./stage.js";

/** Stage 1, on the work before the preserved tail; no_gain where the plan found stage 3 would replace it. */
export const toolArgsStage = defineStage({
  stage: 1,
  name: "tool_args",
  essential: true,
  skip: skipWhenTracesSuperseded,
  run: (kit, w, ctx) => compactToolArgs(kit, w, tailStart(w, ctx.preserve), w.target),
});

/**
 * Stage 1: long tool-call arguments before the tail (`tail`: where the preserved tail starts)
 * become their minimal arguments plus the ref of the original, oldest first, until the work is
 * at `target` (stage 1's is the work's own; stage 4's last resort passes the budget).
 * `includeCritical` takes critical messages' calls too (stage 4's last resort: a critical
 * message's text stays, its calls' arguments are trace), and then every call whose minimal
 * arguments are shorter, however short its arguments were.
 */
export function compactToolArgs(kit: StageKit, w: Work, tail: number, target: number, includeCritical = false): void {
  const s = kit.settings;
  const reduced = new Map(w.steps.filter((x) => x.callId !== undefined).map((x) => [`${x.callMessage}:${x.callId}`, x]));
  for (let i = 0; i < w.msgs.length && w.total > target; i++) {
    const m = w.msgs[i];
    if (!m.parts.some((p) => p.type === "tool-call")) continue;
    if (i >= tail || (w.classes[i] === "critical" && !includeCritical)) {
      kit.skip("policy_preserve");
      continue;
    }
    let changed = false;
    const parts = m.parts.map((p) => {
      if (p.type !== "tool-call") return p;
      kit.candidate();
      const tokens = kit.measure.text(p.args);
      if (tokens <= (includeCritical ? 0 : s.argTokens)) {
        kit.skip("no_gain");
        return p;
      }
      const minimal = reduced.get(`${i}:${p.id}`)?.minimalArgs ?? {};
      // Below argTokens (the last resort), only where the stand-in is shorter; decided before the
      // original is stored, with a ref of the usual shape, so that no stored original goes
      // unreferenced.
      if (tokens <= s.argTokens && kit.measure.text(offloadedArgs(minimal, `${kit.store.prefix}args_${kSampleName}.json`)) >= tokens) {
        kit.skip("no_gain");
        return p;
      }
      const key = `${hashToHex(hashText(p.args))}:args:${s.argTokens}`;
      let args = kit.memoGet(key);
      if (args === undefined) {
        const ref = kit.store.put(p.args, { kind: "args", ext: "json" });
        args = { text: offloadedArgs(minimal, ref), ref };
        kit.memoSet(key, args);
      }
      kit.addRefs(w, args.ref);
      changed = true;
      return { ...p, args: args.text } satisfies ToolCallPart;
    });
    if (changed) kit.replace(w, i, parts);
  }
}

/** A content address as refs spell them (32 hex digits), to measure a stand-in before its original is stored. */
const kSampleName = "9f86d081884c7d659a2feaa0c55ad015";

/** A call's stand-in arguments: its minimal arguments and the ref of the original. */
const offloadedArgs = (minimal: Record<string, unknown>, ref: string) => JSON.stringify({ ...minimal, _ctxfold: `arguments offloaded: ${ref}` });
