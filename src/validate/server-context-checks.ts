/**
 * The checks of the providers' rules for their server-side context state (the rules are in
 * kRules; adapters/server-context.ts says which parts that state is):
 * - Anthropic on-demand compaction: the signed `compaction` block goes first in `messages` (an
 *   assistant message of its own, or the first block of the first message) and exactly once;
 *   anything in front of it is a 400 `compaction_block_misplaced`.
 * - OpenAI Responses: a `compaction_trigger` item must be the final input item; a reasoning item
 *   must be followed by the item it came with ("Item 'rs_…' of type 'reasoning' was provided
 *   without its required following item").
 */
import { isSignedCompaction, serverContextKind } from "../adapters/server-context.js";
import { responsesMeta } from "../adapters/openai-responses-wire.js";
import { placeOf, quote } from "./paths.js";
import type { Message } from "../model/schema.js";
import type { Finding } from "./issues.js";

/** What these checks read of a rule's context (rules.ts's RuleContext). */
type Transcript = { readonly messages: readonly Message[] };

/** COMPACTION_MISPLACED: every signed compaction block but one standing first in the first non-system message. */
export function compactionMisplaced(ctx: Transcript): Finding[] {
  const { messages } = ctx;
  const first = messages.findIndex((m) => m.role !== "system");
  const out: Finding[] = [];
  let seen = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    for (let k = 0; k < m.parts.length; k++) {
      if (!isSignedCompaction(m.parts[k])) continue;
      const at = { ...placeOf(i, k), key: m.id };
      if (seen) out.push({ ...at, message: `a second signed compaction block, in message ${quote(m.id)}: a request carries exactly one` });
      else if (i !== first || k !== 0)
        out.push({
          ...at,
          message: `the signed compaction block in message ${quote(m.id)} is not the first block of the first message: the API rejects what stands before it`,
        });
      seen = true;
    }
  }
  return out;
}

/** COMPACTION_TRIGGER_NOT_LAST: a compaction_trigger item anywhere but at the very end. */
export function compactionTriggerNotLast(ctx: Transcript): Finding[] {
  const { messages } = ctx;
  const out: Finding[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    for (let k = 0; k < m.parts.length; k++) {
      if (serverContextKind(m.parts[k]) !== "compaction-trigger") continue;
      if (i === messages.length - 1 && k === m.parts.length - 1) continue;
      out.push({ ...placeOf(i, k), key: m.id, message: `the compaction_trigger item in message ${quote(m.id)} is not the last input item` });
    }
  }
  return out;
}

/** REASONING_WITHOUT_FOLLOWER: a Responses reasoning item with no item after it in its assistant message. */
export function reasoningWithoutFollower(ctx: Transcript): Finding[] {
  const { messages } = ctx;
  const out: Finding[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== "assistant") continue;
    // The last part that is not reasoning: every own reasoning part after it has no follower.
    let last = m.parts.length - 1;
    while (last >= 0 && m.parts[last].type === "reasoning") last--;
    for (let k = last + 1; k < m.parts.length; k++) {
      const p = m.parts[k];
      const pm = responsesMeta.get(p);
      if (!pm) continue; // another format's reasoning is not rendered
      // The item's own id where it has one: message ids follow wire indices, which compaction shifts.
      const id = typeof pm.fields?.id === "string" ? pm.fields.id : undefined;
      const message = `reasoning item${id ? ` ${quote(id)}` : ""} in message ${quote(m.id)} is not followed by the message or call it came with`;
      out.push({ ...placeOf(i, k), key: id ?? m.id, message });
    }
  }
  return out;
}
