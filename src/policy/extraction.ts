import type { Message } from "../model/schema.js";
import { optionsObject } from "../errors.js";
import { checkBudget, checkDeadline, remainingMs } from "./options.js";
import type { CompactCallOptions } from "./types.js";
import type { StageKit } from "./work.js";

export interface ExtractionOptions {
  /** The payload's size at most, in tokens: above it the summariser brings the payload within. */
  targetTokens: number;
  /** When the caller must have the answer, as in compact(): with less than deadlineReserveMs left, extraction is skipped. @default none */
  deadline?: CompactCallOptions["deadline"];
}

export interface ExtractionPayload {
  text: string;
  tokens: number;
  skipped?: "deadline";
  ref?: string;
}

/**
 * The payload of a memory-extraction call, bounded by summarisation, not truncation: tool-call
 * arguments appear as their minimal arguments (never document-sized written content), tool
 * results as their observations, text as it is; if that is still over `targetTokens`, the
 * summariser brings it within (the original is offloaded with a ref). Background work: with
 * less than `deadlineReserveMs` left it is skipped, so extraction never takes the critical
 * path's time.
 */
export async function extractionPayload(kit: StageKit, messages: readonly Message[], options: ExtractionOptions, now: number): Promise<ExtractionPayload> {
  options = optionsObject(options, "{ targetTokens, deadline? }") as unknown as ExtractionOptions;
  checkBudget(options.targetTokens, "options.targetTokens");
  checkDeadline(options.deadline);
  kit.summarizerDown = false;
  if (remainingMs(options.deadline, now, now) < kit.settings.deadlineReserveMs) return { text: "", tokens: 0, skipped: "deadline" };
  const steps = new Map(
    kit.reducer
      .restartNumbering()
      .reduceMessages(messages)
      .filter((x) => x.callId !== undefined)
      .map((x) => [x.callId!, x]),
  );
  const lines: string[] = [];
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type === "text") lines.push(`${m.role}: ${p.text}`);
      else if (p.type === "tool-call") lines.push(`${m.role} called ${p.name}(${JSON.stringify(steps.get(p.id)?.minimalArgs ?? {})})`);
      else if (p.type === "tool-result") lines.push(`result: ${steps.get(p.callId)?.observation ?? "(no observation)"}`);
    }
  }
  const text = lines.join("\n");
  const tokens = kit.measure.text(text);
  if (tokens <= options.targetTokens) return { text, tokens };
  const summary = await kit.summarize(text, options.targetTokens, "memory-extraction");
  return { text: summary.text, tokens: kit.measure.text(summary.text), ref: summary.ref };
}
