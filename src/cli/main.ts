#!/usr/bin/env node
/**
 * The ctxfold command: a dispatcher over src/cli/commands/. Every command takes its argv and a
 * CliIo and returns its exit code (kExit), so tests run them in-process as well as spawned.
 */
import { pathToFileURL } from "node:url";
import { existsSync, realpathSync } from "node:fs";
import { CtxfoldError } from "../errors.js";
import { exitCodeOf, kExit, kProcessIo, packageRoot, UsageError, type CliIo, type CliTestHooks, type Command } from "./common.js";
import { locateBench } from "./commands/bench.js";
import { commandUsage, kCommandUsage, nearest, usage } from "./usage.js";

/**
 * The commands, each loaded when it runs: a command's modules (and the packages only it uses,
 * such as the MCP SDK for `mcp`) cost nothing to the others, nor to `--help` and `--version`.
 */
const kCommands: Record<string, () => Promise<Command>> = {
  compact: async () => (await import("./commands/compact.js")).compact,
  worker: async () => (await import("./commands/worker.js")).worker,
  stats: async () => (await import("./commands/stats.js")).stats,
  explain: async () => (await import("./commands/explain.js")).explain,
  show: async () => (await import("./commands/show.js")).show,
  mcp: async () => (await import("./commands/mcp.js")).mcp,
  validate: async () => (await import("./commands/validate.js")).validate,
  eval: async () => (await import("./commands/eval.js")).evalCommand,
  bench: async () => (await import("./commands/bench.js")).bench,
  count: async () => (await import("./commands/count.js")).count,
  hash: async () => (await import("./commands/count.js")).hash,
};

/**
 * Runs one command line; never throws (errors become a message on stderr and an exit code).
 * `hooks` are a test's (CliTestHooks); the ctxfold command passes none.
 */
export async function runCli(argv: string[], io: CliIo = kProcessIo, hooks: CliTestHooks = {}): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    // bench runs the checkout's dist/bench, which an installed package does not ship.
    const listed = Object.keys(kCommandUsage).filter((c) => c !== "bench" || existsSync(locateBench(hooks.benchScript).script));
    io.stdout.write(usage(listed) + "\n");
    return kExit.ok;
  }
  if (command === "--version" || command === "-V" || command === "version") {
    io.stdout.write(`ctxfold ${packageRoot()?.version ?? "(version unknown: no package.json found)"}\n`);
    return kExit.ok;
  }
  const load = Object.hasOwn(kCommands, command) ? kCommands[command] : undefined;
  if (!load) {
    const near = nearest(command, Object.keys(kCommands));
    io.stderr.write(`ctxfold: unknown command ${JSON.stringify(command)}${near ? ` (did you mean ${near}?)` : ""}; ctxfold --help lists them\n`);
    return kExit.usage;
  }
  if (asksForHelp(rest)) {
    io.stdout.write(commandUsage(command) + "\n");
    return kExit.ok;
  }
  try {
    const run = await load();
    return await run(rest, io, hooks);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`ctxfold ${command}: ${err.message}; see ctxfold ${command} --help\n`);
      return kExit.usage;
    }
    if (CtxfoldError.isInstance(err)) {
      io.stderr.write(`ctxfold ${command}: ${err.message}\n`);
      return exitCodeOf(err);
    }
    const code = (err as NodeJS.ErrnoException).code;
    // A reader of stdout that stopped early (`| head`): what it wanted was written. (compact, whose
    // stdout is the batch's output, reports it as E_OUTPUT_WRITE instead: see streamSink.)
    if (code === "EPIPE") return kExit.ok;
    // OS errors (ENOENT, EACCES…) and zlib's (Z_DATA_ERROR: a corrupt .gz) are the input's fault.
    if (typeof code === "string" && /^(E[A-Z]+|Z_[A-Z_]+)$/.test(code)) {
      io.stderr.write(`ctxfold ${command}: ${(err as Error).message}\n`);
      return kExit.failed;
    }
    throw err;
  }
}

/** `--help` or `-h` among a command's arguments (before a `--`, after which all is positional). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

const isMain = (() => {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
})();

/**
 * The command line of this process, on its own streams, its exit code set when it ends: what the
 * ctxfold binary runs, and the test-only entry (scripts/test-cli.ts) with a test's hooks.
 */
export function main(argv: string[], hooks: CliTestHooks = {}): void {
  // A reader that stops early (`| head`) is not an error for a command whose stdout is a report
  // (stats, explain…); any other failure to write stdout (a full disk under `> FILE`) stops the
  // command, naming stdout and the OS code. A command that waits on its writes (writeAll: compact
  // -o -, whose stdout is its output, show, eval) holds a listener of its own and decides.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (process.stdout.listenerCount("error") > 1) return;
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    process.stderr.write(`ctxfold: cannot write stdout: ${err.code} (${err.message})\n`);
    process.exit(kExit.failed);
  });
  // A command whose work awaits what can no longer happen would end with the event loop, exit 0
  // and half its output: said, and exit 1, instead.
  let finished = false;
  process.on("beforeExit", () => {
    if (finished) return;
    finished = true;
    process.stderr.write(`ctxfold: internal error: the command stopped before it finished (nothing left to wait for)\n`);
    process.exitCode = kExit.failed;
  });
  runCli(argv, kProcessIo, hooks).then(
    (code) => {
      finished = true;
      process.exitCode = code;
    },
    (err: unknown) => {
      finished = true;
      process.stderr.write(`ctxfold: internal error: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = kExit.failed;
    },
  );
}

if (isMain) main(process.argv.slice(2));
