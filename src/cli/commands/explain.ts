/**
 * `ctxfold explain IN --run ID --budget N [--json] [--offload-dir DIR] [--format F] [--mode M]
 * [--preset NAME]`: compacts one run as `compact` would (same compactor options, same reading of
 * the line) and says what each stage of the tiered compactor did.
 *
 * The run is the first line whose id (`id`, `run_id` or `instance_id`) is ID, or the line a
 * `line N` ID names (the id a run without one gets, usable for any line). Per stage it prints
 * the stage's number and name, its candidates, what it compacted, why it skipped the rest
 * (cache_hit, policy_preserve, no_pressure, no_gain, deadline), tokens before and after, and its
 * duration; a stage skipped whole reads "not run: …" and one with no candidates "nothing to
 * compact" (stage-rows.ts), and a "finish" row has what the steps after the stages changed (the
 * exact recount, last merges, the recall hint). Above the table, the result's tier and status,
 * and the table's own figures: its first tokens before, its last after, the stages' time;
 * below it every ref stored (in order, once each). In the normal tier no stage runs: it says
 * so; `--mode legacy` runs block compaction's three levels, which report no stages (only the
 * result). Summariser fallbacks and churn warnings the compactor reported are listed too.
 *
 * Refs go to an fs store at DIR with --offload-dir (one file per ref, which `ctxfold show REF
 * --offload-dir DIR` reads as it reads compact's packs), else to memory (the refs are listed but
 * gone when the command ends).
 *
 * Exit 0 when the run was compacted and explained, whatever its status (a budget_infeasible
 * result is a finding, printed as such); 1 when no line has the run, or its line is not a run in
 * a supported format (the error names the line); 2 for bad usage.
 */
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { CtxfoldError } from "../../errors.js";
import type { PolicyEvent } from "../../policy/events.js";
import { createCompactor, type Compactor } from "../../policy/index.js";
import { stageRows, stageTotals, type StageRow } from "../../policy/stage-rows.js";
import type { CompactResult, StageReport } from "../../policy/types.js";
import type { PresetName } from "../../steps/config.js";
import { createFsStore, createMemoryStore, type OffloadStore } from "../../store/index.js";
import type { Format } from "../../adapters/index.js";
import { formatOption, intOption, kExit, modeOption, parseCli, presetOption, shownName, UsageError, wireOf, type CliIo, type JsonlRun } from "../common.js";
import { fail, num, readRuns, table } from "../runs.js";

/** What `--json` prints. */
export interface ExplainReport {
  file: string;
  line: number;
  id: string;
  format: CompactResult["format"];
  messages: number;
  budget: number;
  mode: CompactResult["mode"];
  tier: CompactResult["tier"];
  status: CompactResult["status"];
  infeasible?: CompactResult["infeasible"];
  tokensBefore: number;
  tokensAfter: number;
  durationMs: number;
  stages: StageReport[];
  /** Distinct refs, in the order first stored. */
  refs: string[];
  /** The fs store's directory, or null for the in-memory store. */
  offloadDir: string | null;
  /** Summariser fallbacks and churn warnings. */
  warnings: PolicyEvent[];
}

/**
 * The run `id` names in `file`, with its line: a run's id, `line N`, or a bare number N that is
 * no run's id, taken as line N. Bad lines on the way are counted, not fatal.
 */
async function findRun(file: string, io: CliIo, id: string): Promise<{ line: number; run: JsonlRun } | { error: CtxfoldError } | { missing: number }> {
  const byLine = /^line (\d+)$/.exec(id);
  const wanted = byLine ? Number(byLine[1]) : undefined;
  const maybeLine = /^\d+$/.test(id) ? Number(id) : undefined;
  let atLine: { line: number; run: JsonlRun } | { error: CtxfoldError } | undefined;
  let bad = 0;
  for await (const item of readRuns(file, io)) {
    if (wanted !== undefined && item.line === wanted) return item.error ? { error: item.error } : { line: item.line, run: item.run };
    if (maybeLine !== undefined && item.line === maybeLine) atLine = item.error ? { error: item.error } : { line: item.line, run: item.run };
    if (item.error) {
      bad++;
      continue;
    }
    if (wanted === undefined && item.run.id === id) return { line: item.line, run: item.run };
  }
  return atLine ?? { missing: bad };
}

