import type { Message, ResultContentPart } from "./schema.js";

/**
 * The readable summary a provider's compaction carries (Anthropic's compaction block `content`),
 * from an opaque part's wire value; undefined for anything else (OpenAI's compaction item is
 * encrypted only).
 */
function compactionSummary(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as { type?: unknown; content?: unknown };
  return v.type === "compaction" && typeof v.content === "string" ? v.content : undefined;
}

/**
 * The texts of canonical messages that a model reads as tokens, in order: text parts, tool-call
 * names and raw arguments, the text content of tool results, reasoning text, a compaction's
 * readable summary. Media, other opaque parts and redacted reasoning carry no countable text
 * and are left out.
 */
export function messageTexts(messages: readonly Message[]): string[] {
  const out: string[] = [];
  const content = (parts: readonly ResultContentPart[]) => {
    for (const c of parts) if (c.type === "text") out.push(c.text);
  };
  for (const m of messages) {
    for (const p of m.parts) {
      switch (p.type) {
        case "text":
          out.push(p.text);
          break;
        case "tool-call":
          out.push(p.name, p.args);
          break;
        case "tool-result":
          content(p.content);
          break;
        case "reasoning":
          if (p.text !== undefined) out.push(p.text);
          break;
        case "opaque": {
          const summary = compactionSummary(p.value);
          if (summary !== undefined) out.push(summary);
          break;
        }
        default:
          break;
      }
    }
  }
  return out;
}
