/**
 * What the read-only commands (stats, explain, validate, eval, count --jsonl) share: reading a JSONL file run by run with bad lines as values rather than exceptions, parsing a run's wire
 * messages into the canonical model, and locating a canonical message in its wire array.
 *
 * Kept apart from common.ts (what every command, compact included, shares).
 */
import type { Readable } from "node:stream";
import { parseMessages, type Format } from "../adapters/index.js";
import { reusable } from "../adapters/common.js";
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
  /** What the adapters read (see wireOf). */
  wire: unknown;
  messages: Message[];
}

/** Parses a run under `format` (detected when undefined); failures are CtxfoldErrors at `file:line`. */
export function parseRun(run: JsonlRun, file: string, line: number, format?: Format): ParsedRun {
  const wire = wireOf(run);
  try {
    const parsed = parseMessages(wire, format ? { format } : {});
    return { format: parsed.format, wire, messages: parsed.messages };
  } catch (err) {
    throw atLine(err, file, line);
  }
}

/**
 * Where each canonical message came from in the wire, as a path a user finds in the file:
 * `messages[3]` (the wire array's index), or `system` for an Anthropic system prompt. Validator
 * paths index the canonical list, which differs from the wire's where one wire message becomes
 * several (an Anthropic user turn of tool results) or several become one (a Responses run of
 * items); this maps them back through the adapters' record of what each message was parsed from.
 * Undefined for a message with no recorded origin (none after a fresh parse).
 */
export function wireLocator(parsed: ParsedRun): (index: number) => string | undefined {
  const wireMessages = Array.isArray(parsed.wire) ? parsed.wire : (parsed.wire as { messages: unknown[] }).messages;
  const at = new Map<unknown, number>();
  wireMessages.forEach((m, i) => at.set(m, i));
  const where: (string | undefined)[] = new Array(parsed.messages.length);
  for (let i = 0; i < parsed.messages.length; ) {
    const r = reusable(parsed.messages, i, parsed.format);
    if (!r) {
      i++;
      continue;
    }
    // A Responses run of items is recorded as the slice of them: its first item locates it.
    const k = at.get(r.raw) ?? (Array.isArray(r.raw) ? at.get(r.raw[0]) : undefined);
    const path = k !== undefined ? `messages[${k}]` : wireMessages === parsed.wire ? undefined : "system";
    for (let j = 0; j < r.length; j++) where[i + j] = path;
    i += r.length;
  }
  return (index) => where[index];
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
