/**
 * `ctxfold stats IN [--budget N,M,...] [--json] [--exact] [--encoding E]`: what a file of runs
 * costs in tokens, before anyone compacts it.
 *
 * Prints the distribution of tokens per run (count, min, p50, p90, p99, max, total; percentiles
 * by nearest rank), tokens by role (system, user, assistant, tool), tokens by tool category
 * (the step compactor's categories — file, shell, search, web, other — as the step reducer's rules assign
 * them from the tool's name and arguments; a call's name, arguments and per-call overhead, plus
 * its result's text) and, per action (read, write, list, shell, search, navigate, call), the same
 * in finer grain; and how many runs exceed each budget (default 8000, 32000, 128000).
 *
 * Tokens are counted by the token measure the tiered compactor measures a request with
 * (tokens/measure.ts: the run's canonical messages — texts, tool-call names and arguments,
 * tool-result text, reasoning text — plus the per-message, per-call and per-request overheads
 * of the run's format's provider, as the compactor counts them), so "over budget"
 * here means what `compact` and `explain` will find over it. Estimated (the WASM estimator)
 * unless --exact (the BPE counter, ~150× slower).
 *
 * A line that is not JSON, not a run, or whose messages fail their format's schema is reported on
 * stderr as `file:line: …`, counted, and left out of the figures. Exit 0, or 3 when some line was
 * bad (the figures are then over the good lines only); 1 when the input cannot be read at all.
 */
import { kToolCategories, type ToolCategory } from "../../steps/group-steps.js";
import { kEncodings, type Encoding } from "../../tokens/weights-table.js";
import type { Format } from "../../adapters/index.js";
import { CtxfoldError } from "../../errors.js";
import type { Message, Role } from "../../model/schema.js";
import { extractSteps, StepReducer } from "../../steps/reducer.js";
import type { StepAction } from "../../steps/types.js";
import { providerOf, tokenMeasure, type MeasureMode, type TokenMeasure } from "../../tokens/measure.js";
import { TokenCounter } from "../../tokens/token-counter.js";
import { kExit, parseCli, positiveInteger, shownName, UsageError, type CliIo } from "../common.js";
import { num, parseRun, pct, readRuns, table, writeError } from "../runs.js";

export const kDefaultBudgets = [8000, 32_000, 128_000] as const;

const kRoles: readonly Role[] = ["system", "user", "assistant", "tool"];
const kActions: readonly StepAction[] = ["read", "write", "list", "shell", "search", "navigate", "call"];

/** Tool calls and results of one category or action, and their tokens. */
interface ToolTally {
  calls: number;
  results: number;
  tokens: number;
}

/** What one run contributes. */
interface RunTally {
  total: number;
  messages: number;
  byRole: Record<Role, { messages: number; tokens: number }>;
  byCategory: Record<ToolCategory, ToolTally>;
  byAction: Record<StepAction, ToolTally>;
}

const tally = (): ToolTally => ({ calls: 0, results: 0, tokens: 0 });
const byKey = <K extends string, V>(keys: readonly K[], make: () => V): Record<K, V> => Object.fromEntries(keys.map((k) => [k, make()])) as Record<K, V>;

/** The figures `--json` prints (and the table is made of). */
export interface StatsReport {
  file: string;
  encoding: Encoding;
  mode: MeasureMode;
  runs: number;
  badLines: number;
  /** Canonical messages (an Anthropic system prompt is one; a Responses run of items is one assistant message). */
  messages: number;
  formats: Partial<Record<Format, number>>;
  /** Tokens per run; min … max are null when there is no run. */
  tokens: {
    count: number;
    min: number | null;
    p50: number | null;
    p90: number | null;
    p99: number | null;
    max: number | null;
    total: number;
    mean: number | null;
  };
  byRole: Record<Role, { messages: number; tokens: number }>;
  byCategory: Record<ToolCategory, ToolTally>;
  byAction: Record<StepAction, ToolTally>;
  overBudget: { budget: number; runs: number }[];
}

/**
 * One run's tally. A message's tokens are the measure's (estimated, or exact with --exact); a
 * tool call's tokens are its name, arguments and per-call overhead, a result's its text and
 * per-result overhead (TokenMeasure.partTokens), both under the category and action of the rule
 * that reduces the call (a result no call answers: the rule of its tool name, if any).
 */
