// The shared storage of distributed batches: content-named shards, first-writer results, and
// errors that name the work dir.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { emptyStats } from "../../src/pool/job.js";
import { queueAddress, shownQueueUrl } from "../../src/queue/address.js";
import { newResultKey, openResult, sealResult } from "../../src/queue/result.js";
import { packResult, shardId } from "../../src/queue/shard.js";
import { DirStorage } from "../../src/queue/storage.js";
import { thrown } from "../helpers.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fresh = () => {
  const d = mkdtempSync(path.join(tmpdir(), "ctxfold-storage-"));
  dirs.push(d);
  return d;
};
const bytes = (s: string) => new TextEncoder().encode(s);

describe("DirStorage", () => {
  it("round-trips shards and results by id, reopened from its URL as a worker does", () => {
    const s = new DirStorage(path.join(fresh(), "work"));
    s.probe();
    s.putShard("a1", bytes("line\n"));
    const other = new DirStorage(fileURLToPath(s.url));
    expect(Buffer.from(other.readShard("a1")!).toString()).toBe("line\n");
    expect(other.readResult("a1")).toBeUndefined();
    other.putResult("a1", bytes("first"));
    other.putResult("a1", bytes("second")); // a retried shard's result: the first writer's stays
    expect(Buffer.from(s.readResult("a1")!).toString()).toBe("first");
    s.remove("a1");
    expect(s.readShard("a1")).toBeUndefined();
    expect(s.readResult("a1")).toBeUndefined();
  });

  it("clear removes every shard and result, and is a no-op on a new dir", () => {
    const dir = path.join(fresh(), "work");
    const s = new DirStorage(dir);
    s.clear();
    for (const id of ["x", "y"]) {
      s.putShard(id, bytes(id));
      s.putResult(id, bytes(id));
    }
    s.clear();
    expect([...readdirSync(path.join(dir, "shards")), ...readdirSync(path.join(dir, "results"))]).toEqual([]);
  });

  it("a work dir that cannot be written: E_WORK_DIR naming it and the OS code", () => {
    const file = path.join(fresh(), "file");
    writeFileSync(file, "");
    const s = new DirStorage(path.join(file, "work"));
    expect(thrown(() => s.probe(), "E_WORK_DIR").message).toMatch(/ENOTDIR/);
    expect(thrown(() => s.putShard("a", bytes("x")), "E_WORK_DIR").message).toMatch(/the work dir .*file\/work/);
  });
});

describe("shard ids", () => {
  it("are the same for the same lines, first line and options, and differ when any differs", () => {
    const job = { budget: 8000, format: "auto" as const, mode: "tiered" as const, file: "in.jsonl" };
    const a = shardId(job, 1, bytes("{}\n"));
    expect(a).toMatch(/^[0-9a-f]{32}$/); // BullMQ takes no ':' in a custom id
    expect(shardId({ ...job }, 1, bytes("{}\n"))).toBe(a);
    for (const other of [shardId(job, 2, bytes("{}\n")), shardId({ ...job, budget: 4000 }, 1, bytes("{}\n")), shardId(job, 1, bytes("[]\n"))])
      expect(other).not.toBe(a);
  });
});

describe("sealed results", () => {
  const id = "0123456789abcdef0123456789abcdef";
  const key = newResultKey();
  const body = packResult({ out: bytes("{}\n"), errors: [], stats: emptyStats(), lines: 1 }, { worker: "h:1", attempt: 1, ms: 2 });
  const sealed = Buffer.from(sealResult(id, key, body));

  it("open to their output and meta for their shard and key", () => {
    const { out, meta } = openResult("r", id, key, sealed);
    expect(Buffer.from(out).toString()).toBe("{}\n");
    expect(meta).toMatchObject({ worker: "h:1", lines: 1 });
  });

  it("are refused, E_CORRUPT naming the file, when anything does not hold", () => {
    const flipped = Buffer.from(sealed);
    flipped[flipped.length - 3] ^= 1;
    const cases: [Uint8Array, string, string, RegExp][] = [
      [sealed, "fedcba9876543210fedcba9876543210", key, /the result of shard 0123.*, not of fedc/],
      [sealed, id, newResultKey(), /not sealed with this batch's result key/],
      [flipped, id, key, /do not match their SHA-256/],
      [sealed.subarray(0, sealed.length - 5), id, key, /do not match their SHA-256/],
      [body, id, key, /not a shard result/],
      [bytes(""), id, key, /not a shard result/],
      [bytes("\u0001"), id, key, /not a shard result/],
      [sealResult(id, key, bytes("\u0000\u0000")), id, key, /cut short/],
      [sealResult(id, key, Buffer.from([0x7b, 1, 0, 0, 0])), id, key, /meta is not JSON/],
      [sealResult(id, key, Buffer.from([0xff, 0xff, 0xff, 0x7f])), id, key, /cut short/],
    ];
    for (const [b, shard, k, message] of cases) {
      const err = thrown(() => openResult("/w/results/x.result", shard, k, b), "E_CORRUPT");
      expect(err.message).toMatch(/^\/w\/results\/x\.result: /);
      expect(err.message).toMatch(message);
    }
  });
});

describe("queue addresses", () => {
  it("take redis:// and rediss:// with user, password and database; the password is masked", () => {
    const a = queueAddress("redis://me:p%40ss@cache.internal:6380/2");
    expect(a.options).toMatchObject({ host: "cache.internal", port: 6380, username: "me", password: "p@ss", db: 2 });
    expect(a.shown).toBe("redis://me:***@cache.internal:6380/2");
    expect(queueAddress("rediss://[::1]").options).toMatchObject({ host: "::1", port: 6379, tls: {} });
  });

  it("are shown with their credentials masked, parsed or not", () => {
    for (const [url, shown] of [
      ["redis://h:1", "redis://h:1"],
      ["redis://me:pw@h:1/2", "redis://me:***@h:1/2"],
      ["redis://:pw@h:99999", "redis://***@h:99999"],
      ["redis://pw@h", "redis://***@h"],
      ["me:pw@h:1", "me:***@h:1"],
      ["redis://me:p@w@h", "redis://me:***@h"],
      ["rediss://me:pw@", "rediss://me:***@"],
    ])
      expect(shownQueueUrl(url), url).toBe(shown);
    expect(queueAddress("redis://pw@h:1").shown).toBe("redis://***@h:1");
  });

  it("refuse what is not a Redis URL, saying what is expected", () => {
    for (const [url, message] of [
      ["localhost:6379", /expected redis:\/\/HOST:PORT/],
      ["http://h:1", /or rediss:/],
      ["redis://h:1/db", /database number/],
      ["not a url", /expected redis/],
    ] as const) {
      expect(thrown(() => queueAddress(url), "E_BAD_INPUT").message).toMatch(message);
    }
  });
});
