import { createReadStream } from "node:fs";
import { availableParallelism } from "node:os";
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Readable, Writable } from "node:stream";
import { kDefaultWorkerHeapMb, type BatchOptions } from "../pool/engine.js";
import { queueAddress, type QueueAddress } from "../queue/address.js";
import { gunzipIfGzip, namingFailures } from "../pool/input.js";
import { kFormats, type Format } from "../adapters/index.js";
import { CtxfoldError, type CtxfoldErrorCode } from "../errors.js";
import { kPresets, type PresetName } from "../steps/config.js";
import { nearest } from "./usage.js";

/**
 * Exit codes of every ctxfold command (docs/batch.md, "Faults, checkpoints and exit codes"):
 * 0 done; 1 failed (bad input under --strict, an unreadable file, an I/O error); 2 bad usage,
 * or a command line that cannot be carried out as given (kRefusals); 3 done, but some runs could
 * not be compacted (passed through, each in the errors file); 130 interrupted by SIGINT (a
 * checkpoint was written; `--resume` continues).
 */
export const kExit = { ok: 0, failed: 1, usage: 2, partial: 3, interrupted: 130 } as const;

/** Errors that refuse the command line before any work (nothing was written): exit 2, like bad usage. */
const kRefusals: ReadonlySet<CtxfoldErrorCode> = new Set<CtxfoldErrorCode>(["E_OUTPUT_IS_INPUT", "E_CHECKPOINT_MISMATCH", "E_MISSING_PEER", "E_PEER_VERSION"]);

/** The exit code of a CtxfoldError that stopped a command. */
export const exitCodeOf = (err: CtxfoldError): number => (kRefusals.has(err.code) ? kExit.usage : kExit.failed);

/** Where a command reads and writes: the process's streams, or a test's. */
export interface CliIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** Whether stderr is a terminal (progress is drawn only then). */
  stderrIsTTY: boolean;
  /** stdout's width in columns when it is a terminal (tables wider than it are cut to fit). */
  readonly columns?: number;
  /** Installs a handler of SIGINT and SIGTERM (a stop asked for by a user or a supervisor); returns its removal. */
  onInterrupt(handler: () => void): () => void;
}

export const kProcessIo: CliIo = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  stderrIsTTY: Boolean(process.stderr.isTTY),
  get columns() {
    return process.stdout.isTTY ? process.stdout.columns : undefined;
  },
  onInterrupt(handler) {
    process.on("SIGINT", handler).on("SIGTERM", handler);
    return () => process.off("SIGINT", handler).off("SIGTERM", handler);
  },
};

/**
 * What tests set to reach paths the command line does not (many small chunks, a slow writer, a
 * worker that dies, another bench script); the ctxfold command sets none. A test that spawns the
 * command sets them through the test-only entry (scripts/test-cli.ts): what the package ships
 * reads no test hook from its environment.
 */
export interface CliTestHooks {
  /** compact: the batch engine's chunk size and the faults it injects. */
  compact?: Pick<BatchOptions, "chunkBytes" | "testHooks"> & {
    /** How long a --queue batch waits for an unreachable Redis, ms (instead of 30 s). */
    queueGraceMs?: number;
  };
  /** worker: the process exits mid-shard on a shard starting at this input line, as a killed worker would. */
  worker?: { dieAtLine?: number };
  /** bench: the runner to start instead of the package's dist/bench/run.js. */
  benchScript?: string;
}

/** A ctxfold command: its arguments, where it reads and writes, and the hooks of a test; its exit code. */
export type Command = (argv: string[], io: CliIo, hooks?: CliTestHooks) => Promise<number>;

export { packageRoot } from "../package-root.js";

/** A usage error: the message is printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

/**
 * node:util parseArgs with strict checking, its errors turned into one-line UsageErrors that name
 * the flag and, for an unknown one, the nearest of the command's own. (parseArgs rather than a CLI
 * library: no dependency, and strict parsing is what the commands need; the suggestion and the
 * per-command --help are all a library would add here.)
 */
export function parseCli(
  argv: string[],
  options: NonNullable<ParseArgsConfig["options"]>,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: negativeValuesJoined(argv, options), allowPositionals: true, strict: true, options });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (err) {
    const e = err as Error & { code?: string };
    const unknown = /Unknown option '([^']+)'/.exec(e.message)?.[1];
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown) {
      const flags = Object.keys(options).map((o) => `--${o}`);
      const near = nearest(unknown.replace(/=.*/, ""), flags);
      throw new UsageError(`unknown option ${unknown}${near ? ` (did you mean ${near}?)` : ""}`);
    }
    const missing = /Option '(-\S+)(?:, (--\S+))? <value>' argument missing/.exec(e.message);
    if (missing) throw new UsageError(`${missing[2] ?? missing[1]} needs a value`);
    const ambiguous = /Option '(?:-\S+, )?(--\S+)' argument is ambiguous/.exec(e.message);
    if (ambiguous) throw new UsageError(`${ambiguous[1]} needs a value (what follows it looks like an option: write ${ambiguous[1]}=VALUE if it is the value)`);
    throw new UsageError(e.message.split("\n")[0]);
  }
}

/**
 * `--name -5` given as `--name=-5`, for an option that takes a value: parseArgs reads a value that
 * starts with a dash as a missing value ("argument is ambiguous"), and a negative number is a
 * value, which the option's own check then refuses by name (`--budget: expected a positive integer, got "-1"`).
 */
