/**
 * A pool's workers count exactly with the rank table the main thread packed once (each task
 * carries it in shared memory), instead of each building its own from the rank file: a task
 * that carries it makes its thread's counter read it, and the chunk compacts to the same bytes.
 */
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { generateRuns } from "../../src/gen/run.js";
import { compactChunk } from "../../src/pool/job.js";
import run, { type WorkerTask } from "../../src/pool/worker.js";
import { packRankTable, readsPackedTable } from "../../src/tokens/bpe.js";

describe("a worker given the packed rank table", () => {
  it("counts with it, and compacts a chunk to the bytes a thread with its own table writes", async () => {
    const lines = generateRuns(3, 5).map((r, i) => JSON.stringify({ id: `run-${i}`, messages: renderMessages(r.messages, "openai-chat") }));
    const bytes = new TextEncoder().encode(`${lines.join("\n")}\n`);
    const options = { budget: 2_000, format: "auto" as const, mode: "tiered" as const };
    expect(readsPackedTable("o200k_base")).toBe(false);
    const task: WorkerTask = { bytes: bytes.slice(), firstLine: 1, options, chunk: 0, attempt: 0, ranks: packRankTable("o200k_base") };
    await run(task);
    expect(readsPackedTable("o200k_base")).toBe(true);
    const shared = await compactChunk(bytes.slice(), 1, options);
    expect(shared.stats.compacted).toBeGreaterThan(0);
    // The same chunk in a thread that builds its own table: another process, so nothing is shared.
    const child = await import("node:child_process");
    const script = `
      import { compactChunk } from ${JSON.stringify(new URL("../../dist/src/pool/job.js", import.meta.url).href)};
      const chunks = [];
      for await (const c of process.stdin) chunks.push(c);
      const bytes = Buffer.concat(chunks);
      const r = await compactChunk(new Uint8Array(bytes), 1, ${JSON.stringify(options)});
      process.stdout.write(Buffer.from(r.out).toString("base64"));
    `;
    const own = child.spawnSync(process.execPath, ["--input-type=module", "-e", script], { input: bytes, encoding: "utf8", maxBuffer: 64 << 20 });
    expect(own.status, own.stderr).toBe(0);
    expect(Buffer.from(shared.out).toString("base64")).toBe(own.stdout);
  });
});
