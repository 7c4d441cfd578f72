/**
 * compact under what would make it grow without bound or lie about what it wrote: more workers
 * than the machine has cores, a line that never ends, signals while such a line is read, a
 * reader of stdout that goes away, and an output that lost its tail before a resume.
 */
import { availableParallelism } from "node:os";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { generatedRunLines } from "../helpers.js";
import { fakeIo } from "./fake-io.js";
import { interruptedCli, spawnCli, startCli } from "./spawn-cli.js";

let dir: string;
let lines: string[];
/**
 * ~2.2 MB of runs: over the in-process threshold, so --workers 2 runs the pool, and compacted
 * into ~290 KB of output, more than a pipe and a reader's first read hold, so that a reader
 * that stops early meets a writer that still has output (test/helpers.ts' poolSizedRunLines,
 * ~160 KB of output, let a loaded run write it all before the reader closed).
 */
let big: string[];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-bounds-"));
  lines = generatedRunLines(6, 9);
  writeFileSync(path.join(dir, "small.jsonl"), lines.join("\n") + "\n");
  big = generatedRunLines(20, 5);
  writeFileSync(path.join(dir, "big.jsonl"), big.join("\n") + "\n");
});

const cli = (args: string[]) => spawnCli(dir, args);
const outLines = (file: string) => readFileSync(path.join(dir, file), "utf8").split("\n").slice(0, -1);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("compact --workers", () => {
  it("caps --workers at twice the cores, saying so on stderr, and runs", async () => {
    const cap = 2 * availableParallelism();
    const f = fakeIo();
    const code = await runCli(
      ["compact", path.join(dir, "small.jsonl"), "-o", path.join(dir, "w.jsonl"), "--budget", "8000", "--workers", "1000", "--quiet"],
      f.io,
    );
    expect(code, f.stderr()).toBe(0);
    expect(f.stderr()).toBe(`ctxfold compact: --workers 1000 is more than this machine can use: using ${cap} (twice its ${availableParallelism()} cores)\n`);
    const within = fakeIo();
    expect(
      await runCli(
        ["compact", path.join(dir, "small.jsonl"), "-o", path.join(dir, "w2.jsonl"), "--budget", "8000", "--workers", String(cap), "--quiet"],
        within.io,
      ),
    ).toBe(0);
    expect(within.stderr()).toBe("");
  });
});

describe("compact --resume over outputs changed since the checkpoint", () => {
  it("refuses with exit 2, naming the file and what differs, an output or errors file cut short or edited, in-process and with 2 workers; resumes once they are back", async () => {
    // Bad lines among the runs, so that the errors file has records before the checkpoint too.
    const source = big.flatMap((l, i) => (i % 4 === 1 ? [l, `{"api_key": "sk-cut-${i}`] : [l]));
    writeFileSync(path.join(dir, "tail.jsonl"), source.join("\n") + "\n");
    const args = ["compact", "tail.jsonl", "-o", "tail.out.jsonl", "--budget", "8000", "--quiet"];
    expect(await interruptedCli(dir, [...args, "--workers", "1"], path.join(dir, "tail.out.jsonl"))).toBe(130);
    const checkpoint = JSON.parse(readFileSync(path.join(dir, "tail.out.jsonl.checkpoint.json"), "utf8")) as {
      lines: number;
      outBytes: number;
      errBytes: number;
    };
    expect(checkpoint.errBytes).toBeGreaterThan(0);
    const saved = { out: readFileSync(path.join(dir, "tail.out.jsonl")), errors: readFileSync(path.join(dir, "tail.out.jsonl.errors.jsonl")) };
    const restore = () => {
      writeFileSync(path.join(dir, "tail.out.jsonl"), saved.out);
      writeFileSync(path.join(dir, "tail.out.jsonl.errors.jsonl"), saved.errors);
    };
    for (const workers of ["1", "2"]) {
      // The output lost its tail (`truncate -s -1000`): the rest would be spliced onto a cut line.
      truncateSync(path.join(dir, "tail.out.jsonl"), saved.out.length - 1000);
      const cut = cli([...args, "--workers", workers, "--resume"]);
      expect(cut.code, cut.stderr).toBe(2);
      expect(cut.stderr).toContain(
        `tail.out.jsonl changed since tail.out.jsonl.checkpoint.json was written (${saved.out.length - 1000} bytes, ${checkpoint.outBytes - saved.out.length + 1000} fewer than the ${checkpoint.outBytes} written to it)`,
      );
      expect(cut.stderr).toContain("rerun without --resume to start over");
      // The same length, one byte changed within what the checkpoint covers.
      const edited = Buffer.from(saved.out);
      edited[10] ^= 1;
      writeFileSync(path.join(dir, "tail.out.jsonl"), edited);
      const changed = cli([...args, "--workers", workers, "--resume"]);
      expect(changed.code, changed.stderr).toBe(2);
      expect(changed.stderr).toContain(
        `tail.out.jsonl changed since tail.out.jsonl.checkpoint.json was written (its first ${checkpoint.outBytes} bytes are not the ones written)`,
      );
      // The errors file cut short.
      restore();
      truncateSync(path.join(dir, "tail.out.jsonl.errors.jsonl"), checkpoint.errBytes - 1);
      const errorsCut = cli([...args, "--workers", workers, "--resume"]);
      expect(errorsCut.code, errorsCut.stderr).toBe(2);
      expect(errorsCut.stderr).toContain(
        `tail.out.jsonl.errors.jsonl changed since tail.out.jsonl.checkpoint.json was written (${checkpoint.errBytes - 1} bytes, 1 fewer`,
      );
      restore();
    }
    // Refusing changed nothing: the files as they were, the resume completes, every line once.
    const resumed = cli([...args, "--workers", "2", "--resume"]);
    expect(resumed.code, resumed.stderr).toBe(3);
    expect(existsSync(path.join(dir, "tail.out.jsonl.checkpoint.json"))).toBe(false);
    const whole = cli(["compact", "tail.jsonl", "-o", "tail.whole.jsonl", "--budget", "8000", "--quiet", "--workers", "1"]);
    expect(whole.code).toBe(3);
    expect(outLines("tail.out.jsonl")).toEqual(outLines("tail.whole.jsonl"));
    expect(outLines("tail.out.jsonl.errors.jsonl")).toEqual(outLines("tail.whole.jsonl.errors.jsonl"));
  });
});

