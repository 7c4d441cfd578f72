/**
 * `ctxfold bench [--quick] [--json] [--scope LIST] [--readme]`: the project's benchmarks, as
 * `npm run bench` runs them — `node dist/bench/run.js ARGS` in the package root — with every
 * argument passed through unchanged (the bench runner owns its options) and its stdout and stderr
 * streamed as they come.
 *
 * The script is found from this file's own place, as load-core.ts finds build/core.wasm: the
 * package root is two levels above src/cli/ whether this runs from the sources (tests) or from
 * dist/src/cli/ (the built package), recognised by its package.json naming ctxfold.
 * A test names another script (CliTestHooks.benchScript).
 * An installed package ships dist/src and build/core.wasm only, not dist/bench: then one line
 * says so on stderr and the exit code is 1.
 *
 * Exit: the benchmark's own exit code; 130 when it was interrupted (SIGINT is forwarded to it and
 * its end awaited), 128 + n for another signal n; 1 when the script is absent or cannot start.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { kExit, packageRoot, type CliIo, type CliTestHooks } from "../common.js";
import { fail } from "../runs.js";

/** The bench runner to start (`override` when given) and the directory to start it in; `script` may not exist. */
export function locateBench(override?: string): { script: string; cwd: string } {
  if (override) return { script: override, cwd: packageRoot()?.root ?? dirname(override) };
  const root = packageRoot()?.root ?? fileURLToPath(new URL("../../../", import.meta.url));
  return { script: join(root, "dist", "bench", "run.js"), cwd: root };
}

export async function bench(argv: string[], io: CliIo, hooks: CliTestHooks = {}): Promise<number> {
  const { script, cwd } = locateBench(hooks.benchScript);
  if (!existsSync(script)) {
    const why = hooks.benchScript ? "(the test's benchScript)" : "(an installed package has no bench/: run it from a checkout built with `npm run build`)";
    return fail(io, "bench", `no benchmark script at ${script} ${why}`);
  }
  const child = spawn(process.execPath, [script, ...argv], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(io.stdout, { end: false });
  child.stderr.pipe(io.stderr, { end: false });
  let interrupted = false;
  const off = io.onInterrupt(() => {
    interrupted = true;
    child.kill("SIGINT");
  });
  try {
    const { code, signal, error } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      child.once("error", (error) => resolve({ code: null, signal: null, error }));
      // "close", not "exit": the child's output has been read to the end by then.
      child.once("close", (code, signal) => resolve({ code, signal }));
    });
    if (error) return fail(io, "bench", `cannot start ${script}: ${error.message}`);
    if (interrupted || signal === "SIGINT") return kExit.interrupted;
    if (signal) return 128 + (constants.signals[signal] ?? 0);
    return code ?? kExit.failed;
  } finally {
    off();
  }
}