/** What the command line asks for. */
interface ExplainOptions {
  file: string;
  /** The run's id, `line N`, or a bare line number (findRun). */
  id: string;
  budget: number;
  format: Format | undefined;
  /** The fs store's directory; undefined for the in-memory store. */
  dir: string | undefined;
  mode: "tiered" | "legacy";
  preset: string | undefined;
  /** Refs the table lists. */
  refsShown: number;
  json: boolean;
}

export async function explain(argv: string[], io: CliIo): Promise<number> {
  const opts = explainOptions(argv);
  const found = await findRun(opts.file, io, opts.id);
  if ("missing" in found) return fail(io, "explain", noRunMessage(opts, found.missing));
  if ("error" in found) return fail(io, "explain", found.error.message);
  const warnings: PolicyEvent[] = [];
  const compactor = explainingCompactor(opts, warnings);
  let r: CompactResult;
  const t0 = performance.now();
  try {
    r = await compactor.compact(wireOf(found.run), { budget: opts.budget, ...(opts.format ? { format: opts.format } : {}) });
  } catch (err) {
    if (!CtxfoldError.isInstance(err)) throw err;
    // A store that cannot be written is not the line's fault; anything else is the run's input.
    return fail(io, "explain", err.code.startsWith("E_STORE") ? err.message : `${shownName(opts.file)}:${found.line}: ${err.message}`);
  }
  // Parsing, the stages and rendering: what a caller of compact() waits for.
  const durationMs = performance.now() - t0;
  const report = explainReport(opts, found, r, durationMs, warnings);
  io.stdout.write(opts.json ? `${JSON.stringify(report)}\n` : render(report, compactor.settings.softRatio, opts.refsShown));
  return kExit.ok;
}

/** The command line's options, checked (a UsageError names what is wrong). */
function explainOptions(argv: string[]): ExplainOptions {
  const { values, positionals } = parseCli(argv, {
    run: { type: "string" },
    budget: { type: "string" },
    json: { type: "boolean" },
    "offload-dir": { type: "string" },
    format: { type: "string" },
    mode: { type: "string" },
    preset: { type: "string" },
    refs: { type: "string" },
  });
  const [file, ...rest] = positionals;
  if (file === undefined) throw new UsageError("explain needs an input file (IN.jsonl[.gz], or - for stdin)");
  if (rest.length) throw new UsageError(`unknown arguments: ${rest.join(" ")}`);
  const id = values.run as string | undefined;
  if (id === undefined || id === "") throw new UsageError("--run ID is required (a run's id, or a line number)");
  const refsShown = intOption(values.refs as string | undefined, "refs", kRefsShown);
  const budget = intOption(values.budget as string | undefined, "budget");
  const format = formatOption(values.format as string | undefined);
  const dir = values["offload-dir"] as string | undefined;
  if (dir === "") throw new UsageError("--offload-dir: expected a directory");
  const mode = modeOption(values.mode as string | undefined);
  const preset = presetOption(values.preset as string | undefined);
  return { file, id, budget, format, dir, mode, preset, refsShown, json: Boolean(values.json) };
}

/** Why no run was found: no line has its id (nor is its line, for a number), and how many lines could not be read. */
function noRunMessage({ file, id }: ExplainOptions, unreadable: number): string {
  const also = unreadable ? ` (${unreadable} line${unreadable === 1 ? "" : "s"} could not be read)` : "";
  return `no run with id ${JSON.stringify(id)}${/^\d+$/.test(id) ? " and no line " + id : ""} in ${shownName(file)}${also}`;
}

/** The compactor `compact` would use, its refs stored at DIR or in memory, its fallbacks and churn warnings kept in `warnings`. */
function explainingCompactor({ dir, mode, preset }: ExplainOptions, warnings: PolicyEvent[]): Compactor {
  const store: OffloadStore = dir !== undefined ? createFsStore({ dir }) : createMemoryStore();
  return createCompactor({
    store,
    mode,
    ...(preset !== undefined ? { stepPreset: preset as PresetName } : {}),
    // A monotonic clock with sub-millisecond resolution: stage durations of a small run are
    // fractions of a millisecond (no deadline is passed, so nothing reads it as epoch time).
    now: () => performance.now(),
    onEvent: (e) => {
      if (e.type === "summarizer_fallback" || e.type === "churn_warning") warnings.push(e);
    },
  });
}