function tallyRun(messages: readonly Message[], measure: TokenMeasure, mode: MeasureMode, reducer: StepReducer): RunTally {
  const parts = measure.partTokens(messages, mode);
  const t: RunTally = {
    total: mode === "exact" ? measure.exact(messages) : measure.all(messages),
    messages: messages.length,
    byRole: byKey(kRoles, () => ({ messages: 0, tokens: 0 })),
    byCategory: byKey(kToolCategories, tally),
    byAction: byKey(kActions, tally),
  };
  for (const m of messages) {
    t.byRole[m.role].messages++;
    t.byRole[m.role].tokens += mode === "exact" ? measure.exactOf(m) : measure.of(m);
  }
  const tokensOf = (message: number, part: object) => parts[message][messages[message].parts.indexOf(part as Message["parts"][number])];
  const add = (tool: string, args: Record<string, unknown>, calls: number, results: number, tokens: number) => {
    const rule = reducer.ruleFor(tool, args);
    for (const x of [t.byCategory[rule.category], t.byAction[rule.action]]) {
      x.calls += calls;
      x.results += results;
      x.tokens += tokens;
    }
  };
  const { steps, orphans } = extractSteps(messages);
  for (const s of steps) {
    let tokens = tokensOf(s.callMessage, s.call);
    if (s.result) tokens += tokensOf(s.resultMessage!, s.result);
    add(s.call.name, argsOf(s.call.args), 1, s.result ? 1 : 0, tokens);
  }
  for (const o of orphans) add(o.result.name ?? "", {}, 0, 1, tokensOf(o.resultMessage, o.result));
  return t;
}

