// The ctxfold command spawned as a user runs it, for the tests of what only a process shows
// (exit codes, signals, pipes, redirections); with a test's hooks through the test-only entry.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { CliTestHooks } from "../../src/cli/common.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
/** The same command with a test's hooks (small chunks, a slow writer, a worker that dies): test-only, never shipped. */
const kTestCli = fileURLToPath(new URL("../../dist/scripts/test-cli.js", import.meta.url));

/** How to start the CLI: the shipped command, or the test-only entry when there are hooks to set. */
export function command(args: string[], hooks: CliTestHooks | undefined): { argv: string[]; env: NodeJS.ProcessEnv } {
  if (!hooks) return { argv: [kCli, ...args], env: process.env };
  return { argv: [kTestCli, ...args], env: { ...process.env, CTXFOLD_TEST_HOOKS: JSON.stringify(hooks) } };
}

export interface CliRunOptions {
  hooks?: CliTestHooks;
  stdin?: Buffer;
  /** Files opened as its stdin or stdout, as a shell's `< IN` and `> OUT` do (relative to `dir`). */
  redirect?: { stdin?: string; stdout?: string };
}

/** The CLI spawned in `dir` and waited for. */
export function spawnCli(dir: string, args: string[], options: CliRunOptions = {}) {
  const stdin = options.redirect?.stdin === undefined ? "pipe" : openSync(path.resolve(dir, options.redirect.stdin), "r");
  const stdout = options.redirect?.stdout === undefined ? "pipe" : openSync(path.resolve(dir, options.redirect.stdout), "w");
  try {
    const { argv, env } = command(args, options.hooks);
    const r = spawnSync(process.execPath, argv, {
      cwd: dir,
      env,
      input: options.stdin,
      maxBuffer: 1 << 30,
      stdio: [stdin, stdout, "pipe"],
    });
    return { code: r.status, stdout: r.stdout ?? Buffer.alloc(0), stderr: r.stderr.toString() };
  } finally {
    for (const fd of [stdin, stdout]) if (typeof fd === "number") closeSync(fd);
  }
}

/** The CLI started in `dir`, not waited for: its process, and its exit code and stderr once it ends. */
export function startCli(dir: string, args: string[], options: { hooks?: CliTestHooks; stdio?: ("pipe" | "ignore" | number)[] } = {}) {
  const { argv, env } = command(args, options.hooks);
  const child: ChildProcess = spawn(process.execPath, argv, { cwd: dir, env, stdio: options.stdio ?? ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stderr }));
  });
  return { child, exited };
}

/**
 * The CLI spawned in `dir` with small, slowly written chunks, sent SIGINT once the checkpoint
 * beside `output` (a path) exists; its exit code.
 */
export async function interruptedCli(dir: string, args: string[], output: string): Promise<number | null> {
  const { argv, env } = command(args, { compact: { chunkBytes: 60_000, testHooks: { chunkDelayMs: 150 } } });
  const child = spawn(process.execPath, argv, { cwd: dir, env });
  return new Promise<number | null>((resolve) => {
    const poll = setInterval(() => {
      if (existsSync(`${output}.checkpoint.json`)) {
        clearInterval(poll);
        child.kill("SIGINT");
      }
    }, 5);
    child.on("exit", (c) => {
      clearInterval(poll);
      resolve(c);
    });
  });
}
