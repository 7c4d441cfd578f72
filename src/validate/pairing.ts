/**
 * Pairing tool calls with their results: the one pass the tool rules of kRules share (the
 * answer window is defined in rules.ts's module comment).
 */
import type { Format } from "../adapters/common.js";
import type { Message } from "../model/schema.js";
import { partPath, quote } from "./paths.js";
import type { Finding } from "./issues.js";

/** The findings of the call/result pass, one list per tool rule. */
export interface Pairing {
  orphans: Finding[];
  unanswered: Finding[];
  pending: Finding[];
  notFirst: Finding[];
  duplicateResults: Finding[];
  duplicateCalls: Finding[];
}

interface CallSlot {
  id: string;
  /** Index of the assistant message holding the call. */
  owner: number;
  part: number;
  answered: boolean;
}

/**
 * Pairs every tool result with a call of the assistant message whose answer window it sits in
 * (see the module comment), in one pass. A result for a call already answered in that window is
 * a duplicate; a result matching no call of the window is an orphan (so a result repeated
 * outside the window is an orphan, not a duplicate). When a window closes, its calls still
 * unanswered are unanswered, or pending when the assistant message is the very last message.
 * One map lookup per call and per result: `slots` holds the latest call of each id, and a
 * result matches when that call belongs to the window's assistant message.
 */
export function pairCalls(messages: readonly Message[], format: Format): Pairing {
  const out: Pairing = { orphans: [], unanswered: [], pending: [], notFirst: [], duplicateResults: [], duplicateCalls: [] };
  const mergesUserSide = format === "anthropic";
  const slots = new Map<string, CallSlot>();
  const open: CallSlot[] = [];
  let owner = -1;
  let sawUserText = false;

  const close = (): void => {
    if (owner < 0) return;
    const last = owner === messages.length - 1;
    for (const slot of open) {
      if (slot.answered) continue;
      const f: Finding = {
        index: owner,
        path: partPath(owner, slot.part),
        key: slot.id,
        message: last
          ? `call ${quote(slot.id)} in the last message (${quote(messages[owner].id)}) has no result yet`
          : `call ${quote(slot.id)} of assistant message ${quote(messages[owner].id)} has no result before the next non-tool message`,
      };
      (last ? out.pending : out.unanswered).push(f);
    }
    owner = -1;
    open.length = 0;
  };

  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "assistant") {
      close();
      owner = i;
      sawUserText = false;
      for (let k = 0; k < m.parts.length; k++) {
        const p = m.parts[k];
        if (p.type !== "tool-call") continue;
        const prev = slots.get(p.id);
        if (prev) {
          out.duplicateCalls.push({
            index: i,
            path: partPath(i, k),
            key: p.id,
            message: `call id ${quote(p.id)} in message ${quote(m.id)} was already used at ${partPath(prev.owner, prev.part)}`,
          });
          if (prev.owner === i) continue;
        }
        const slot: CallSlot = { id: p.id, owner: i, part: k, answered: false };
        slots.set(p.id, slot);
        open.push(slot);
      }
    } else if (m.role === "tool") {
      for (let k = 0; k < m.parts.length; k++) {
        const p = m.parts[k];
        if (p.type !== "tool-result") continue;
        const slot = slots.get(p.callId);
        const at = (message: string): Finding => ({ index: i, path: partPath(i, k), key: p.callId, message });
        if (!slot || slot.owner !== owner) {
          const before = owner >= 0 ? `assistant message ${quote(messages[owner].id)}` : "no assistant message";
          out.orphans.push(at(`tool result for call ${quote(p.callId)} in message ${quote(m.id)} answers no call of the assistant message it follows (${before})`));
        } else if (slot.answered) {
          out.duplicateResults.push(at(`call ${quote(p.callId)} is answered again in message ${quote(m.id)}`));
        } else {
          slot.answered = true;
          if (sawUserText) {
            out.notFirst.push(at(`tool result for call ${quote(p.callId)} in message ${quote(m.id)} comes after user text in the turn answering ${quote(messages[owner].id)}`));
          }
        }
      }
    } else if (m.role === "user" && mergesUserSide && owner >= 0) {
      sawUserText = true;
    } else {
      close();
    }
  }
  close();
  return out;
}