/** What `--json` prints of the run's compaction (refs once each, in the order first stored). */
function explainReport(
  opts: ExplainOptions,
  found: { line: number; run: JsonlRun },
  r: CompactResult,
  durationMs: number,
  warnings: PolicyEvent[],
): ExplainReport {
  return {
    file: shownName(opts.file),
    line: found.line,
    id: found.run.id,
    format: r.format,
    messages: found.run.messages.length,
    budget: opts.budget,
    mode: r.mode,
    tier: r.tier,
    status: r.status,
    ...(r.infeasible ? { infeasible: r.infeasible } : {}),
    tokensBefore: r.tokensBefore,
    tokensAfter: r.tokensAfter,
    durationMs,
    stages: r.stages,
    refs: [...new Set(r.refs)],
    offloadDir: opts.dir !== undefined ? resolve(opts.dir) : null,
    warnings,
  };
}

const ms = (x: number): string => (x < 10 ? x.toFixed(2) : x.toFixed(1));

/** The report's stage table rows (stage-rows.ts): ends on the result's tokens, a stage skipped whole says "not run: …". */
function explainRows(r: ExplainReport): StageRow[] {
  return stageRows(
    r.stages.map((s) => ({ ...s, candidates: s.candidateCount })),
    r,
  );
}

/** A stage table row as text: "–" where a figure does not apply. */
const rowCells = (row: StageRow): string[] => [
  row.label,
  row.candidates === null ? "–" : num(row.candidates),
  row.compacted === null ? "–" : num(row.compacted),
  row.skipped,
  num(row.tokensBefore),
  num(row.tokensAfter),
  row.durationMs === null ? "–" : ms(row.durationMs),
];

/** Refs the table lists unless --refs says otherwise (--json lists them all). */
const kRefsShown = 10;

function render(r: ExplainReport, softRatio: number, refsShown: number): string {
  const out: string[] = [];
  const rows = explainRows(r);
  // The header's figures are the table's: its first tokens before, its last after, its stages' time.
  const t = stageTotals(rows, r);
  out.push(`run ${r.id} (${r.file}:${r.line}): ${r.format}, ${num(r.messages)} wire messages, budget ${num(r.budget)}`);
  out.push(
    `tier ${r.tier}, status ${r.status}, tokens ${num(t.tokensBefore)} → ${num(t.tokensAfter)}, ${ms(r.durationMs)} ms${rows.length ? ` (${ms(t.durationMs)} in the stages)` : ""}`,
  );
  if (r.infeasible) {
    const { criticalTokens, budget } = r.infeasible;
    out.push(
      criticalTokens > budget
        ? `budget infeasible: the critical messages alone take ${num(criticalTokens)} tokens of the ${num(budget)} budget`
        : `budget infeasible: the critical messages take ${num(criticalTokens)} tokens of the ${num(budget)} budget, and ${num(r.tokensAfter)} with what ctxfold keeps of the rest (the summary whose ref names what was removed)`,
    );
  }
  out.push("");
  if (rows.length === 0) {
    out.push(
      r.tier === "normal"
        ? `stage 0 (fits): ${num(r.tokensBefore)} tokens ≤ ${softRatio} × budget (${num(Math.floor(softRatio * r.budget))}): nothing to compact`
        : r.mode === "legacy"
          ? "legacy mode: block compaction's three levels ran (they report no stages)"
          : "no stage ran",
    );
  } else {
    out.push(
      table([["stage", "candidates", "compacted", "skipped", "tokens before", "after", "ms"], ...rows.map(rowCells)], {
        indent: "",
        align: "lrrlrrr",
      }).trimEnd(),
    );
  }
  for (const w of r.warnings) {
    if (w.type === "summarizer_fallback") out.push(`warning: the summariser fell back to the extractive one for ${w.label}: ${w.reason}`);
    else if (w.type === "churn_warning") out.push(`warning: ${num(w.compacted)} parts compacted in one call (churn warning above ${num(w.limit)})`);
  }
  out.push("");
  if (r.refs.length === 0) out.push("refs: none");
  else {
    out.push(
      r.offloadDir !== null
        ? `refs (${r.refs.length}, stored in ${r.offloadDir}; \`ctxfold show REF --offload-dir ${r.offloadDir}\`):`
        : `refs (${r.refs.length}, held in memory only: rerun with --offload-dir DIR to keep them):`,
    );
    for (const ref of r.refs.slice(0, refsShown)) out.push(`  ${ref}`);
    if (r.refs.length > refsShown) out.push(`  … and ${num(r.refs.length - refsShown)} more (--refs N lists N; --json all)`);
  }
  return out.join("\n") + "\n";
}
