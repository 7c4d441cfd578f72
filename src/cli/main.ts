#!/usr/bin/env node
/**
 * The ctxfold command: a dispatcher over src/cli/commands/. Every command takes its argv and a
 * CliIo and returns its exit code (kExit), so tests run them in-process as well as spawned.
 */
import { pathToFileURL } from "node:url";
import { realpathSync } from "node:fs";
import { CtxfoldError } from "../errors.js";
import { exitCodeOf, kExit, kProcessIo, UsageError, type CliIo, type CliTestHooks, type Command } from "./common.js";
import { count, hash } from "./commands/count.js";
import { compact } from "./commands/compact.js";
import { stats } from "./commands/stats.js";
import { explain } from "./commands/explain.js";
import { show } from "./commands/show.js";
import { validate } from "./commands/validate.js";
import { bench } from "./commands/bench.js";
import { evalCommand } from "./commands/eval.js";
import { worker } from "./commands/worker.js";

export const kUsage = `usage: ctxfold <command> [options]

commands:
  compact IN.jsonl[.gz]|- -o OUT.jsonl|- --budget N
          [--format auto|openai|anthropic|responses|ai-sdk|langchain] [--mode tiered|legacy]
          [--preset NAME] [--offload-dir DIR] [--workers N] [--max-worker-heap-mb N|0]
          [--resume] [--strict] [--redact-offload] [--json] [--quiet]
                compacts every run (one per line: a messages array, or an object with
                "messages" whose other fields are kept) to the budget, in input order and format;
                --redact-offload redacts secrets in the offload store too (a ref then gives
                back the redacted text: the secret is gone for good)
          [--queue redis://HOST:PORT [--shard-mb M] [--work-dir DIR]]
                with --queue, shards of M MB (default 4) are compacted by ctxfold worker
                processes on any machine; shards and results pass through DIR (default
                OUT.work/), which every machine mounts at the same path
  worker --queue redis://HOST:PORT [--concurrency N] [--offload-dir DIR] [--stall-ms N]
          [--max-worker-heap-mb N|0] [--quiet]
                takes shards of compact --queue batches until SIGINT/SIGTERM (the first
                finishes the shards in hand); a worker silent for --stall-ms (default 30000)
                loses its shard to another
  stats IN [--budget N,...] [--exact] [--encoding o200k_base|cl100k_base] [--json]
                token distribution per run, role and tool category; runs over each budget
  explain IN --run ID --budget N [--format F] [--mode tiered|legacy] [--preset NAME]
          [--offload-dir DIR] [--json]
                per stage: what was compacted, why, tokens before and after, refs
  show REF --offload-dir DIR
                the stored bytes of a ref
  validate IN [--format F] [--errors-only] [--json]
                provider-rule issues of every run, by line and path
  eval IN --budget N,... [--config FILE] [--compare FILE] [--against langchain,mastra,ai-sdk]
          [--points N] [--runs N] [--trace N|ID,...] [--format F]
          [--fail-under metric=value,...] [--pricing anthropic|openai|read=R,write=W]
          [--json] [--html FILE] [--quiet]
                replays each run prompt by prompt and scores the compaction per budget
                (exit 1 when a --fail-under threshold is missed)
  bench [--quick] [--json]
                the project's benchmarks (npm run bench)
  count FILE|- [--encoding o200k_base|cl100k_base] [--exact] [--jsonl]
                tokens of a text file, or with --jsonl of each run
  hash FILE|-   xxh64 content hash of a text file

exit codes: 0 done; 1 failed (bad input under --strict, unreadable input, I/O error, a queue
(Redis) that cannot be reached or was lost: rerun with --resume);
2 bad usage, or refused before writing anything (compact: an output that is the input,
a --resume whose checkpoint is not of this input and options or whose input changed since);
3 done, some runs passed through uncompacted (see OUT.errors.jsonl);
130 interrupted by SIGINT or SIGTERM (checkpoint written: rerun with --resume)`;

const kCommands: Record<string, Command> = {
  compact, worker, stats, explain, show, validate, eval: evalCommand, bench, count, hash,
};

/**
 * Runs one command line; never throws (errors become a message on stderr and an exit code).
 * `hooks` are a test's (CliTestHooks); the ctxfold command passes none.
 */
export async function runCli(argv: string[], io: CliIo = kProcessIo, hooks: CliTestHooks = {}): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    io.stdout.write(kUsage + "\n");
    return kExit.ok;
  }
  const run = kCommands[command];
  if (!run) {
    io.stderr.write(`ctxfold: unknown command ${JSON.stringify(command)}\n${kUsage}\n`);
    return kExit.usage;
  }
  try {
    return await run(rest, io, hooks);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`ctxfold ${command}: ${err.message}\n(ctxfold --help for usage)\n`);
      return kExit.usage;
    }
    if (CtxfoldError.isInstance(err)) {
      io.stderr.write(`ctxfold ${command}: ${err.message}\n`);
      return exitCodeOf(err);
    }
    const code = (err as NodeJS.ErrnoException).code;
    // OS errors (ENOENT, EACCES…) and zlib's (Z_DATA_ERROR: a corrupt .gz) are the input's fault.
    if (typeof code === "string" && /^(E[A-Z]+|Z_[A-Z_]+)$/.test(code)) {
      io.stderr.write(`ctxfold ${command}: ${(err as Error).message}\n`);
      return kExit.failed;
    }
    throw err;
  }
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
  // A reader that stops early (`| head`) is not an error; any other failure to write stdout (a
  // full disk under `> FILE`) stops the command, naming stdout and the OS code.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
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
