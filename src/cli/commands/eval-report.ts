/**
 * The files `ctxfold eval` leaves: the self-contained HTML report and, beside it, the JSON summary
 * (the very bytes `--json` prints). Where they go (`-o OUT`: OUT.html and OUT.json, default
 * kDefaultReportBase in the current directory; `--html FILE`: FILE and FILE's name with .json;
 * `--no-report`: nowhere), the refusals made before any run is read (a path that is one of the
 * inputs, exit 2; a directory that cannot take the files, exit 1), and the writing.
 */
import { accessSync, constants, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import type { Readable } from "node:stream";
import { CtxfoldError } from "../../errors.js";
import { renderHtmlReport } from "../../eval/html.js";
import type { EvalReport } from "../../eval/index.js";
import { outputWriteError, refuseToOverwriteInput } from "../../pool/output.js";
import { tempBeside } from "../../store/fs-ops.js";
import { UsageError } from "../common.js";

/**
 * Where the report files go when no flag says: `ctxfold-eval.html` and `ctxfold-eval.json` in the
 * current directory. One fixed name rather than one derived from the input: stdin and several
 * inputs have no single name, an input's own directory may be read-only, and the line on stderr
 * names the files either way. Each eval replaces the last one's files; -o keeps one apart.
 */
export const kDefaultReportBase = "ctxfold-eval";

/** The two report files. */
export interface ReportPaths {
  html: string;
  json: string;
}

/** The flags that say where the report goes, as parsed. */
export interface ReportFlags {
  output?: string;
  html?: string;
  noReport: boolean;
}

/** The report as JSON, one line: what --json prints and what the summary file holds. */
export const reportJson = (report: EvalReport): string => `${JSON.stringify(report)}\n`;

/** The report files the flags name (undefined with --no-report), or a UsageError for a combination that cannot be meant. */
export function reportPaths(flags: ReportFlags): ReportPaths | undefined {
  const { output, html, noReport } = flags;
  if (noReport && (output !== undefined || html !== undefined))
    throw new UsageError(`--no-report writes no files, so ${output !== undefined ? "-o/--output" : "--html"} has nothing to name: give one or the other`);
  if (noReport) return undefined;
  if (output !== undefined && html !== undefined)
    throw new UsageError("-o/--output and --html both name the report: give one (-o OUT writes OUT.html and OUT.json)");
  for (const [flag, value] of [
    ["-o/--output", output],
    ["--html", html],
  ] as const) {
    if (value === "") throw new UsageError(`${flag} needs a path`);
    if (value === "-") throw new UsageError(`${flag}: the report is files, not stdout (--json prints the summary on stdout)`);
  }
  if (html !== undefined) return { html, json: `${html.replace(/\.html?$/i, "")}.json` };
  const base = outputBase(output ?? kDefaultReportBase);
  return { html: `${base}.html`, json: `${base}.json` };
}

/** -o's OUT without a trailing .html or .json (`-o report.html` writes report.html); a directory (`-o reports/`) gets kDefaultReportBase inside. */
function outputBase(out: string): string {
  if (/[\\/]$/.test(out) || isDirectory(out)) return path.join(out, kDefaultReportBase);
  return out.replace(/\.(?:html|json)$/i, "");
}

/**
 * Before any run is read: E_OUTPUT_IS_INPUT (exit 2) when a report file is one of `inputs` (the
 * runs, --config, --compare) under any name, as writing it would destroy that input;
 * E_OUTPUT_WRITE (exit 1) naming the file and the OS code when its directory is missing or not
 * writable, or the name is a directory, so an eval does not run for minutes to fail at the end.
 */
export function refuseUnwritableReport(paths: ReportPaths, inputs: readonly string[], stdin: Readable): void {
  const files: [string, string][] = [
    [paths.html, "the HTML report"],
    [paths.json, "the JSON summary"],
  ];
  const checked = (file: string, check: () => void) => {
    try {
      check();
    } catch (err) {
      throw outputWriteError(file, err);
    }
  };
  // A missing directory first: no input can be there, and the input check would trip on it.
  for (const [file] of files) checked(file, () => directoryOf(file));
  for (const input of inputs) refuseToOverwriteInput(input, stdin, files);
  for (const [file] of files) {
    if (isDirectory(file)) throw new CtxfoldError("E_OUTPUT_WRITE", `cannot write ${file}: EISDIR (it is a directory)`);
    checked(file, () => accessSync(directoryOf(file), constants.W_OK));
  }
}

/** The directory `file` would be written in; ENOENT when there is none, ENOTDIR when it is a file. */
function directoryOf(file: string): string {
  const dir = path.dirname(file);
  if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: "ENOTDIR" });
  return dir;
}

/**
 * Writes the HTML report and the JSON summary: each into a temp file beside it first, renamed to
 * its name only once both are whole, so a failed write (a full disk) leaves the files as they
 * were and no half report; E_OUTPUT_WRITE names the file and the OS code.
 */
export function writeReport(paths: ReportPaths, report: EvalReport): void {
  const files: [file: string, text: string][] = [
    [paths.html, renderHtmlReport(report)],
    [paths.json, reportJson(report)],
  ];
  const temps: [temp: string, file: string][] = [];
  let current = paths.html;
  try {
    for (const [file, text] of files) {
      current = file;
      const temp = tempBeside(file);
      temps.push([temp, file]);
      writeFileSync(temp, text, { flag: "wx" });
    }
    while (temps.length > 0) {
      const [temp, file] = temps[0];
      current = file;
      renameSync(temp, file);
      temps.shift();
    }
  } catch (cause) {
    for (const [temp] of temps) removeQuietly(temp);
    throw outputWriteError(current, cause);
  }
}

/** Whether `file` is a directory (false where it cannot be stat'ed: the access check then says why). */
function isDirectory(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

/** Removes `file` if it is there; the error being reported is the write's, not this one's. */
function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already, or unremovable: temp names start with a dot and are never read.
  }
}
