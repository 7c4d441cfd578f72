import { createReadStream } from "node:fs";
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Readable, Writable } from "node:stream";
import { gunzipIfGzip } from "../pool/input.js";
import { CtxfoldError } from "../errors.js";

/**
 * Exit codes of every ctxfold command (README "The ctxfold command"):
 * 0 done; 1 failed (bad input under --strict, an unreadable file, an I/O error); 2 bad usage;
 * 3 done, but some runs could not be compacted (passed through, each in the errors file);
 * 130 interrupted by SIGINT (a checkpoint was written; `--resume` continues).
 */
export const kExit = { ok: 0, failed: 1, usage: 2, partial: 3, interrupted: 130 } as const;

/** Where a command reads and writes: the process's streams, or a test's. */
export interface CliIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** Whether stderr is a terminal (progress is drawn only then). */
  stderrIsTTY: boolean;
  /** Installs a SIGINT handler; returns its removal. */
  onInterrupt(handler: () => void): () => void;
}

export const kProcessIo: CliIo = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  stderrIsTTY: Boolean(process.stderr.isTTY),
  onInterrupt(handler) {
    process.on("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
};

/** A usage error: the message is printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

/** node:util parseArgs with strict checking, its errors turned into UsageErrors. */
export function parseCli(argv: string[], options: NonNullable<ParseArgsConfig["options"]>): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A positive integer option, or a UsageError naming it. */
export function intOption(value: string | undefined, name: string, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required`);
    return fallback;
  }
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name}: expected a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

/** The bytes of FILE (`-` for stdin), gunzipped when they are gzip data (by their magic bytes). */
export function openInput(file: string, io: CliIo): Readable {
  return gunzipIfGzip(file === "-" ? io.stdin : createReadStream(file));
}

/** Async lines of a readable (LF or CRLF), with their 1-based numbers. */
export async function* readLines(input: Readable): AsyncGenerator<{ line: string; n: number }> {
  const { createInterface } = await import("node:readline");
  let n = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) yield { line, n: ++n };
}

/** A CtxfoldError located at `file:line`. */
export function atLine(err: unknown, file: string, line: number): CtxfoldError {
  const where = `${file === "-" ? "stdin" : file}:${line}`;
  if (CtxfoldError.isInstance(err)) {
    // The message already starts with the error's own path; say where once, then that.
    const bare = err.path && err.message.startsWith(`${err.path}: `) ? err.message.slice(err.path.length + 2) : err.message;
    return new CtxfoldError(err.code, bare, { path: err.path ? `${where}: ${err.path}` : where, cause: err });
  }
  return new CtxfoldError("E_BAD_INPUT", err instanceof Error ? err.message : String(err), { path: where, cause: err });
}

/** One run of a JSONL line: a bare messages array, or an object with `messages` (other fields kept). */
export interface JsonlRun {
  messages: unknown[];
  /** The line's object when it was one (its other fields are written back unchanged). */
  envelope?: Record<string, unknown>;
  /** The run's id: the object's `id` or `run_id`, else `line N`. */
  id: string;
}

/** A parsed JSONL line as a run, or E_BAD_INPUT saying what the line is instead. */
export function runOfLine(value: unknown, line: number): JsonlRun {
  if (Array.isArray(value)) return { messages: value, id: `line ${line}` };
  if (value !== null && typeof value === "object" && Array.isArray((value as { messages?: unknown }).messages)) {
    const envelope = value as Record<string, unknown>;
    const id = envelope.id ?? envelope.run_id ?? envelope.instance_id;
    return { messages: envelope.messages as unknown[], envelope, id: typeof id === "string" || typeof id === "number" ? String(id) : `line ${line}` };
  }
  throw new CtxfoldError("E_BAD_INPUT", "expected a messages array or an object with a messages array", { path: "messages" });
}