describe("compact -o - into a reader that stops early", () => {
  /** The CLI's exit and stderr when its stdout's reader closes after `keep` bytes (`| head -c keep`). */
  async function headed(args: string[], keep: number) {
    const { child, exited } = startCli(dir, args, { stdio: ["ignore", "pipe", "pipe"] });
    let got = 0;
    child.stdout!.on("data", (d: Buffer) => {
      got += d.length;
      if (got >= keep) child.stdout!.destroy();
    });
    return exited;
  }

  it("fails with E_OUTPUT_WRITE naming stdout and EPIPE (exit 1), in-process and with 2 workers: a truncated output is never a success", async () => {
    for (const workers of ["1", "2"]) {
      const r = await headed(
        ["compact", "big.jsonl", "-o", "-", "--budget", "8000", "--workers", workers, "--offload-dir", `head${workers}.offload`, "--quiet"],
        100,
      );
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toBe("ctxfold compact: cannot write stdout: EPIPE (its reader closed it before the end of the output)\n");
    }
  });

  it("a report's reader that stops early is no failure (stats | head): exit 0", async () => {
    const r = await headed(["stats", "big.jsonl"], 10);
    expect(r.code, r.stderr).toBe(0);
  });
});

describe("compact on a line that never ends (/dev/zero)", () => {
  /** Resolves once `file` has grown past `bytes`; rejects with what it reached after `ms`. */
  function grownPast(file: string, bytes: number, ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const since = Date.now();
      const poll = setInterval(() => {
        const size = existsSync(file) ? statSync(file).size : 0;
        if (size > bytes) resolve();
        else if (Date.now() - since > ms) reject(new Error(`${file} reached ${size} bytes in ${ms} ms: the line is held, not written through`));
        else return;
        clearInterval(poll);
      }, 20);
    });
  }

  it.skipIf(!existsSync("/dev/zero")).each([
    ["SIGINT", "1"],
    ["SIGTERM", "2"],
  ] as const)("writes it through as it is read, past --max-line-mb, and stops on %s with exit 130 and a checkpoint (--workers %s)", async (signal, workers) => {
    const out = path.join(dir, `zero${workers}.jsonl`);
    const zero = openSync("/dev/zero", "r");
    const { child, exited } = startCli(dir, ["compact", "-", "-o", out, "--budget", "8000", "--workers", workers, "--max-line-mb", "1"], {
      stdio: [zero, "ignore", "pipe"],
    });
    closeSync(zero);
    try {
      await grownPast(out, 8 << 20, 60_000);
    } catch (err) {
      child.kill("SIGKILL");
      throw err;
    }
    child.kill(signal);
    // A reader that ignored the signal would never exit: it is killed after a minute, and fails.
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const r = await exited;
    clearTimeout(guard);
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain(`ctxfold: stopped after line 0; rerun with --resume to continue (${out}.checkpoint.json)`);
    expect(JSON.parse(readFileSync(`${out}.checkpoint.json`, "utf8"))).toMatchObject({ lines: 0, outBytes: 0 });
  });
});
