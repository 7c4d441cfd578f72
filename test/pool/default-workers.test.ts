/**
 * How a batch runs when --workers is not given: one less than the cores (at most 8); on two
 * cores a pool of 2 only for inputs holding 48 MiB of runs or more (a .gz counted uncompressed,
 * from its trailer), in-process below, where the pool's start is not repaid.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { defaultWorkers, kTwoCoreInProcessBelow } from "../../src/cli/commands/compact.js";
import { generateRuns } from "../../src/gen/run.js";
import { runBatch } from "../../src/pool/engine.js";
import { runBytesOf } from "../../src/pool/input.js";

const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-default-workers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = `${generateRuns(3, 7)
  .map((r, i) => JSON.stringify({ id: `run-${i}`, messages: renderMessages(r.messages, "openai-chat") }))
  .join("\n")}\n`;

describe("the default workers", () => {
  it("are one less than the cores, at most 8; on two cores 2, with a floor of input below which the batch stays in-process", () => {
    expect(defaultWorkers(1)).toEqual({ workers: 1 });
    expect(defaultWorkers(2)).toEqual({ workers: 2, inProcessBelow: 48 * 2 ** 20 });
    expect(defaultWorkers(4)).toEqual({ workers: 3 });
    expect(defaultWorkers(64)).toEqual({ workers: 8 });
  });
});

describe("the bytes of runs a file holds", () => {
  it("are its size, or a .gz's uncompressed size from its trailer, whatever its name", () => {
    const plain = path.join(dir, "plain.jsonl");
    writeFileSync(plain, body);
    expect(runBytesOf(plain, body.length)).toBe(body.length);
    const gz = path.join(dir, "runs.data"); // gzip data named as anything
    const zipped = gzipSync(body);
    writeFileSync(gz, zipped);
    expect(zipped.length).toBeLessThan(body.length);
    expect(runBytesOf(gz, zipped.length)).toBe(Buffer.byteLength(body));
  });

  it("are the file's size where it cannot be read or is too short to carry a trailer", () => {
    expect(runBytesOf(path.join(dir, "missing.jsonl"), 1234)).toBe(1234);
    const short = path.join(dir, "short.gz");
    writeFileSync(short, Buffer.from([0x1f, 0x8b, 1, 2]));
    expect(runBytesOf(short, 4)).toBe(4);
  });
});

describe("a batch with a floor of input for its pool", () => {
  const run = async (input: string, inProcessBelow: number) => {
    const output = path.join(dir, `${path.basename(input)}-${inProcessBelow}.out.jsonl`);
    const summary = await runBatch({
      input,
      output,
      budget: 3000,
      format: "auto",
      mode: "tiered",
      workers: 2,
      inProcessBelow,
      offloadDir: `${output}.offload`,
    });
    return summary.workers;
  };

  it("runs in-process below it and in a pool of 2 from it, a .gz judged by its runs' bytes, not its own", async () => {
    const gz = path.join(dir, "floor.jsonl.gz");
    const zipped = gzipSync(body);
    writeFileSync(gz, zipped);
    const runs = Buffer.byteLength(body);
    expect(await run(gz, runs + 1)).toBe(0);
    // Its compressed size is below the floor; the runs it holds are not.
    expect(zipped.length).toBeLessThan(runs - 1);
    expect(await run(gz, runs - 1)).toBe(2);
    expect(kTwoCoreInProcessBelow).toBe(48 * 2 ** 20);
  });
});
