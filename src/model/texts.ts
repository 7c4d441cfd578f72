import type { Message, ResultContentPart } from "./schema.js";

/**
 * The texts of canonical messages that a model reads as tokens, in order: text parts, tool-call
 * names and raw arguments, the text content of tool results, reasoning text. Media, opaque parts
 * and redacted reasoning carry no countable text and are left out.
 */
export function messageTexts(messages: readonly Message[]): string[] {
  const out: string[] = [];
  const content = (parts: readonly ResultContentPart[]) => {
    for (const c of parts) if (c.type === "text") out.push(c.text);
  };
  for (const m of messages) {
    for (const p of m.parts) {
      switch (p.type) {
        case "text": out.push(p.text); break;
        case "tool-call": out.push(p.name, p.args); break;
        case "tool-result": content(p.content); break;
        case "reasoning": if (p.text !== undefined) out.push(p.text); break;
        default: break;
      }
    }
  }
  return out;
}

