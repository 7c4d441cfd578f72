/**
 * What the read-only commands (stats, explain, validate, eval, count --jsonl) share: reading a JSONL file run by run with bad lines as values rather than exceptions, parsing a run's wire
 * messages into the canonical model.
 *
 * Kept apart from common.ts (what every command, compact included, shares).
 */
import type { Readable } from "node:stream";
import { parseMessages, type Format } from "../adapters/index.js";
import { CtxfoldError } from "../errors.js";
import type { Message } from "../model/schema.js";
import { isBlankLine, kDefaultMaxLineBytes, readLines, type ReadLine } from "../pool/input.js";
import { parseLine } from "../pool/jsonl.js";

import { atLine, kExit, openInput, runOfLine, shownName, wireOf, type CliIo, type JsonlRun } from "./common.js";

/** One non-blank line of a JSONL file: its run, or why it is not one. */
export type RunLine = { line: number; run: JsonlRun; error?: undefined } | { line: number; run?: undefined; error: CtxfoldError };

/**
 * The runs of a JSONL file (`-` for stdin, gzip detected), one per non-blank line, read and
 * decoded as compact reads them (src/pool/input.ts). A line that is not UTF-8, not JSON or not
 * a run comes back as an error located at `file:line` (atLine), so a command decides whether it
 * is fatal. A failure of the stream itself (a missing file, corrupt gzip: see gunzipIfGzip)
 * throws: there is nothing more to read.
 */
export async function* readRuns(file: string, io: CliIo): AsyncGenerator<RunLine> {
  const input: Readable = openInput(file, io);
  const lines = readLines(input);
  try {
    yield* runLines(lines, file);
  } finally {
    // A reader that stops early (explain found its run) lets go of the file; stdin is the caller's.
    await lines.return(undefined);
    if (file !== "-") input.destroy();
  }
}

async function* runLines(lines: AsyncGenerator<ReadLine>, file: string): AsyncGenerator<RunLine> {
  for await (const { raw, n, tooLong } of lines) {
    if (raw === undefined) {
      const what = `a line of ${(tooLong / 2 ** 20).toFixed(1)} MB, over the ${kDefaultMaxLineBytes / 2 ** 20} MB a line may have: not read`;
      yield { line: n, error: new CtxfoldError("E_TOO_LARGE", what, { path: `${shownName(file)}:${n}` }) };
      continue;
    }
    if (isBlankLine(raw)) continue;
    let item: RunLine;
    try {
      item = { line: n, run: runOfLine(parseLine(raw), n) };
    } catch (err) {
      item = { line: n, error: atLine(err, file, n) };
    }
    yield item;
  }
}

/** A run parsed into the canonical model. */
export interface ParsedRun {
  format: Format;
  messages: Message[];
}

/** Parses a run under `format` (detected when undefined); failures are CtxfoldErrors at `file:line`. */
export function parseRun(run: JsonlRun, file: string, line: number, format?: Format): ParsedRun {
  try {
    return parseMessages(wireOf(run), format ? { format } : {});
  } catch (err) {
    throw atLine(err, file, line);
  }
}

/**
 * An error message on stderr, continuation lines indented (zod's prettified issues span
 * several lines), so that each bad line reads as one block.
 */
export function writeError(io: CliIo, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  io.stderr.write(`${message.replace(/\n/g, "\n  ")}\n`);
}

/** Reports a failure the way the dispatcher does (`ctxfold CMD: message`) and returns kExit.failed. */
export function fail(io: CliIo, command: string, message: string): number {
  io.stderr.write(`ctxfold ${command}: ${message}\n`);
  return kExit.failed;
}

/** A number with thousands separators (human tables). */
export const num = (n: number): string => n.toLocaleString("en-US", { maximumFractionDigits: 0 });

/** A fraction as a percentage with one decimal ("12.5%"). */
export const pct = (part: number, whole: number): string => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "–");

/**
 * Rows of cells as a table; `align` has one letter per column, `l` or `r` (default: the first
 * column left, the others right). Wider than `width` (a terminal's columns), it is cut into tables
 * of the columns that fit, one under the other, each led by the first column.
 */
export function table(rows: readonly (readonly string[])[], options: { indent?: string; align?: string; width?: number } = {}): string {
  const { indent = "  ", align = "l", width = Infinity } = options;
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  const left = (i: number) => (align[i] ?? "r") === "l";
  // Column groups after the first: as many as fit beside it.
  const groups: number[][] = [];
  let used = Infinity;
  for (let i = 1; i < widths.length; i++) {
    if (used + 2 + widths[i] > width || groups.length === 0) {
      groups.push([]);
      used = indent.length + widths[0];
    }
    groups[groups.length - 1].push(i);
    used += 2 + widths[i];
  }
  if (groups.length === 0) groups.push([]);
  return (
    groups
      .map((cols) =>
        rows
          .map(
            (r) =>
              indent +
              [0, ...cols]
                .map((i) => (left(i) ? (r[i] ?? "").padEnd(widths[i]) : (r[i] ?? "").padStart(widths[i])))
                .join("  ")
                .trimEnd(),
          )
          .join("\n"),
      )
      .join("\n\n") + "\n"
  );
}
