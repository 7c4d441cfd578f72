/**
 * `ctxfold validate IN [--format F] [--json] [--errors-only]`: checks every run against its
 * provider's rules (src/validate/: tool-call pairing, role order, thinking blocks, …).
 *
 * Each run is read in the format --format names (auto|openai|anthropic|responses|ai-sdk|langchain,
 * or the library's names openai-chat / openai-responses) or, by default, the format detected from
 * its shape, and validated for that format. Each issue is one line:
 * `file:line: run ID (format): severity CODE at PATH: message` — PATH names the field in the
 * line's own shape (`messages[29].tool_calls[0]` for an OpenAI Chat call, `messages[3].content[1]`
 * for an Anthropic block, `system`; the validator's Issue.path, adapters/input-paths.ts). A summary
 * follows (issues, errors and warnings, runs with issues, counts by code). `--json` prints one
 * object with the same (see ValidateReport), each issue with its canonicalPath too.
 * `--errors-only` leaves warnings out (a recorded run that ends on a pending call, say), of the
 * output and of the exit code.
 *
 * Exit codes:
 * - 0: every line parsed and no issue was found (with --errors-only: no error);
 * - 4: every line parsed and some run has an error; 5: warnings only (never with --errors-only);
 * - 1: some line could not be parsed at all under its format — not JSON, not a run, or messages
 *   the format's schema rejects (under --format F: F's schema, so a file in another format fails
 *   here). Those lines are reported on stderr with file:line and the rest are still validated;
 *   1 wins over 4 and 5, since the file as a whole is not valid input for that format.
 * - 2: bad usage.
 */
import type { Format } from "../../adapters/index.js";
import { CtxfoldError } from "../../errors.js";
import type { Issue, IssueCode } from "../../validate/index.js";
import { validate as validateMessages } from "../../validate/index.js";
import { formatOption, kExit, parseCli, shownName, UsageError, type CliIo } from "../common.js";
import { num, parseRun, readRuns, writeError } from "../runs.js";

/** One issue as reported: the validator's issue (its path in the line's own shape) and where its run is. */
export interface ReportedIssue extends Issue {
  file: string;
  line: number;
  run: string;
  format: Format;
}

/** What `--json` prints. */
export interface ValidateReport {
  file: string;
  /** Runs validated (lines that parsed). */
  runs: number;
  /** Lines that could not be parsed, with why. */
  badLines: { line: number; code: string; message: string }[];
  issues: ReportedIssue[];
  summary: { issues: number; errors: number; warnings: number; runsWithIssues: number; byCode: Partial<Record<IssueCode, number>> };
}

/**
 * validate's own exit codes, distinct from the batch's (3 is "runs passed through" there): 0 no
 * issues, 1 lines that could not be parsed, 4 errors (a provider would refuse a run), 5 warnings only.
 */
export const kValidateExit = { errors: 4, warnings: 5 } as const;

export async function validate(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCli(argv, { format: { type: "string" }, json: { type: "boolean" }, "errors-only": { type: "boolean" } });
  const format = formatOption(values.format as string | undefined);
  const [file, ...rest] = positionals;
  if (file === undefined) throw new UsageError("validate needs an input file (IN.jsonl[.gz], or - for stdin)");
  if (rest.length) throw new UsageError(`unknown arguments: ${rest.join(" ")}`);
  const errorsOnly = Boolean(values["errors-only"]);
  const json = Boolean(values.json);
  const report: ValidateReport = {
    file: shownName(file),
    runs: 0,
    badLines: [],
    issues: [],
    summary: { issues: 0, errors: 0, warnings: 0, runsWithIssues: 0, byCode: {} },
  };

  for await (const item of readRuns(file, io)) {
    let issues: ReportedIssue[];
    try {
      if (item.error) throw item.error;
      const parsed = parseRun(item.run, file, item.line, format);
      const found = validateMessages(parsed.messages, parsed.format).issues.filter((i) => !errorsOnly || i.severity === "error");
      issues = found.map((i) => ({ ...i, file: report.file, line: item.line, run: item.run.id, format: parsed.format }));
    } catch (err) {
      if (!CtxfoldError.isInstance(err)) throw err;
      report.badLines.push({ line: item.line, code: err.code, message: err.message });
      writeError(io, err);
      continue;
    }
    report.runs++;
    if (issues.length > 0) report.summary.runsWithIssues++;
    for (const i of issues) {
      // Human output streams: only --json holds every issue until the end.
      if (json) report.issues.push(i);
      else io.stdout.write(issueLine(i));
      report.summary.issues++;
      report.summary.byCode[i.code] = (report.summary.byCode[i.code] ?? 0) + 1;
      if (i.severity === "error") report.summary.errors++;
      else report.summary.warnings++;
    }
  }
  io.stdout.write(json ? `${JSON.stringify(report)}\n` : summaryLine(report));
  if (report.badLines.length > 0) return kExit.failed;
  return report.summary.errors > 0 ? kValidateExit.errors : report.summary.warnings > 0 ? kValidateExit.warnings : kExit.ok;
}

/** One issue, compiler style, so editors and grep find the line. */
function issueLine(i: ReportedIssue): string {
  return `${i.file}:${i.line}: run ${i.run} (${i.format}): ${i.severity} ${i.code} at ${i.path}: ${i.message}\n`;
}

function summaryLine(r: ValidateReport): string {
  const s = r.summary;
  const plural = (n: number, one: string, many = `${one}s`) => `${num(n)} ${n === 1 ? one : many}`;
  const bad = r.badLines.length ? `; ${plural(r.badLines.length, "line")} could not be parsed` : "";
  if (s.issues === 0) return `${r.file}: ${plural(r.runs, "run")}, no issues${bad}\n`;
  const codes = Object.entries(s.byCode)
    .map(([c, n]) => `${c} ${n}`)
    .join(", ");
  return `${r.file}: ${plural(s.issues, "issue")} (${plural(s.errors, "error")}, ${plural(s.warnings, "warning")}) in ${num(s.runsWithIssues)} of ${plural(r.runs, "run")}${bad}; ${codes}\n`;
}
