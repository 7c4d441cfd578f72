import type { Message, ResultContentPart } from "../../model/schema.js";
import { resultPayload, resultText } from "../../steps/reducer.js";
import { compactionBoundary } from "../../adapters/server-context.js";
import { opensWithSignedReasoning, turnInProgressOpener, usesThinking } from "../../validate/rules.js";
import { ledgerTokens } from "../relevance/ledger.js";
import { shrinkLedger, type StageKit, type Work } from "../work.js";

/**
 * Extended thinking (Anthropic): a tool-use turn in progress must open with its thinking. When
 * the stages removed the input's opener of that turn (its first assistant message, opening with
 * signed thinking) and the output's turn now opens without thinking (THINKING_DROPPED), the
 * opener goes back where the output's turn starts, whole (its thinking must be sent unmodified),
 * with its results as their observations and refs. Where putting it back would take the output
 * above the soft threshold and the ledger's room would keep it below, the ledger gives up its
 * names first. Left as it was when the opener's calls or results are still elsewhere in the
 * output, when putting it back would take the output above the soft threshold even so, or when
 * the opener stood at or before the input's latest provider compaction (history it supersedes,
 * or the message holding it, which stays in the output).
 */
export function keepThinkingOpener(kit: StageKit, w: Work): void {
  const input = w.input;
  if (!usesThinking(input)) return;
  // Whether or not the turn is in progress yet: the agent's next call will make it so.
  const at = turnInProgressOpener(input, { evenIfDone: true });
  if (at < 0 || at <= compactionBoundary(input) || !opensWithSignedReasoning(input[at]) || w.msgs.includes(input[at])) return;
  const into = turnInProgressOpener(w.msgs, { evenIfDone: true });
  if (into < 0 || opensWithSignedReasoning(w.msgs[into])) return;
  const opener = input[at];
  const ids = new Set(opener.parts.flatMap((p) => (p.type === "tool-call" ? [p.id] : [])));
  if (w.msgs.some((m) => m.parts.some((p) => (p.type === "tool-call" || p.type === "tool-result") && ids.has(p.type === "tool-call" ? p.id : p.callId))))
    return;
  const results: Message[] = [];
  for (let i = at + 1; i < input.length && input[i].role === "tool"; i++) results.push(input[i]);
  const answered = new Set(results.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool-result" ? [p.callId] : []))));
  if ([...ids].some((id) => !answered.has(id))) return;
  const calls = new Map(opener.parts.flatMap((p) => (p.type === "tool-call" ? [[p.id, p] as const] : [])));
  const refs: string[] = [];
  const shortened = results.map((m) => {
    let changed = false;
    const parts = m.parts.map((p) => {
      if (p.type !== "tool-result") return p;
      const { data, json } = resultPayload(p.content);
      if (data.startsWith("[ctxfold]") || kit.measure.text(resultText(p.content)) <= kit.settings.outputTokens) return p;
      const call = calls.get(p.callId)!;
      const replacement = kit.observation(p, data, json, () => kit.reducer.reduce(call.name, call.args, p.content, { isError: p.isError }));
      refs.push(replacement.ref);
      changed = true;
      return { ...p, content: [{ type: "text", text: replacement.text }] as ResultContentPart[] };
    });
    return changed ? { ...m, parts } : m;
  });
  const soft = kit.settings.softRatio * w.budget;
  const withOpener = () => [...w.msgs.slice(0, into), opener, ...shortened, ...w.msgs.slice(into)];
  let msgs = withOpener();
  // Only within the soft threshold: above it the output would not be a fixed point (compacting
  // it again would change it) and could miss the budget. A valid request comes before the
  // ledger's names: where the ledger's room is what the opener lacks, the ledger gives it up
  // (shrinkLedger: only its error lines stay; every fact it named is in the stored messages).
  let total = kit.measure.all(msgs);
  if (total > soft && total - ledgerTokens(w.msgs, (m) => kit.measure.of(m)) <= soft && shrinkLedger(kit, w)) {
    msgs = withOpener();
    total = kit.measure.all(msgs);
  }
  // Where even that is not enough, the gap stays.
  if (total > soft) return;
  kit.addRefs(w, ...refs);
  kit.relist(w, msgs, true);
}
