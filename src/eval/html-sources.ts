/**
 * The HTML report's metrics per source (html.ts; sources.ts groups the runs): per budget a table
 * with a row per source and contender and a column per metric a worst source is named for, the
 * worst source's cell marked. Shown when the input has two sources or more. Stable hooks:
 * `table.sources[data-budget]`, `tr[data-source][data-contender]`, `td.worst`.
 */
import { attrNum, esc, int } from "./html-format.js";
import { columnOf, kFormats } from "./html-tables.js";
import type { SourceGroup, SourcesReport, WorstSource } from "./sources.js";

/**
 * The columns: the metrics a worst source is named for (sources.ts kSourceMetrics, by the same
 * names; listed here as html.ts imports nothing but the report's types), as the metric table
 * shows them.
 */
const kSourceColumns = [
  "within_budget",
  "violation_free",
  "critical_verbatim",
  "failed_visible",
  "recoverable",
  "evidence_recall",
  "cost_per_call",
  "cost_savings",
  "savings",
  "budget_fill",
  "cache_prefix",
  "cache_prefix_over_budget",
].flatMap((metric) => {
  const column = columnOf(metric);
  return column ? [{ metric, column }] : [];
});

const worstKey = (budget: number, contender: string, metric: string) => JSON.stringify([budget, contender, metric]);

/** One source's rows at budget index `b`: a row per contender, its worst cells marked. */
function sourceRows(g: SourceGroup, b: number, worst: Map<string, WorstSource>): string {
  const { budget, rows } = g.budgets[b];
  return rows
    .map(({ contender, metrics }) => {
      const cells = kSourceColumns
        .map(({ metric, column }) => {
          const w = worst.get(worstKey(budget, contender, metric));
          const isWorst = w?.source === g.source;
          const text = kFormats[column.kind](column.get(metrics));
          const title = isWorst ? ` title="${esc(`worst source of ${metric} for ${contender} at this budget`)}"` : "";
          return `<td class="${column.kind}${isWorst ? " worst" : ""}" data-metric="${esc(column.key)}"${title}>${esc(text)}</td>`;
        })
        .join("");
      return `<tr data-source="${esc(g.source)}" data-contender="${esc(contender)}"><th scope="row">${esc(g.source)} · ${esc(contender)}</th><td class="count">${esc(int(g.runs))}</td>${cells}</tr>`;
    })
    .join("\n");
}

/** Per budget, the table of metrics per source; "" when the input has fewer than two sources. */
export function renderSources(sources: SourcesReport | undefined, budgets: readonly { budget: number }[]): string {
  const groups = sources?.groups ?? [];
  if (groups.length < 2) return "";
  const worst = new Map((sources?.worst ?? []).map((w) => [worstKey(w.budget, w.contender, w.metric), w]));
  const head = kSourceColumns.map(({ column }) => `<th scope="col" title="${esc(column.help)}">${esc(column.label)}</th>`).join("");
  const tables = budgets.map(
    ({ budget }, b) => `<h3>Budget ${esc(int(budget))} tokens</h3>
<div class="scroll"><table class="metrics-by-source sources" data-budget="${attrNum(budget)}">
<thead><tr><th scope="col">source · contender</th><th scope="col">runs</th>${head}</tr></thead>
<tbody>
${groups.map((g) => sourceRows(g, b, worst)).join("\n")}
</tbody></table></div>`,
  );
  return `<section id="sources"><h2>Metrics per source</h2>
<p>A run's source is its id up to the first "/" (an id without one is its own source; a run without an id is "unnamed"). The worst source of each metric, where the sources differ, is marked.</p>
${tables.join("\n")}</section>`;
}
