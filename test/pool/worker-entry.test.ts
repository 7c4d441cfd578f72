/**
 * The pool closes workers that are still loading (the one Piscina starts in place of a worker
 * that died, or one a short batch never used), and Piscina loads its filename with `require`. A
 * worker terminated while Node's require of an ES module is loading aborts the whole process, so
 * the pool's entry is CommonJS and loads the worker by `import()`. Here a child process starts
 * workers the way Piscina does and terminates them at every point of their loading.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { workerFile } from "../../src/pool/worker-pool.js";

/** Loads `file` once to time it, then terminates `count` workers at delays spread over that time. */
const kTerminations = `
const { Worker } = require("node:worker_threads");
const [file, count] = [process.argv[1], Number(process.argv[2])];
const start = (then) => {
  const w = new Worker("require(" + JSON.stringify(file) + ");" + then, { eval: true });
  w.on("error", () => undefined);
  return w;
};
(async () => {
  const t0 = performance.now();
  const timed = start("require('node:worker_threads').parentPort.postMessage(0)");
  await new Promise((r) => timed.once("message", r));
  const span = performance.now() - t0;
  await timed.terminate();
  for (let i = 0; i < count; i++) {
    const w = start("");
    await new Promise((r) => setTimeout(r, (span * i) / count));
    await w.terminate();
  }
  console.log("survived " + count);
})();
`;

describe("the pool's worker entry", () => {
  it("is CommonJS, so a worker terminated at any point while loading leaves the process running", () => {
    const file = fileURLToPath(workerFile());
    expect(file.endsWith(".cjs")).toBe(true);
    const r = spawnSync(process.execPath, ["-e", kTerminations, file, "120"], { encoding: "utf8" });
    expect(r.stderr).not.toContain("FATAL ERROR");
    expect({ status: r.status, signal: r.signal, stdout: r.stdout.trim() }).toEqual({ status: 0, signal: null, stdout: "survived 120" });
  }, 60_000);
});
