// The redis-server the tests of distributed batches run on (bench/redis.ts's launcher).
import { startRedis as launch, type LocalRedis } from "../../bench/redis.js";
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
