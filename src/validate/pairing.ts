/**
 * Pairing tool calls with their results: the one pass the tool rules of kRules share (the
 * answer window is defined in rules.ts's module comment).
 */
import type { Format } from "../adapters/common.js";
import type { Message } from "../model/schema.js";
import { canonicalPath, placeOf, quote } from "./paths.js";
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

/** The pass's state: the latest call of each id, and the answer window open now. */
interface Pass {
  readonly messages: readonly Message[];
  readonly out: Pairing;
  /** The latest call of each id. */
  readonly slots: Map<string, CallSlot>;
  /** The calls of the open window's assistant message. */
  readonly open: CallSlot[];
  /** The open window's assistant message, -1 when no window is open. */
  owner: number;
  /** User text came in the open window (Anthropic's merged user side). */
  sawUserText: boolean;
  /** How a message names another place (the call a duplicate id was first used by). */
  readonly where: (index: number, part?: number) => string;
}

/**
 * Pairs every tool result with a call of the assistant message whose answer window it sits in
 * (see the module comment), in one pass. A result for a call already answered in that window is
 * a duplicate; a result matching no call of the window is an orphan (so a result repeated
 * outside the window is an orphan, not a duplicate). When a window closes, its calls still
 * unanswered are unanswered, or pending when the assistant message is the very last message.
 * One map lookup per call and per result: `slots` holds the latest call of each id, and a
 * result matches when that call belongs to the window's assistant message. `where` names the
 * place a message text points to (validate() passes the input's paths).
 */
export function pairCalls(messages: readonly Message[], format: Format, where: (index: number, part?: number) => string = canonicalPath): Pairing {
  const out: Pairing = { orphans: [], unanswered: [], pending: [], notFirst: [], duplicateResults: [], duplicateCalls: [] };
  const pass: Pass = { messages, out, slots: new Map(), open: [], owner: -1, sawUserText: false, where };
  const mergesUserSide = format === "anthropic";
  for (let i = 0; i < messages.length; i++) {
    const role = messages[i].role;
    if (role === "assistant") openWindow(pass, i);
    else if (role === "tool") answerCalls(pass, i);
    else if (role === "user" && mergesUserSide && pass.owner >= 0) pass.sawUserText = true;
    else closeWindow(pass);
  }
  closeWindow(pass);
  return out;
}

/** Closes the open window (if any): its calls still unanswered are pending in the last message, else unanswered. */
function closeWindow(pass: Pass): void {
  const { messages, out, open, owner } = pass;
  if (owner < 0) return;
  const last = owner === messages.length - 1;
  for (const slot of open) {
    if (slot.answered) continue;
    const f: Finding = {
      ...placeOf(owner, slot.part),
      key: slot.id,
      message: last
        ? `call ${quote(slot.id)} in the last message (${quote(messages[owner].id)}) has no result yet`
        : `call ${quote(slot.id)} of assistant message ${quote(messages[owner].id)} has no result before the next non-tool message`,
    };
    (last ? out.pending : out.unanswered).push(f);
  }
  pass.owner = -1;
  open.length = 0;
}

/** Opens the window of assistant message `i` (closing the one before) with its calls; a call id used before is a duplicate call. */
function openWindow(pass: Pass, i: number): void {
  closeWindow(pass);
  pass.owner = i;
  pass.sawUserText = false;
  const m = pass.messages[i];
  for (let k = 0; k < m.parts.length; k++) {
    const p = m.parts[k];
    if (p.type !== "tool-call") continue;
    const prev = pass.slots.get(p.id);
    if (prev) {
      pass.out.duplicateCalls.push({
        ...placeOf(i, k),
        key: p.id,
        message: `call id ${quote(p.id)} in message ${quote(m.id)} was already used at ${pass.where(prev.owner, prev.part)}`,
      });
      if (prev.owner === i) continue;
    }
    const slot: CallSlot = { id: p.id, owner: i, part: k, answered: false };
    pass.slots.set(p.id, slot);
    pass.open.push(slot);
  }
}

/** Pairs the results of tool message `i` with the open window's calls: orphans, duplicate results, and results after user text. */
function answerCalls(pass: Pass, i: number): void {
  const { messages, out, owner } = pass;
  const m = messages[i];
  for (let k = 0; k < m.parts.length; k++) {
    const p = m.parts[k];
    if (p.type !== "tool-result") continue;
    const slot = pass.slots.get(p.callId);
    const at = (message: string): Finding => ({ ...placeOf(i, k), key: p.callId, message });
    if (!slot || slot.owner !== owner) {
      const before = owner >= 0 ? `assistant message ${quote(messages[owner].id)}` : "no assistant message";
      out.orphans.push(at(`tool result for call ${quote(p.callId)} in message ${quote(m.id)} answers no call of the assistant message it follows (${before})`));
    } else if (slot.answered) {
      out.duplicateResults.push(at(`call ${quote(p.callId)} is answered again in message ${quote(m.id)}`));
    } else {
      slot.answered = true;
      if (pass.sawUserText) {
        out.notFirst.push(
          at(`tool result for call ${quote(p.callId)} in message ${quote(m.id)} comes after user text in the turn answering ${quote(messages[owner].id)}`),
        );
      }
    }
  }
}
