// Distributed batches: `ctxfold compact --queue` with `ctxfold worker` processes on a real
// redis-server (skipped, with the reason, where it is not installed), against the local engine.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliTestHooks } from "../../src/cli/common.js";
import { runCli } from "../../src/cli/main.js";
import { kQueueName } from "../../src/queue/address.js";
import { Redis } from "ioredis";
import { fakeIo } from "../cli/fake-io.js";
import { generatedRunLines } from "../helpers.js";
import { startWorkerProcess, type WorkerProcess } from "../../bench/redis.js";
import { cli, freePort, kNoRedisReason, kRedisServer, sleep, startRedis, until, type TestRedis } from "./redis.js";

const kTestCli = fileURLToPath(new URL("../../dist/scripts/test-cli.js", import.meta.url));
const kBudget = 3000;
const kShardMb = "0.2";

let dir: string;
let input: string;
let local: { out: Buffer; errors: Buffer };
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-queue-"));
  // ~2.4 MB in every format, a malformed line and a blank one: 3 shards (the input is read in 1 MiB blocks).
  const lines = generatedRunLines(24, 31);
  lines.splice(7, 0, "{not json");
  lines.splice(15, 0, "");
  input = path.join(dir, "in.jsonl");
  writeFileSync(input, lines.join("\n") + "\n");
  const r = await cli(["compact", input, "-o", path.join(dir, "local.jsonl"), "--budget", String(kBudget), "--workers", "1", "--quiet"]);
  expect(r.code).toBe(3);
  local = { out: readFileSync(path.join(dir, "local.jsonl")), errors: readFileSync(path.join(dir, "local.jsonl.errors.jsonl")) };
});

afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** A `ctxfold worker` process (the test entry, with `hooks`), once it takes shards. */
async function startWorker(redis: TestRedis, hooks: CliTestHooks = {}, args: string[] = []): Promise<WorkerProcess> {
  const w = await startWorkerProcess(kTestCli, redis.url, ["--work-dir", dir, "--stall-ms", "500", ...args], {
    ...process.env,
    CTXFOLD_TEST_HOOKS: JSON.stringify(hooks),
  });
  children.push(w.child);
  return w;
}

const stop = (w: WorkerProcess) => w.kill("SIGTERM");
const compactArgs = (redis: TestRedis, out: string, ...more: string[]) => [
  "compact",
  input,
  "-o",
  out,
  "--budget",
  String(kBudget),
  "--queue",
  redis.url,
  "--shard-mb",
  kShardMb,
  ...more,
];

/** The output and errors file equal the local engine's, byte for byte. */
function expectLocal(out: string): void {
  expect(readFileSync(out).equals(local.out)).toBe(true);
  expect(readFileSync(`${out}.errors.jsonl`).equals(local.errors)).toBe(true);
}