function negativeValuesJoined(argv: string[], options: NonNullable<ParseArgsConfig["options"]>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") return [...out, ...argv.slice(i)];
    const name = a.startsWith("--") ? a.slice(2) : undefined;
    const next = argv[i + 1];
    if (name !== undefined && options[name]?.type === "string" && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * A positive integer as the command line writes one: plain decimal digits, at most
 * Number.MAX_SAFE_INTEGER (`0x10`, `1e3`, `12.0` and 2⁵³+1, which Number() would take or round,
 * are not), else undefined.
 */
export function positiveInteger(text: string): number | undefined {
  if (!/^[0-9]+$/.test(text)) return undefined;
  const n = Number(text);
  return n > 0 && Number.isSafeInteger(n) ? n : undefined;
}

/** A positive integer option (positiveInteger), or a UsageError naming it. */
export function intOption(value: string | undefined, name: string, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required`);
    return fallback;
  }
  const n = positiveInteger(value);
  if (n === undefined)
    throw new UsageError(`--${name}: expected a positive integer, got ${JSON.stringify(value)} (decimal digits, at most ${Number.MAX_SAFE_INTEGER})`);
  return n;
}

/**
 * Pool threads at most: twice the cores. Threads beyond the cores only wait for one, each with its
 * own heap (up to --max-worker-heap-mb), modules and token tables (~150 MB of RSS a thread), so
 * `--workers 1000` would take gigabytes to go no faster; a larger value is capped, and said.
 */
export const kMaxThreads = (): number => 2 * availableParallelism();

/** A thread-count flag (`compact --workers`, `worker --concurrency`), capped at kMaxThreads with a line on stderr naming the cap. */
export function threadsOption(value: string | undefined, command: string, flag: string, fallback: number, io: CliIo): number {
  const asked = intOption(value, flag, fallback);
  const cap = kMaxThreads();
  if (asked <= cap) return asked;
  io.stderr.write(`ctxfold ${command}: --${flag} ${asked} is more than this machine can use: using ${cap} (twice its ${availableParallelism()} cores)\n`);
  return cap;
}

/** --queue's Redis URL, checked (a UsageError saying what a queue URL looks like). */
export function queueOption(value: string): QueueAddress {
  try {
    return queueAddress(value);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** --max-worker-heap-mb: a positive integer, or 0 for V8's own limits (kDefaultWorkerHeapMb when absent). */
export const heapMbOption = (value: string | undefined): number => (value === "0" ? 0 : intOption(value, "max-worker-heap-mb", kDefaultWorkerHeapMb));

/** The bytes of FILE (`-` for stdin), gunzipped when they are gzip data (by their magic bytes). */
export function openInput(file: string, io: CliIo): Readable {
  return gunzipIfGzip(file === "-" ? io.stdin : createReadStream(file), shownName(file));
}

/**
 * The whole of FILE (`-` for stdin) as text, for the commands that take a text file whole rather
 * than JSONL (count, hash): neither gunzipped nor cut into lines; a failed read names the file.
 */
export async function readText(file: string, io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of namingFailures(file === "-" ? io.stdin : createReadStream(file), shownName(file))) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** How a file is named in messages: `stdin` for `-`. */
export const shownName = (file: string): string => (file === "-" ? "stdin" : file);

/**
 * `err` located at `file:line`, its own path kept after it (`runs.jsonl:3: messages[0]: …`);
 * a CtxfoldError's message already starts with its path, so it is said once.
 */
export function atLine(err: unknown, file: string, line: number): CtxfoldError {
  const where = `${shownName(file)}:${line}`;
  if (!CtxfoldError.isInstance(err)) return new CtxfoldError("E_BAD_INPUT", err instanceof Error ? err.message : String(err), { path: where, cause: err });
  const bare = err.path && err.message.startsWith(`${err.path}: `) ? err.message.slice(err.path.length + 2) : err.message;
  return new CtxfoldError(err.code, bare, { path: err.path ? `${where}: ${err.path}` : where, cause: err });
}

/**
 * The --format names of the command line (auto|openai|anthropic|responses|ai-sdk|langchain) and
 * the library's own names, to the library's Format; "auto" is undefined (detected per run).
 */
const kFormatNames: Readonly<Record<string, Format | undefined>> = {
  auto: undefined,
  openai: "openai-chat",
  responses: "openai-responses",
  anthropic: "anthropic",
  "ai-sdk": "ai-sdk",
  langchain: "langchain",
  ...Object.fromEntries(kFormats.map((f) => [f, f])),
};

/** The Format a --format value names (undefined for auto or when absent), or a UsageError. */
export function formatOption(value: string | undefined): Format | undefined {
  if (value === undefined) return undefined;
  if (!Object.hasOwn(kFormatNames, value)) {
    throw new UsageError(
      `--format: one of auto, ${Object.keys(kFormatNames)
        .filter((n) => n !== "auto")
        .join(", ")}; got ${JSON.stringify(value)}`,
    );
  }
  return kFormatNames[value];
}

/** --preset: a step-compaction preset's name (its own key of kPresets, not an inherited one such as toString), or a UsageError. */
export function presetOption(value: string | undefined): PresetName | undefined {
  if (value !== undefined && !Object.hasOwn(kPresets, value))
    throw new UsageError(`--preset: one of ${Object.keys(kPresets).join(", ")} (got ${JSON.stringify(value)})`);
  return value as PresetName | undefined;
}

/** --mode: the tiered compactor (the default) or block compaction's levels (legacy), or a UsageError. */
export function modeOption(value: string | undefined): "tiered" | "legacy" {
  const mode = value ?? "tiered";
  if (mode !== "tiered" && mode !== "legacy") throw new UsageError(`--mode: tiered or legacy (got ${JSON.stringify(mode)})`);
  return mode;
}

export { runOfLine, wireOf, type JsonlRun } from "../pool/jsonl.js";
