/**
 * The summariser contract (the step compactor's semantic lines, the tiered policy's summaries):
 * given a text, a target in tokens and a label naming what is summarised ("tool-output:bash",
 * "turns:3-9", "memory-extraction"), return a summary within the target. May be async. The
 * tiered policy treats a throw, a rejection, a timeout or an over-target answer as a failure: it
 * falls back to the extractive summariser and records an event, so a compaction never fails
 * because of it.
 */
export type Summarizer = (text: string, targetTokens: number, label: string) => string | Promise<string>;

/**
 * A summariser's answer was not used and the extractive summary stood in: the tiered policy's
 * event when a custom summariser fails it, and the LLM summariser's when it falls back by itself
 * (which adds how many requests it made).
 */
export interface SummarizerFallbackEvent {
  type: "summarizer_fallback";
  /** The label the summariser was called with. */
  label: string;
  /** Why it fell back, never a key: `over target`, `http_500: …`, `timeout: …`, a thrown error's message, … */
  reason: string;
}
