/**
 * The `--misses` section of `ctxfold eval`'s human report: per budget, the evaluated config's
 * missed evidence terms by the stage that lost them and the kind of message they came from
 * (src/eval/misses.ts), with the share of all misses, how many a ref or the ledger still
 * carries, and a few examples.
 */
import type { MissReport, MissRow } from "../../eval/index.js";
import { num, table } from "../runs.js";

const kHeader = ["stage", "kind", "misses", "share", "in a ref", "in ledger", "examples (term run@point#message)"];

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** A row's examples, short: each term (cut to 30 characters) with where it was. */
function examples(row: MissRow): string {
  return row.examples.map((e) => `${JSON.stringify(e.term.length > 30 ? `${e.term.slice(0, 29)}…` : e.term)} ${e.runId}@${e.point}#${e.message}`).join("; ");
}

/** The misses tables, one per budget, as lines. */
export function renderMisses(reports: readonly MissReport[], width?: number): string[] {
  const out: string[] = [];
  for (const r of reports) {
    out.push("", `misses at ${num(r.budget)} (${r.contender}): ${num(r.missed)} of ${num(r.terms)} evidence terms lacking, by the stage that lost them`);
    if (r.rows.length === 0) continue;
    const rows = r.rows.map((row) => [row.stage, row.kind, num(row.count), pct(row.share), num(row.recoverable), num(row.ledger), examples(row)]);
    out.push(table([kHeader, ...rows], { align: "llrrrrl", ...(width ? { width } : {}) }).trimEnd());
  }
  return out;
}
