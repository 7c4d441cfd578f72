/**
 * Next-step evidence recall: of what the agent used in the step after a prompt, how much a
 * compacted prompt still shows. Precisely, for a prompt `messages[0..k)` of a recorded run
 * whose next message `messages[k]` is the assistant's:
 *
 * - **Texts of a message** (`termTexts`): its content text (metrics.ts `contentText`) and the
 *   texts of each tool-call argument (src/model/terms.ts `argumentTexts`: a JSON argument's
 *   string leaves, any other argument as it is).
 * - **Named terms**: the specific terms (src/model/terms.ts: paths, identifiers, symbols,
 *   error names, flags, numbers of 3+ characters) of the next message's texts.
 * - **Evidence** (`nextStepEvidence`): the named terms present (`containsTerm`) in the text of
 *   some prompt message other than the system / developer messages and the task (the first
 *   user message), and present in none of those: what came from the trajectory, not from what
 *   every contender keeps verbatim anyway.
 * - **Kept** (`evidenceKept`): the evidence terms present in the text of some message of the
 *   compacted prompt (any role, summaries and ledgers included; a ref names a stored text and
 *   counts only for the terms its own characters spell: the model reads text).
 * - **Evidence recall** over a set of prompts = Σ kept / Σ evidence (pooled over terms), over
 *   the prompts above the budget that have evidence; null when none has. A prompt with no next
 *   assistant message (the run ends on a prompt) has no evidence.
 */
import type { ChatMessage } from "./metrics.js";
import { contentText, callArgs } from "./metrics.js";
import { argumentTexts, containsTerm, specificTerms } from "../model/terms.js";

const kTexts = new WeakMap<ChatMessage, string[]>();
const kPresence = new WeakMap<ChatMessage, Map<string, boolean>>();

/** The texts of a message that terms are read from (see the module comment), memoised per message object. */
export function termTexts(m: ChatMessage): string[] {
  let texts = kTexts.get(m);
  if (texts !== undefined) return texts;
  texts = [contentText(m)];
  for (const a of callArgs(m)) argumentTexts(a, texts);
  texts = texts.filter((s) => s !== "");
  kTexts.set(m, texts);
  return texts;
}

/** Whether `term` is present in `m`'s texts (memoised per message object and term). */
export function messageHasTerm(m: ChatMessage, term: string): boolean {
  let memo = kPresence.get(m);
  if (memo === undefined) kPresence.set(m, (memo = new Map()));
  let has = memo.get(term);
  if (has === undefined) memo.set(term, (has = termTexts(m).some((t) => containsTerm(t, term))));
  return has;
}

/** The specific terms `m` names (its texts' terms, in order, distinct). */
export function namedTerms(m: ChatMessage): string[] {
  const seen = new Set<string>();
  for (const t of termTexts(m)) for (const term of specificTerms(t)) seen.add(term);
  return [...seen];
}

/** The evidence of a prompt for its next message (see the module comment); [] when there is no next assistant message. */
export function nextStepEvidence(prompt: readonly ChatMessage[], next: ChatMessage | undefined): string[] {
  if (next === undefined || next.role !== "assistant") return [];
  const anchor: ChatMessage[] = [];
  const trajectory: ChatMessage[] = [];
  let taskSeen = false;
  for (const m of prompt) {
    if (m.role === "system" || m.role === "developer") anchor.push(m);
    else if (m.role === "user" && !taskSeen) {
      taskSeen = true;
      anchor.push(m);
    } else trajectory.push(m);
  }
  return namedTerms(next).filter((term) => !anchor.some((m) => messageHasTerm(m, term)) && trajectory.some((m) => messageHasTerm(m, term)));
}

/** How many of `evidence` the compacted prompt `output` still shows in its texts. */
export function evidenceKept(evidence: readonly string[], output: readonly ChatMessage[]): number {
  let kept = 0;
  for (const term of evidence) if (output.some((m) => messageHasTerm(m, term))) kept++;
  return kept;
}
