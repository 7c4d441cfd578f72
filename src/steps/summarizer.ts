/**
 * The summariser contract (the step compactor's semantic lines, the tiered policy's summaries):
 * given a text, a target in tokens and a label naming what is summarised ("tool-output:bash",
 * "turns:3-9", "memory-extraction"), return a summary within the target. May be async. The
 * tiered policy treats a throw, a rejection, a timeout or an over-target answer as a failure: it
 * falls back to the extractive summariser and records an event, so a compaction never fails
 * because of it.
 */
export type Summarizer = (text: string, targetTokens: number, label: string) => string | Promise<string>;
