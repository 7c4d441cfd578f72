// What a queue's jobs and a work dir's files can make a worker or a producer do: jobs planted in
// Redis by hand (traversal shard ids, paths outside the worker's roots, links out of its work dir)
// are refused without a read or a write outside the roots; results forged or damaged in the work
// dir are refused by the producer, naming the file. Password-bearing queue URLs are never echoed.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerProcess, type WorkerProcess } from "../../bench/redis.js";
import { emptyStats } from "../../src/pool/job.js";
import { kQueueName, queueAddress } from "../../src/queue/address.js";
import { packResult, shardId, type ShardJob } from "../../src/queue/shard.js";
import { sealResult } from "../../src/queue/result.js";
import { generatedRunLines } from "../helpers.js";
import { cli, freePort, kNoRedisReason, kRedisServer, startRedis, until, type TestRedis } from "./redis.js";

const kTestCli = fileURLToPath(new URL("../../dist/scripts/test-cli.js", import.meta.url));
/** What the victim's file holds: it must never appear in anything a worker or a producer wrote. */
const kSecret = "VictimSecretZq81Tt";

let base: string;
beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), "ctxfold-confine-"));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Every file under `dir` (links not followed), with its bytes. */
function filesUnder(dir: string): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) found.set(p, readFileSync(p));
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

describe("queue URLs with a password (no Redis needed)", () => {
  const bad = [
    "redis://:S3cr3tPw@h:99999",
    "redis://me:S3cr3tPw@h:99999",
    "http://me:S3cr3tPw@h:1",
    "me:S3cr3tPw@localhost:6379",
    "redis://me:S3cr3tPw@h:1/x",
    "redis://me:S3cr3tPw@:1",
    "redis://S3cr3tPw@h:99999",
    "redis://me:S3cr3tPw@@h:1/x",
  ];
  it("every usage error of compact and worker masks the password (and a lone user part)", async () => {
    const input = path.join(base, "url-in.jsonl");
    writeFileSync(input, generatedRunLines(1, 3)[0] + "\n");
    for (const url of bad) {
      for (const argv of [
        ["compact", input, "-o", path.join(base, "url-out.jsonl"), "--budget", "3000", "--queue", url],
        ["worker", "--queue", url, "--work-dir", base],
      ]) {
        const r = await cli(argv);
        expect(r.code, `${argv[0]} ${url}: ${r.err}`).toBe(2);
        expect(r.err, url).toContain("--queue");
        expect(r.err, url).not.toContain("S3cr3tPw");
        expect(r.err, url).toContain("***");
      }
    }
  });

  it("an unreachable queue's message masks it too", async () => {
    const port = await freePort();
    const r = await cli(["worker", "--queue", `redis://S3cr3tPw@127.0.0.1:${port}`, "--work-dir", base]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`cannot reach the queue at redis://***@127.0.0.1:${port}`);
    expect(r.err).not.toContain("S3cr3tPw");
  });

  it("caps --concurrency at twice the cores as compact caps --workers, saying so before it connects", async () => {
    const port = await freePort();
    const cap = 2 * availableParallelism();
    const r = await cli(["worker", "--queue", `redis://127.0.0.1:${port}`, "--work-dir", base, "--concurrency", "1000"]);
    expect(r.err).toContain(`ctxfold worker: --concurrency 1000 is more than this machine can use: using ${cap} (twice its ${availableParallelism()} cores)\n`);
    expect(r.code).toBe(1);
  });
});

