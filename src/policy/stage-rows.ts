/**
 * A compaction's stage reports as the rows a reader is shown (`ctxfold explain`'s table, the eval
 * report's epoch tables), and the figures of the line above such a table taken from those rows.
 *
 * - A stage skipped whole (the pipeline's skip: no candidates, no compaction, one skip reason
 *   counted once, and that reason one only a whole stage gets) reads "not run: …" in words, its
 *   candidates and compactions "–", not "0 candidates, no_gain 1". A stage that ran and found
 *   nothing reads "nothing to compact".
 * - What runs after the stages (the exact recount near the budget, up to two more merges, the
 *   thinking opener put back, the recall hint) changes the count without a report of its own: it
 *   gets a "finish" row when it did, so that the rows end on the result's tokens. An epoch planned
 *   ahead ran its stages on the conversation as it was then: an "ahead" row sets the messages
 *   appended since aside, and the finish brings them back. The rows then start at the result's
 *   tokens before and end at its tokens after, and `stageTotals` reads the header from them.
 *
 * Imports types only: the eval's HTML page uses it too, and that page imports nothing else.
 */
import type { SkipReason } from "./types.js";

/** One stage's report as explain and the eval's traces hold it (StageReport, or TraceEpoch's stages). */
export interface StageFigures {
  stage?: number;
  name: string;
  candidates: number;
  compacted: number;
  /** Skip reasons and counts; absent in eval reports written before they were recorded. */
  skipped?: Partial<Record<string, number>>;
  tokensBefore: number;
  tokensAfter: number;
  durationMs?: number;
}

/** One row of a stage table. */
export interface StageRow {
  /** "3 historical_text" (the name alone without a number), "ahead" or "finish". */
  label: string;
  /** null where the stage did not run, and in the ahead and finish rows. */
  candidates: number | null;
  compacted: number | null;
  /** What it skipped and why ("no_gain 12"), "not run: …", "nothing to compact", or "–". */
  skipped: string;
  tokensBefore: number;
  tokensAfter: number;
  /** null for the ahead and finish rows (timed with the call, not apart). */
  durationMs: number | null;
}

/** The reasons only a whole stage is skipped for, in words: deadline (near it) and no_gain (the plan's skip of stages 1 and 2). */
const kNotRun: Partial<Record<SkipReason, string>> = {
  no_gain: "stage 3 replaces what it would shorten",
  deadline: "too near the deadline",
};

/** The reason a stage was skipped whole, or undefined when it ran (see the doc comment). */
export function notRunReason(s: StageFigures): SkipReason | undefined {
  const reasons = Object.entries(s.skipped ?? {}).filter(([, n]) => n);
  if (s.candidates !== 0 || s.compacted !== 0 || reasons.length !== 1 || reasons[0][1] !== 1) return undefined;
  const reason = reasons[0][0] as SkipReason;
  return kNotRun[reason] !== undefined ? reason : undefined;
}

/** Skip reasons as "reason n", comma-separated. */
const skipList = (skipped: StageFigures["skipped"]): string =>
  Object.entries(skipped ?? {})
    .filter(([, n]) => n)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");

/** A stage report's row. */
export function stageRow(s: StageFigures): StageRow {
  const label = s.stage === undefined ? s.name : `${s.stage} ${s.name}`;
  const base = { label, tokensBefore: s.tokensBefore, tokensAfter: s.tokensAfter, durationMs: s.durationMs ?? null };
  const reason = notRunReason(s);
  if (reason) return { ...base, candidates: null, compacted: null, skipped: `not run: ${kNotRun[reason]} (${reason})` };
  const skipped = skipList(s.skipped) || (s.candidates === 0 ? "nothing to compact" : "–");
  return { ...base, candidates: s.candidates, compacted: s.compacted, skipped };
}

/**
 * The rows of a compaction: one per stage report, with the ahead and finish rows where the
 * result's own tokens (`result`: CompactResult's tokensBefore and tokensAfter) are not where the
 * stages start and end. No stages, no rows: nothing to tabulate.
 */
export function stageRows(stages: readonly StageFigures[], result?: { tokensBefore: number; tokensAfter: number }): StageRow[] {
  if (stages.length === 0) return [];
  const rows = stages.map(stageRow);
  if (result === undefined) return rows;
  const first = rows[0].tokensBefore;
  const last = rows[rows.length - 1].tokensAfter;
  const aside = (label: string, skipped: string, tokensBefore: number, tokensAfter: number): StageRow => ({
    label,
    candidates: null,
    compacted: null,
    skipped,
    tokensBefore,
    tokensAfter,
    durationMs: null,
  });
  if (result.tokensBefore !== first)
    rows.unshift(aside("ahead", "set aside: the messages appended since the epoch was planned ahead", result.tokensBefore, first));
  if (result.tokensAfter !== last) rows.push(aside("finish", "after the stages: exact recount, recall hint, last merges", last, result.tokensAfter));
  return rows;
}

/**
 * What the line above a stage table states, read from its rows: tokens before and after, and the
 * stages' time. Not the parts compacted: the finish's merges are counted in no report, so a sum of
 * the rows would fall short of the call's own count (its churn warning).
 */
export interface StageTotals {
  tokensBefore: number;
  tokensAfter: number;
  durationMs: number;
}

/** The totals of `rows` (the first row's tokens before, the last row's after, the sum of the times); `empty` when there are none. */
export function stageTotals(rows: readonly StageRow[], empty: { tokensBefore: number; tokensAfter: number }): StageTotals {
  if (rows.length === 0) return { tokensBefore: empty.tokensBefore, tokensAfter: empty.tokensAfter, durationMs: 0 };
  return {
    tokensBefore: rows[0].tokensBefore,
    tokensAfter: rows[rows.length - 1].tokensAfter,
    durationMs: rows.reduce((n, r) => n + (r.durationMs ?? 0), 0),
  };
}
