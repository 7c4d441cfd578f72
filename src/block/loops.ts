import type { Loop, Message, Session } from "../model/schema.js";

/**
 * Tags messages with turn ids for block compaction's TurnMap where a runner did not: a new turn starts
 * at each user message and each assistant message; tool messages (and system messages after
 * the first message) join the turn before them, so a call and its results share a turn.
 * Messages that already carry a turn id keep it. Returns new message objects only where a
 * turn id was added.
 */
export function assignTurns(messages: readonly Message[], loop: string | number): Message[] {
  let index = -1;
  return messages.map((m, i) => {
    if (i === 0 || m.role === "user" || m.role === "assistant") index++;
    if (m.turn) return m;
    return { ...m, turn: { loop, index } };
  });
}

/**
 * A Session from a flat recorded run: a new loop starts at every user message after the first
 * one that follows an assistant or tool message (a user turn the agent answers in a new
 * agent loop), unless a tool call is still waiting for its result (recorded runs end on
 * unanswered calls at times, and then the rest stays in one loop); leading system and user messages belong to the first loop. Loop ids are
 * 0, 1, 2…; messages get turn ids by assignTurns.
 */
export function sessionFromMessages(id: string, messages: readonly Message[]): Session {
  const loops: Loop[] = [];
  let current: Message[] = [];
  let agentSpoke = false;
  const pending = new Set<string>();
  for (const m of messages) {
    // Never cut while a call waits for its result: a loop holds whole tool exchanges.
    if (m.role === "user" && agentSpoke && current.length > 0 && pending.size === 0) {
      loops.push({ id: loops.length, messages: assignTurns(current, loops.length) });
      current = [];
      agentSpoke = false;
    }
    if (m.role === "assistant" || m.role === "tool") agentSpoke = true;
    for (const p of m.parts) {
      if (p.type === "tool-call") pending.add(p.id);
      else if (p.type === "tool-result") pending.delete(p.callId);
    }
    current.push(m);
  }
  if (current.length > 0 || loops.length === 0) loops.push({ id: loops.length, messages: assignTurns(current, loops.length) });
  return { id, loops };
}
