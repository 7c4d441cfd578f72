// The redis-server the tests of distributed batches run on (bench/redis.ts's launcher), and the
// producer run in-process as those tests run it.
import type { CliTestHooks } from "../../src/cli/common.js";
import { runCli } from "../../src/cli/main.js";
import { startRedis as launch, type LocalRedis } from "../../bench/redis.js";
import { fakeIo } from "../cli/fake-io.js";
import { findExecutable } from "../helpers.js";

export { freePort } from "../../bench/redis.js";
export type TestRedis = LocalRedis;

/** Debian's redis-server (installed by .ci/run when missing), or null. */
export const kRedisServer = findExecutable(["redis-server"]);
export const kNoRedisReason = "skipped: redis-server is not installed (.ci/run installs it from Debian's packages)";

export async function startRedis(): Promise<TestRedis> {
  if (!kRedisServer) throw new Error(kNoRedisReason);
  return launch(kRedisServer);
}

/** The command in-process (the producer), with a test's hooks. */
export async function cli(argv: string[], hooks: CliTestHooks = {}) {
  const f = fakeIo();
  const code = await runCli(argv, f.io, hooks);
  return { code, out: f.stdout(), err: f.stderr() };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `f()` holds (at most 20 s). */
export async function until(f: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400 && !(await f()); i++) await sleep(50);
  if (!(await f())) throw new Error("timed out waiting");
}