describe.skipIf(!kRedisServer)(`jobs planted in Redis${kRedisServer ? "" : ` — ${kNoRedisReason}`}`, () => {
  let redis: TestRedis;
  let queue: Queue;
  let worker: WorkerProcess;
  let root: string;
  let work: string;
  let victim: string;
  let planted = 0;
  const options = () => ({ budget: 3000, format: "auto" as const, mode: "tiered" as const, file: "in.jsonl", offloadDir: path.join(root, "offload") });
  /** A run whose compaction offloads (a long tool output), holding the secret when asked. */
  const runBytes = (secret = "") => Buffer.from(generatedRunLines(1, 7)[0].replace(/"content":"/, `"content":"${secret}`) + "\n");

  beforeAll(async () => {
    redis = await startRedis();
    root = path.join(base, "root");
    work = path.join(root, "work");
    victim = path.join(base, "victim");
    for (const d of [path.join(work, "shards"), path.join(work, "results"), path.join(victim, "shards"), path.join(victim, "results")])
      mkdirSync(d, { recursive: true });
    writeFileSync(path.join(victim, "secret.jsonl"), runBytes(kSecret), { mode: 0o600 });
    chmodSync(path.join(victim, "secret.jsonl"), 0o600);
    const connection = queueAddress(redis.url).options;
    queue = new Queue(kQueueName, { connection });
    worker = await startWorkerProcess(kTestCli, redis.url, ["--stall-ms", "500", "--work-dir", root]);
  });
  afterAll(async () => {
    await worker?.kill("SIGTERM");
    await queue?.close();
    await redis?.kill();
  });

  /** A well-formed job for `bytes` (its shard written into `dir`/shards), with `change` applied. */
  function jobFor(dir: string, bytes: Buffer, change: Partial<Record<keyof ShardJob, unknown>> = {}): Record<string, unknown> {
    const id = shardId(options(), 1, bytes);
    writeFileSync(path.join(dir, "shards", `${id}.jsonl`), bytes);
    return {
      batch: "7d1e4c2a-0000-4000-8000-000000000001",
      storage: pathToFileURL(dir).href,
      shard: id,
      firstLine: 1,
      options: options(),
      key: "ab".repeat(32),
      ...change,
    };
  }

  /**
   * Adds `data` as a job and waits for it: "completed", or the reason it failed. Polled rather
   * than job.waitUntilFinished, whose own check can still be in flight on the queue's connection
   * after the job's event resolved it, and reject unhandled when the queue closes.
   */
  async function plant(data: Record<string, unknown>): Promise<string> {
    const job = await queue.add("shard", data as unknown as ShardJob, { jobId: `planted-${++planted}`, attempts: 2 });
    let state = "";
    await until(async () => ["completed", "failed"].includes((state = await job.getState())));
    return state === "completed" ? "completed" : ((await queue.getJob(job.id!))?.failedReason ?? "failed");
  }

  it("refuses, typed and logged, every job naming a shard or a path outside its roots", async () => {
    const legit = runBytes();
    symlinkSync(victim, path.join(root, "link-out"));
    const linked = path.join(root, "linked-results");
    mkdirSync(path.join(linked, "shards"), { recursive: true });
    symlinkSync(path.join(victim, "results"), path.join(linked, "results"));
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["a traversal shard id", jobFor(work, legit, { shard: "../../../victim/secret" }), /shard: expected a shard id/],
      ["an absolute shard id", jobFor(work, legit, { shard: path.join(victim, "secret") }), /shard: expected a shard id/],
      ["a shard id that is no string", jobFor(work, legit, { shard: 5 }), /shard: expected a shard id/],
      ["a work dir outside", jobFor(victim, legit), /storage: .* is not inside this worker's --work-dir/],
      [
        "a work dir reached through a link out",
        { ...jobFor(victim, legit), storage: pathToFileURL(path.join(root, "link-out")).href },
        /storage: .* is not inside this worker's --work-dir/,
      ],
      ["a results dir that links out", jobFor(linked, legit), /results.* is not inside this worker's --work-dir/],
      [
        "an offload dir outside",
        jobFor(work, legit, { options: { ...options(), offloadDir: path.join(victim, "offload") } }),
        /options\.offloadDir: .* is not inside this worker's --work-dir/,
      ],
      [
        "a relative offload dir",
        jobFor(work, legit, { options: { ...options(), offloadDir: "../../victim/offload" } }),
        /options\.offloadDir: expected an absolute path/,
      ],
      ["a storage that is no file: URL", jobFor(work, legit, { storage: "s3://bucket/x" }), /storage: expected a file: URL/],
      ["a first line that is no line number", jobFor(work, legit, { firstLine: "1; x" }), /firstLine: expected a line number/],
      [
        "options that are not the shard's",
        jobFor(work, legit, { options: { ...options(), budget: 5 } }),
        /is not the hash of its bytes, first line and options/,
      ],
    ];
    for (const [what, data, message] of cases) {
      const reason = await plant(data);
      expect(reason, what).toMatch(/^E_JOB_REFUSED: job planted-\d+: /);
      expect(reason, what).toMatch(message);
    }
    // A shard planted as a link to the victim's file, under the id of the victim's bytes: not followed.
    const secretId = shardId(options(), 1, readFileSync(path.join(victim, "secret.jsonl")));
    symlinkSync(path.join(victim, "secret.jsonl"), path.join(work, "shards", `${secretId}.jsonl`));
    expect(await plant({ ...jobFor(work, legit), shard: secretId })).toMatch(/is a symbolic link/);
    expect(worker.child.exitCode, worker.log()).toBe(null); // still serving
    expect(worker.log()).toMatch(/refused job planted-1: shard: expected a shard id/);
    // A job inside its roots is compacted: the worker was able to, and chose not to.
    expect(await plant(jobFor(work, legit))).toBe("completed");
    expect(readdirSync(path.join(work, "results"))).toHaveLength(1);
    // Nothing outside the roots was written; the victim's bytes are nowhere.
    const victimFiles = [...filesUnder(victim).keys()].map((f) => path.relative(victim, f)).sort();
    expect(victimFiles).toEqual(["secret.jsonl", ...readdirSync(path.join(victim, "shards")).map((f) => path.join("shards", f))].sort());
    expect(existsSync(path.join(victim, "offload"))).toBe(false);
    for (const [file, bytes] of filesUnder(root)) expect(bytes.includes(kSecret), file).toBe(false);
    expect(worker.log()).not.toContain(kSecret);
    for (const job of await queue.getFailed()) expect(job.failedReason).not.toContain(kSecret);
  });

  describe("results in the work dir", () => {
    let input: string;
    beforeAll(async () => {
      await worker.kill("SIGTERM"); // each test starts its own once the results are planted
      input = path.join(base, "in.jsonl");
      writeFileSync(input, generatedRunLines(24, 31).join("\n") + "\n");
    });

    /** A producer over `input`, its shards queued while no worker runs; `plantResult` then writes each shard's result, and a worker runs them. */
    async function withPlantedResults(name: string, plantResult: (id: string) => Buffer) {
      const out = path.join(root, `${name}.jsonl`);
      await queue.drain(true); // the jobs an earlier test's stopped producer left
      const producer = cli(["compact", input, "-o", out, "--budget", "3000", "--queue", redis.url, "--shard-mb", "0.2", "--quiet"]);
      const shards = path.join(`${out}.work`, "shards");
      await until(async () => existsSync(shards) && readdirSync(shards).length === 3 && (await queue.getWaitingCount()) >= 3);
      const ids = readdirSync(shards).map((f) => f.replace(/\.jsonl$/, ""));
      mkdirSync(path.join(`${out}.work`, "results"), { recursive: true });
      for (const id of ids) writeFileSync(path.join(`${out}.work`, "results", `${id}.result`), plantResult(id));
      const finisher = await startWorkerProcess(kTestCli, redis.url, ["--stall-ms", "500", "--work-dir", root]);
      const r = await producer;
      await finisher.kill("SIGTERM");
      return { ...r, out, ids };
    }

    it("a producer whose work dir is outside the workers' --work-dir stops, exit 1, saying so", async () => {
      const elsewhere = path.join(base, "elsewhere");
      mkdirSync(elsewhere, { recursive: true });
      await queue.drain(true);
      const strict = await startWorkerProcess(kTestCli, redis.url, ["--stall-ms", "500", "--work-dir", elsewhere]);
      const out = path.join(root, "misplaced.jsonl");
      const r = await cli(["compact", input, "-o", out, "--budget", "3000", "--queue", redis.url, "--shard-mb", "0.2", "--quiet"]);
      await strict.kill("SIGTERM");
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(/a worker refused job [0-9a-f]{32}: storage: .*misplaced\.jsonl\.work is not inside this worker's --work-dir .*elsewhere/);
      expect(strict.log()).toMatch(/refused job [0-9a-f]{32}: storage:/);
      expect(existsSync(path.join(`${out}.work`, "results"))).toBe(false);
    });

    it("a forged result, well-formed and of the right shard, is refused naming the file: never written out", async () => {
      const forged = (id: string) =>
        Buffer.from(packResult({ out: Buffer.from(`{"forged":"${id}"}\n`), errors: [], stats: emptyStats(), lines: 9 }, { worker: "x:1", attempt: 1, ms: 1 }));
      const r = await withPlantedResults("forged", forged);
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(new RegExp(`ctxfold compact: .*results/(${r.ids.join("|")})\\.result`));
      expect(r.err).not.toMatch(/RangeError| {4}at /);
      expect(readFileSync(r.out, "utf8")).not.toContain("forged");
    });

    it("a forged result sealed with its own hash but not the batch's key is refused", async () => {
      const sealed = (id: string) =>
        Buffer.from(
          sealResult(
            id,
            "cd".repeat(32),
            packResult({ out: Buffer.from("{}\n"), errors: [], stats: emptyStats(), lines: 1 }, { worker: "x:1", attempt: 1, ms: 1 }),
          ),
        );
      const r = await withPlantedResults("sealed", sealed);
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(/not sealed with this batch's result key/);
      expect(r.err).toMatch(/results\/[0-9a-f]{32}\.result/);
    });

    it("a damaged result is E_CORRUPT naming the file, not a RangeError", async () => {
      for (const [name, bytes] of [
        ["tiny", Buffer.from([1, 2])],
        ["garbage", Buffer.from("\u0000\u0001garbage that is no result\n")],
        ["huge-length", Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f])],
      ] as const) {
        const r = await withPlantedResults(`damaged-${name}`, () => bytes);
        expect(r.code, `${name}: ${r.err}`).toBe(1);
        expect(r.err, name).toMatch(/results\/[0-9a-f]{32}\.result/);
        expect(r.err, name).not.toMatch(/RangeError|internal error| {4}at /);
      }
    });
  });
});