describe("a bad queue, work dir or flag (no Redis needed)", () => {
  it("Redis unreachable: exit 1 naming the URL, before any file is written", async () => {
    const port = await freePort();
    const out = path.join(dir, "unreachable.jsonl");
    const r = await cli(["compact", input, "-o", out, "--budget", "3000", "--queue", `redis://127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`cannot reach the queue at redis://127.0.0.1:${port}: ECONNREFUSED`);
    expect(existsSync(out)).toBe(false);
    const w = await cli(["worker", "--queue", `redis://127.0.0.1:${port}`, "--work-dir", dir]);
    expect(w.code).toBe(1);
    expect(w.err).toContain(`cannot reach the queue at redis://127.0.0.1:${port}`);
  });

  it("a wrong URL or shard size is bad usage (exit 2), the password never shown", async () => {
    for (const [flags, message] of [
      [["--queue", "http://localhost:6379"], "--queue: expected redis://HOST:PORT or rediss://HOST:PORT"],
      [["--queue", "localhost:6379"], "--queue: expected redis://HOST:PORT"],
      [["--queue", "redis://h:1/x"], "must be a database number"],
      [["--queue", "redis://127.0.0.1:1", "--shard-mb", "0"], "--shard-mb: expected a number of MB"],
    ] as const) {
      const r = await cli(["compact", input, "-o", path.join(dir, "bad.jsonl"), "--budget", "3000", ...flags]);
      expect(r.code, flags.join(" ")).toBe(2);
      expect(r.err).toContain(message);
    }
    const port = await freePort();
    const r = await cli(["worker", "--queue", `redis://user:s3cret@127.0.0.1:${port}`, "--work-dir", dir]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`redis://user:***@127.0.0.1:${port}`);
    expect(r.err).not.toContain("s3cret");
    expect((await cli(["worker"])).err).toContain("--queue redis://HOST:PORT is required");
    expect((await cli(["worker", "--queue", `redis://127.0.0.1:${port}`])).err).toContain("--work-dir DIR is required");
    const missing = await cli(["worker", "--queue", `redis://127.0.0.1:${port}`, "--work-dir", path.join(dir, "absent")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/--work-dir .*absent: ENOENT/);
  });

  it("a work dir that cannot be written: exit 1 naming it, nothing written", async () => {
    const file = path.join(dir, "a-file");
    writeFileSync(file, "");
    const out = path.join(dir, "nowork.jsonl");
    const r = await cli(["compact", input, "-o", out, "--budget", "3000", "--queue", "redis://127.0.0.1:1", "--work-dir", path.join(file, "work")]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`cannot write ${path.join(file, "work").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}.*ENOTDIR`));
    expect(existsSync(out)).toBe(false);
  });
});

describe.skipIf(!kRedisServer)(`on redis-server${kRedisServer ? "" : ` — ${kNoRedisReason}`}`, () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.kill();
  });

  it("two workers, one dying mid-shard: the output equals the local engine's, every ref resolves", async () => {
    // The shards start at lines 1, 11 and 20. The dying worker starts alone: it takes the first
    // shard, then the second, on which it dies; the other starts once the first is done.
    const dying = await startWorker(redis, { worker: { dieAtLine: 11 } });
    const out = path.join(dir, "two.jsonl");
    const producer = cli([...compactArgs(redis, out), "--json"]);
    await until(() => dying.log().includes("shard "));
    const steady = await startWorker(redis);
    const r = await producer;
    expect(r.code, r.err).toBe(3);
    expectLocal(out);
    expect(await dying.exited).toBe(70);
    const summary = JSON.parse(r.out) as { workers: number; retried: number; crashed: number; queue: { shards: number } };
    expect(summary).toMatchObject({ workers: 2, retried: 1, crashed: 0, queue: { shards: 3 } });
    const refs = [...new Set(readFileSync(out, "utf8").match(/workspace\/[a-z]+\/[a-z]+_[0-9a-f]+\.[a-z]+/g) ?? [])];
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect((await cli(["show", ref, "--offload-dir", `${out}.offload`])).code, ref).toBe(0);
    for (const sub of ["shards", "results"]) expect(readdirSync(path.join(`${out}.work`, sub))).toEqual([]); // each removed once written
    expect(await stop(steady)).toBe(0);
    expect(steady.log()).toMatch(/stopped after \d+ shards/);
  });

  it("a shard whose workers die twice is written through with E_WORKER_CRASH records, as locally", async () => {
    const out = path.join(dir, "twice.jsonl");
    const producer = cli([...compactArgs(redis, out), "--json"]);
    // Both die on the shard at line 11 (the one that takes it first, then the other after the
    // stalled-job check hands it over); a third finds it failed twice.
    const dying = await Promise.all([startWorker(redis, { worker: { dieAtLine: 11 } }), startWorker(redis, { worker: { dieAtLine: 11 } })]);
    expect(await Promise.all(dying.map((w) => w.exited))).toEqual([70, 70]);
    const finisher = await startWorker(redis);
    const r = await producer;
    expect(r.code, r.err).toBe(3);
    expect(JSON.parse(r.out)).toMatchObject({ crashed: 1 });
    const errors = readFileSync(`${out}.errors.jsonl`, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { line: number; code: string; reason: string });
    const crashed = errors.filter((e) => e.code === "E_WORKER_CRASH");
    expect(crashed.map((e) => e.line)).toEqual([11, 12, 13, 14, 15, 17, 18, 19]); // line 16 is blank
    expect(crashed[0].reason).toContain("failed on this shard twice");
    // Its lines pass through unchanged; every other line is the local engine's.
    const inLines = readFileSync(input, "utf8").split("\n");
    const localLines = local.out.toString("utf8").split("\n");
    readFileSync(out, "utf8")
      .split("\n")
      .forEach((l, i) => expect(l === (i + 1 >= 11 && i + 1 <= 19 ? inLines[i] : localLines[i]), `line ${i + 1}`).toBe(true));
    await stop(finisher);
  });

  it("a worker outliving a batch: the same batch again, its output and offload dir removed first, equals the local engine's", async () => {
    const worker = await startWorker(redis);
    const out = path.join(dir, "again.jsonl");
    for (const _ of [1, 2]) {
      rmSync(`${out}.offload`, { recursive: true, force: true });
      const r = await cli([...compactArgs(redis, out), "--quiet"]);
      expect(r.code, r.err).toBe(3);
      expectLocal(out);
    }
    await stop(worker);
  });

  it("a worker with --concurrency 2 and its own --offload-dir (the shared dir as its machine mounts it)", async () => {
    const mounted = path.join(dir, "mounted-offload");
    const worker = await startWorker(redis, {}, ["--concurrency", "2", "--offload-dir", mounted]);
    const out = path.join(dir, "mounted.jsonl");
    const r = await cli([...compactArgs(redis, out), "--quiet"]);
    expect(r.code, r.err).toBe(3);
    expectLocal(out);
    expect(existsSync(`${out}.offload`)).toBe(false); // the worker wrote where its machine mounts it
    const refs = [...new Set(readFileSync(out, "utf8").match(/workspace\/[a-z]+\/[a-z]+_[0-9a-f]+\.[a-z]+/g) ?? [])];
    for (const ref of refs.slice(0, 10)) expect((await cli(["show", ref, "--offload-dir", mounted])).code, ref).toBe(0);
    await stop(worker);
  });

  it("the producer killed, then --resume: re-attaches to its shards, no run lost or written twice", async () => {
    const out = path.join(dir, "resumed.jsonl");
    // Spawned, so it can be killed outright; slowed so it is killed mid-run.
    const producer = spawn(process.execPath, [kTestCli, ...compactArgs(redis, out), "--quiet"], {
      env: { ...process.env, CTXFOLD_TEST_HOOKS: JSON.stringify({ compact: { testHooks: { chunkDelayMs: 400 } } } satisfies CliTestHooks) },
      stdio: "ignore",
    });
    children.push(producer);
    const worker = await startWorker(redis);
    await until(() => existsSync(`${out}.checkpoint.json`));
    producer.kill("SIGKILL");
    const checkpoint = JSON.parse(readFileSync(`${out}.checkpoint.json`, "utf8")) as { lines: number };
    expect(checkpoint.lines).toBeGreaterThan(0);
    const r = await cli([...compactArgs(redis, out), "--resume", "--json"]);
    expect(r.code, r.err).toBe(3);
    expectLocal(out);
    expect(JSON.parse(r.out)).toMatchObject({ resumedAfterLine: checkpoint.lines });
    expect(existsSync(`${out}.checkpoint.json`)).toBe(false);
    await stop(worker);
  });

  it("a fresh start over jobs left queued by another input's producer: only this input's runs are written", async () => {
    const other = path.join(dir, "other.jsonl");
    writeFileSync(other, generatedRunLines(24, 99).join("\n") + "\n");
    const out = path.join(dir, "leftover.jsonl");
    // The other input's producer queues its shards, no worker takes them, and it is killed.
    const killed = spawn(
      process.execPath,
      [kTestCli, "compact", other, "-o", out, "--budget", String(kBudget), "--queue", redis.url, "--shard-mb", kShardMb, "--quiet"],
      { stdio: "ignore" },
    );
    children.push(killed);
    const shards = path.join(`${out}.work`, "shards");
    const redisClient = new Redis(redis.url);
    await until(() => existsSync(shards) && readdirSync(shards).length >= 2);
    for (let i = 0; i < 400 && (await redisClient.llen(`bull:${kQueueName}:wait`)) < 2; i++) await sleep(25);
    killed.kill("SIGKILL");
    expect(await redisClient.llen(`bull:${kQueueName}:wait`)).toBeGreaterThanOrEqual(2);
    redisClient.disconnect();
    // A fresh start of this input to the same output: the old shards are cleared, their jobs fail
    // on the worker (nothing to compact), and the output is this input's alone.
    const worker = await startWorker(redis);
    const r = await cli([...compactArgs(redis, out), "--quiet"]);
    expect(r.code, r.err).toBe(3);
    expectLocal(out);
    await stop(worker);
    expect(worker.log()).toContain("its batch finished or was started afresh");
  });

  it("interrupted with no worker up: the first interrupt waits for the shards in flight, a second stops at once", async () => {
    const out = path.join(dir, "nobody.jsonl");
    const f = fakeIo();
    const producer = runCli(compactArgs(redis, out), f.io);
    await until(() => existsSync(path.join(`${out}.work`, "shards")) && readdirSync(path.join(`${out}.work`, "shards")).length === 3);
    f.interrupts[0]();
    await sleep(300);
    expect(f.stderr()).toContain("finishing the shards in flight (they need a worker)… (again to stop at once)");
    f.interrupts[0]();
    expect(await producer).toBe(130);
    expect(f.stderr()).toContain("stopping at once: the shards in flight are dropped (--resume redoes them; queued ones stay queued)");
    expect(readFileSync(out).length).toBe(0);
    // Nothing was written, so there is nothing to resume: a fresh start with a worker finishes it.
    const worker = await startWorker(redis);
    const r = await cli([...compactArgs(redis, out), "--quiet"]);
    expect(r.code, r.err).toBe(3);
    expectLocal(out);
    await stop(worker);
  });

  it("Redis stopped mid-run: exit 1 naming the URL, a checkpoint; --resume once it is back finishes the batch", async () => {
    const own = await startRedis();
    try {
      const worker = await startWorker(own);
      const out = path.join(dir, "lost.jsonl");
      const hooks: CliTestHooks = { compact: { queueGraceMs: 1500, testHooks: { chunkDelayMs: 300 } } };
      const producer = cli(compactArgs(own, out, "--quiet"), hooks);
      await until(() => existsSync(`${out}.checkpoint.json`));
      await own.kill();
      const r = await producer;
      expect(r.code).toBe(1);
      expect(r.err).toContain(`lost the queue at ${own.url}`);
      expect(existsSync(`${out}.checkpoint.json`)).toBe(true);
      await until(() => worker.log().includes(`queue at ${own.url}`)); // the worker says it lost Redis, and waits
      await own.restart();
      const resumed = await cli([...compactArgs(own, out, "--resume", "--quiet")], hooks);
      expect(resumed.code, resumed.err).toBe(3);
      expectLocal(out);
      await stop(worker);
    } finally {
      await own.kill();
    }
  });
});
