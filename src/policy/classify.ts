import type { Message } from "../model/schema.js";
import type { MessageClass } from "./types.js";

const kTodo = /<system-reminder>|^\s*(?:todo(?:s| list)?|reminder)\b[:\s]/i;

/** The text of a message's text parts. */
const textOf = (m: Message) =>
  m.parts
    .filter((p) => p.type === "text")
    .map((p) => (p as { text: string }).text)
    .join("\n");

/** Whether a message holds a todo reminder (a `<system-reminder>` block or a "TODO:" / "Reminder:" text), or says so in meta. */
export function isTodoReminder(m: Message): boolean {
  return m.meta?.kind === "todo" || ((m.role === "user" || m.role === "system") && kTodo.test(textOf(m)));
}

/**
 * The tiered policy's deterministic classification, one class per message:
 * - critical: system messages, the task (the first user message), the latest user message with
 *   text (the latest steering), the latest assistant message with non-blank text (its text is
 *   the latest assistant non-tool text; when it also calls tools, the exchange stays whole),
 *   pinned messages and todo reminders;
 * - background_extraction: messages the caller marks `meta.background` (memory-extraction payloads);
 * - tool_trace: assistant messages that call tools and tool messages (arguments and results);
 * - historical_context: everything else (older user and assistant text).
 * The same messages always give the same classes.
 */
export function classify(messages: readonly Message[]): MessageClass[] {
  const { firstUser, latestUser, latestAssistantText } = anchorIndices(messages);
  return messages.map((m, i) => {
    if (m.role === "system" || i === firstUser || i === latestUser || i === latestAssistantText || m.pinned || isTodoReminder(m)) return "critical";
    if (m.meta?.background === true) return "background_extraction";
    if (m.role === "tool" || m.parts.some((p) => p.type === "tool-call" || p.type === "tool-result")) return "tool_trace";
    return "historical_context";
  });
}

/**
 * Where the anchors of a conversation are (-1 where there is none): the task (the first user
 * message), the latest user message with text, and the latest assistant message with non-blank
 * text. Classification keeps them verbatim; the focus reads its terms from them.
 */
export function anchorIndices(messages: readonly Message[]): { firstUser: number; latestUser: number; latestAssistantText: number } {
  const firstUser = messages.findIndex((m) => m.role === "user");
  let latestUser = -1;
  let latestAssistantText = -1;
  for (let i = messages.length - 1; i >= 0 && (latestUser < 0 || latestAssistantText < 0); i--) {
    const m = messages[i];
    if (latestUser < 0 && m.role === "user" && m.parts.some((p) => p.type === "text")) latestUser = i;
    if (latestAssistantText < 0 && m.role === "assistant" && m.parts.some((p) => p.type === "text" && p.text.trim() !== "")) latestAssistantText = i;
  }
  return { firstUser, latestUser, latestAssistantText };
}
