/**
 * The HTML report's "Missed evidence" section (only for a report made with `--misses`): per
 * budget, the evaluated config's missed evidence terms by the stage that lost them and the kind
 * of message they came from (misses.ts), with the share of all misses, how many a ref or the
 * ledger still carries, and a few examples. Stable hooks: `section#misses`,
 * `table.misses[data-budget]`, one `tr[data-stage][data-kind]` per row.
 */
import { esc, int, share } from "./html-format.js";
import type { MissReport, MissRow } from "./misses.js";

/** CSS of the section (html.ts adds it to the page's). */
export const kMissesCss = `
table.misses td, table.misses th { padding: 3px 6px; }
table.misses td.n { text-align: right; font-variant-numeric: tabular-nums; }
table.misses ul { margin: 0; padding-left: 16px; }`;

/** One row: stage, kind, count, share, carried, and the examples as a list. */
function missRow(r: MissRow): string {
  const examples = r.examples
    .map((e) => `<li><code>${esc(e.term)}</code> <code>${esc(e.runId)}</code> at point ${esc(int(e.point))}, message ${esc(int(e.message))}</li>`)
    .join("");
  return `<tr data-stage="${esc(r.stage)}" data-kind="${esc(r.kind)}"><td>${esc(r.stage)}</td><td>${esc(r.kind)}</td><td class="n">${esc(int(r.count))}</td><td class="n">${esc(share(r.share))}</td><td class="n">${esc(int(r.recoverable))}</td><td class="n">${esc(int(r.ledger))}</td><td><ul>${examples}</ul></td></tr>`;
}

/** One budget's table, or a line saying nothing was missed. */
function missTable(m: MissReport): string {
  const head = `<h3>Budget ${esc(int(m.budget))} tokens: ${esc(int(m.missed))} of ${esc(int(m.terms))} evidence terms missed (${esc(m.contender)})</h3>`;
  if (m.rows.length === 0) return `${head}<p class="empty">No evidence term was missed.</p>`;
  return `${head}<table class="misses" data-budget="${esc(m.budget)}"><thead><tr><th>stage</th><th>kind</th><th>misses</th><th>share</th><th>in a ref</th><th>in ledger</th><th>examples</th></tr></thead>
<tbody>${m.rows.map(missRow).join("\n")}</tbody></table>`;
}

/** The section, or "" when the report has no misses diagnosis. */
export function renderMisses(misses: readonly MissReport[] | undefined): string {
  if (!misses) return "";
  return `<section id="misses"><h2>Missed evidence: the stage that lost each term and where it came from</h2>
<p>Each term the next step used that the compacted prompt lacked, by the stage that removed or shrank its latest source message and that message's kind; "in a ref": a ref of the answer still holds it; "in ledger": the ledger's facts hold it.</p>
${misses.map(missTable).join("\n")}</section>`;
}