/** Tool-call arguments as the rules see them: the JSON object, else {}. */
function argsOf(raw: string): Record<string, unknown> {
  if (raw.length === 0 || raw.length > 1 << 20 || raw.trimStart()[0] !== "{") return {};
  try {
    const v: unknown = JSON.parse(raw);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The value at nearest rank p% of ascending `sorted` (p in (0, 100]). */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** --budget: a comma list of positive integers, kept in ascending order without repeats. */
export function budgetsOption(value: string | undefined): number[] {
  if (value === undefined) return [...kDefaultBudgets];
  const items = value.split(",").map((s) => s.trim());
  const budgets = items.map(positiveInteger);
  if (budgets.includes(undefined) || items.length === 0)
    throw new UsageError(`--budget: expected a comma list of positive integers, got ${JSON.stringify(value)}`);
  return [...new Set(budgets as number[])].sort((a, b) => a - b);
}

/** What the command line asks for. */
interface StatsOptions {
  file: string;
  encoding: Encoding;
  budgets: number[];
  mode: MeasureMode;
  json: boolean;
}

export async function stats(argv: string[], io: CliIo): Promise<number> {
  const opts = statsOptions(argv);
  const report = emptyReport(opts);
  const totals = await tallyRuns(opts, io, report);
  for (const x of [...Object.values(report.byCategory), ...Object.values(report.byAction)]) x.tokens = Math.round(x.tokens);
  report.runs = totals.length;
  report.tokens = tokenFigures(totals);
  report.overBudget = opts.budgets.map((budget) => ({ budget, runs: totals.filter((n) => n > budget).length }));
  io.stdout.write(opts.json ? `${JSON.stringify(report)}\n` : render(report));
  return report.badLines > 0 ? kExit.partial : kExit.ok;
}

/** The command line's options, checked (a UsageError names what is wrong). */
function statsOptions(argv: string[]): StatsOptions {
  const { values, positionals } = parseCli(argv, {
    budget: { type: "string" },
    json: { type: "boolean" },
    exact: { type: "boolean" },
    encoding: { type: "string" },
  });
  const encoding = (values.encoding ?? "o200k_base") as Encoding;
  if (!kEncodings.includes(encoding)) throw new UsageError(`--encoding: one of ${kEncodings.join(", ")}`);
  const budgets = budgetsOption(values.budget as string | undefined);
  const [file, ...rest] = positionals;
  if (file === undefined) throw new UsageError("stats needs an input file (IN.jsonl[.gz], or - for stdin)");
  if (rest.length) throw new UsageError(`unknown arguments: ${rest.join(" ")}`);
  return { file, encoding, budgets, mode: values.exact ? "exact" : "estimate", json: Boolean(values.json) };
}

/** Token figures of no run at all. */
const noTokens = (): StatsReport["tokens"] => ({ count: 0, min: null, p50: null, p90: null, p99: null, max: null, total: 0, mean: null });

/** The report before any run is counted. */
function emptyReport({ file, encoding, mode }: StatsOptions): StatsReport {
  return {
    file: shownName(file),
    encoding,
    mode,
    runs: 0,
    badLines: 0,
    messages: 0,
    formats: {},
    tokens: noTokens(),
    byRole: byKey(kRoles, () => ({ messages: 0, tokens: 0 })),
    byCategory: byKey(kToolCategories, tally),
    byAction: byKey(kActions, tally),
    overBudget: [],
  };
}

/**
 * Tallies every run of the input into `report` (a bad line is told on stderr and counted, not
 * tallied); returns each good run's total tokens, in input order.
 */
async function tallyRuns({ file, encoding, mode }: StatsOptions, io: CliIo, report: StatsReport): Promise<number[]> {
  const counter = new TokenCounter({ encoding });
  const reducer = new StepReducer({ offload: false });
  const totals: number[] = [];
  for await (const item of readRuns(file, io)) {
    let t: RunTally;
    try {
      if (item.error) throw item.error;
      const parsed = parseRun(item.run, file, item.line);
      t = tallyRun(parsed.messages, tokenMeasure(counter, providerOf(parsed.format)), mode, reducer);
      report.formats[parsed.format] = (report.formats[parsed.format] ?? 0) + 1;
    } catch (err) {
      if (!CtxfoldError.isInstance(err)) throw err;
      report.badLines++;
      writeError(io, err);
      continue;
    }
    totals.push(t.total);
    addRun(report, t);
  }
  return totals;
}

/** Adds one run's messages and tokens by role, tool category and action to the report's. */
function addRun(report: StatsReport, t: RunTally): void {
  report.messages += t.messages;
  for (const r of kRoles) {
    report.byRole[r].messages += t.byRole[r].messages;
    report.byRole[r].tokens += t.byRole[r].tokens;
  }
  for (const [into, from] of [
    [report.byCategory, t.byCategory],
    [report.byAction, t.byAction],
  ] as [Record<string, ToolTally>, Record<string, ToolTally>][]) {
    for (const k of Object.keys(into)) {
      into[k].calls += from[k].calls;
      into[k].results += from[k].results;
      into[k].tokens += from[k].tokens;
    }
  }
}

/** The distribution of tokens per run (percentiles by nearest rank, the mean rounded). */
function tokenFigures(totals: readonly number[]): StatsReport["tokens"] {
  if (totals.length === 0) return noTokens();
  const sorted = [...totals].sort((a, b) => a - b);
  const total = totals.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    min: sorted[0],
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
    total,
    mean: Math.round(total / sorted.length),
  };
}

/** The human tables. */
function render(r: StatsReport): string {
  const formats =
    Object.entries(r.formats)
      .map(([f, n]) => `${f} ${n}`)
      .join(", ") || "none";
  const out: string[] = [];
  out.push(
    `${r.file}: ${num(r.runs)} runs, ${num(r.messages)} messages${r.badLines ? `, ${num(r.badLines)} bad line${r.badLines === 1 ? "" : "s"} (left out)` : ""}; formats: ${formats}`,
  );
  out.push(`tokens (${r.mode === "exact" ? "exact" : "estimated"}, ${r.encoding})\n`);
  if (r.runs === 0) return out.join("\n") + "no runs\n";
  const t = r.tokens;
  out.push(
    "per run\n" +
      table(
        [
          ["runs", "min", "p50", "p90", "p99", "max", "mean", "total"],
          [num(t.count), num(t.min!), num(t.p50!), num(t.p90!), num(t.p99!), num(t.max!), num(t.mean!), num(t.total)],
        ],
        { align: "r" },
      ),
  );
  out.push(
    "by role\n" +
      table([
        ["role", "messages", "tokens", "share"],
        ...kRoles.map((role) => [role, num(r.byRole[role].messages), num(r.byRole[role].tokens), pct(r.byRole[role].tokens, t.total)]),
      ]),
  );
  const tools = (title: string, rows: Record<string, ToolTally>) => {
    const keys = Object.keys(rows).filter((k) => rows[k].calls + rows[k].results > 0);
    if (keys.length === 0) return `${title}: no tool calls\n`;
    return (
      `${title} (calls + results)\n` +
      table([
        [title.replace(/^by /, ""), "calls", "results", "tokens", "share"],
        ...keys.map((k) => [k, num(rows[k].calls), num(rows[k].results), num(rows[k].tokens), pct(rows[k].tokens, t.total)]),
      ])
    );
  };
  out.push(tools("by tool category", r.byCategory));
  out.push(tools("by tool action", r.byAction));
  out.push(
    "runs over budget\n" + table([["budget", "runs", "share"], ...r.overBudget.map((b) => [num(b.budget), num(b.runs), pct(b.runs, r.runs)])], { align: "r" }),
  );
  return out.join("\n");
}
