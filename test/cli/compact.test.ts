import { copyFileSync, existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliTestHooks } from "../../src/cli/common.js";
import { runCli } from "../../src/cli/main.js";
import { fakeIo } from "./fake-io.js";
import { interruptedCli, spawnCli, type CliRunOptions } from "./spawn-cli.js";
import { poolSizedRunLines } from "../helpers.js";
import { createCompactor } from "../../src/policy/index.js";
import { createMemoryStore, createPackStore, getMessages } from "../../src/store/index.js";

const kBudget = 8000;

let dir: string;
let input: string;
let lines: string[];

const cli = (args: string[], options: CliRunOptions = {}) => spawnCli(dir, args, options);

/**
 * The command in-process, for what it decides before any process-wide effect (usage, the names
 * it refuses): a process's start costs more than such a run. Names are this process's (absolute,
 * or relative to its directory).
 */
async function inProcess(args: string[]) {
  const f = fakeIo();
  const code = await runCli(args, f.io);
  return { code, stderr: f.stderr() };
}

/** What the in-process API gives for each line (the CLI's output must equal it run for run). */
async function expected(source: string[]): Promise<string[]> {
  const compactor = createCompactor({ store: createMemoryStore() });
  const out: string[] = [];
  for (const line of source) {
    const value = JSON.parse(line) as unknown;
    const env = Array.isArray(value) ? undefined : (value as Record<string, unknown>);
    const messages = env ? env.messages : value;
    const r = await compactor.compact(env && "system" in env ? { system: env.system, messages } : messages, { budget: kBudget });
    if (r.tier === "normal") out.push(line);
    else {
      const wire = (Array.isArray(r.messages) ? { messages: r.messages } : r.messages) as { system?: unknown; messages: unknown };
      out.push(JSON.stringify(env ? { ...env, ...wire } : Array.isArray(r.messages) || wire.system === undefined ? wire.messages : r.messages));
    }
  }
  return out;
}

/**
 * Spawns the CLI with small, slowly written chunks and sends SIGINT once the checkpoint beside
 * `output` exists; its exit code.
 */
const interrupted = (args: string[], output: string) => interruptedCli(dir, args, output);

const outLines = (file: string) => readFileSync(file, "utf8").split("\n").slice(0, -1);
let want: string[];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-cli-"));
  lines = poolSizedRunLines();
  input = path.join(dir, "in.jsonl");
  writeFileSync(input, lines.join("\n") + "\n");
  want = await expected(lines);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ctxfold compact", () => {
  it("writes, with 2 workers, what the in-process API returns, run for run, refs resolving in the offload dir", () => {
    const r = cli(["compact", "in.jsonl", "-o", "out.jsonl", "--budget", String(kBudget), "--workers", "2", "--json"], {
      hooks: { compact: { chunkBytes: 200_000 } },
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.toString()) as { runs: number; compacted: number; workers: number; errors: number; offloadDir: string };
    expect(summary).toMatchObject({ runs: lines.length, workers: 2, errors: 0 });
    expect(summary.compacted).toBeGreaterThan(lines.length / 2);
    expect(outLines(path.join(dir, "out.jsonl"))).toEqual(want);
    // The summary messages' history refs resolve from the packs.
    const store = createPackStore({ dir: path.join(dir, "out.jsonl.offload") });
    const refs = [...readFileSync(path.join(dir, "out.jsonl"), "utf8").matchAll(/workspace\/outputs\/history_[0-9a-f]{32}\.json/g)].map((m) => m[0]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs.slice(0, 5)) expect(getMessages(store, ref).length).toBeGreaterThan(0);
  });

  it("reads gzip input and writes stdout from stdin, with the same output", () => {
    writeFileSync(path.join(dir, "in.jsonl.gz"), gzipSync(readFileSync(input)));
    const gz = cli(["compact", "in.jsonl.gz", "-o", "gz.jsonl", "--budget", String(kBudget), "--quiet"]);
    expect(gz.code).toBe(0);
    expect(outLines(path.join(dir, "gz.jsonl"))).toEqual(want);
    const piped = cli(["compact", "-", "-o", "-", "--budget", String(kBudget), "--quiet", "--workers", "1"], { stdin: gzipSync(readFileSync(input)) });
    expect(piped.stderr).toBe("");
    expect(piped.code).toBe(0);
    expect(piped.stdout.toString().split("\n").slice(0, -1)).toEqual(want);
  });

  it("passes malformed lines through byte for byte with error records, and stops on them under --strict", () => {
    const bad = [lines[0], "{not json", '{"id":"x","messages":"nope"}', "", `[{"role":"wizard","content":"hi"}]`, lines[1]];
    writeFileSync(path.join(dir, "bad.jsonl"), bad.join("\n") + "\n");
    const r = cli(["compact", "bad.jsonl", "-o", "bad.out.jsonl", "--budget", String(kBudget), "--quiet"]);
    expect(r.code).toBe(3);
    const out = outLines(path.join(dir, "bad.out.jsonl"));
    expect(out).toHaveLength(bad.length);
    expect(out.slice(1, 5)).toEqual(bad.slice(1, 5));
    expect([out[0], out[5]]).toEqual([want[0], want[1]]);
    const errors = outLines(path.join(dir, "bad.out.jsonl.errors.jsonl")).map(
      (l) => JSON.parse(l) as { line: number; code: string; id?: string; reason: string },
    );
    expect(errors.map((e) => [e.line, e.code])).toEqual([
      [2, "E_BAD_INPUT"],
      [3, "E_BAD_INPUT"],
      [5, "E_UNKNOWN_ROLE"],
    ]);
    expect(errors[1].id).toBe("x");

    const strict = cli(["compact", "bad.jsonl", "-o", "strict.jsonl", "--budget", String(kBudget), "--strict", "--quiet"]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain("bad.jsonl:2");
  });

  it("writes a run nested 5,000 levels deep (past the main thread's stack, within a worker's) through with an E_TOO_LARGE record and compacts the others, with 2 workers as in-process: exit 3", () => {
    const i = want.findIndex((w, k) => w !== lines[k] && !lines[k].startsWith("["));
    const deep = lines[i].replace(/}$/, `,"extra":${"[".repeat(5000)}${"]".repeat(5000)}}`);
    // Among all the runs, so that the file is over the in-process threshold and 2 workers run.
    writeFileSync(path.join(dir, "deep.jsonl"), [...lines.slice(0, i + 1), deep, ...lines.slice(i + 1)].join("\n") + "\n");
    for (const workers of ["1", "2"]) {
      const r = cli(["compact", "deep.jsonl", "-o", `deep${workers}.out.jsonl`, "--budget", String(kBudget), "--workers", workers, "--json"], {
        hooks: { compact: { chunkBytes: 200_000 } },
      });
      expect(r.code, r.stderr).toBe(3);
      expect(JSON.parse(r.stdout.toString())).toMatchObject({ workers: Number(workers) - 1 ? 2 : 0, errors: 1 });
      expect(outLines(path.join(dir, `deep${workers}.out.jsonl`))).toEqual([...want.slice(0, i + 1), deep, ...want.slice(i + 1)]);
      const errors = outLines(path.join(dir, `deep${workers}.out.jsonl.errors.jsonl`)).map(
        (l) => JSON.parse(l) as { line: number; code: string; reason: string },
      );
      expect(errors).toEqual([expect.objectContaining({ line: i + 2, code: "E_TOO_LARGE", reason: expect.stringContaining("more than 1000 levels deep") })]);
    }
  });

  it("the shipped sources read no test hook from the environment: only the LLM summariser's documented configuration", () => {
    const src = fileURLToPath(new URL("../../src", import.meta.url));
    const readers = (readdirSync(src, { recursive: true }) as string[]).filter(
      (f) => f.endsWith(".ts") && readFileSync(path.join(src, f), "utf8").includes("process.env"),
    );
    expect(readers.map((f) => f.split(path.sep).join("/"))).toEqual(["summarize/llm-summarizer.ts"]);
  });

  it("retries a chunk whose worker dies, and writes it through with error records when it dies again", () => {
    const crashing = (always: boolean): CliTestHooks => ({ compact: { chunkBytes: 200_000, testHooks: { crash: { chunk: 1, always } } } });
    const once = cli(["compact", "in.jsonl", "-o", "crash1.jsonl", "--budget", String(kBudget), "--workers", "2", "--json"], { hooks: crashing(false) });
    expect(once.code, once.stderr).toBe(0);
    expect(JSON.parse(once.stdout.toString())).toMatchObject({ retried: 1, crashed: 0, errors: 0 });
    expect(outLines(path.join(dir, "crash1.jsonl"))).toEqual(want);

    const always = cli(["compact", "in.jsonl", "-o", "crash2.jsonl", "--budget", String(kBudget), "--workers", "2", "--json"], { hooks: crashing(true) });
    expect(always.code, always.stderr).toBe(3);
    const s = JSON.parse(always.stdout.toString()) as { crashed: number; errors: number };
    expect(s.crashed).toBe(1);
    const out = outLines(path.join(dir, "crash2.jsonl"));
    const errors = outLines(path.join(dir, "crash2.jsonl.errors.jsonl")).map((l) => JSON.parse(l) as { line: number; code: string });
    expect(errors.length).toBe(s.errors);
    expect(errors.every((e) => e.code === "E_WORKER_CRASH")).toBe(true);
    // Lines of the dead chunk are the input's; every other line is compacted as usual.
    const dead = new Set(errors.map((e) => e.line - 1));
    out.forEach((l, i) => expect(l).toBe(dead.has(i) ? lines[i] : want[i]));
  });

  it("refuses with exit 2 an output, errors file or checkpoint that is the input under any name, naming both and leaving it whole", async () => {
    const source = readFileSync(input);
    for (const name of ["same.jsonl", "batch.errors.jsonl", "batch.checkpoint.json"]) copyFileSync(input, path.join(dir, name));
    symlinkSync("same.jsonl", path.join(dir, "same-symlink.jsonl"));
    linkSync(path.join(dir, "same.jsonl"), path.join(dir, "same-hardlink.jsonl"));
    // In-process, so each name is spelled from this process's directory: relative, with ./, absolute.
    const rel = (name: string) => path.relative(process.cwd(), path.join(dir, name));
    const same = rel("same.jsonl");
    const cases: [input: string, output: string, written: string][] = [
      [same, same, same],
      [same, `./${same}`, `./${same}`],
      [same, path.join(dir, "same.jsonl"), path.join(dir, "same.jsonl")],
      [same, rel("same-symlink.jsonl"), rel("same-symlink.jsonl")],
      [rel("same-symlink.jsonl"), same, same],
      [same, rel("same-hardlink.jsonl"), rel("same-hardlink.jsonl")],
      [rel("batch.errors.jsonl"), rel("batch"), rel("batch.errors.jsonl")],
      [rel("batch.checkpoint.json"), rel("batch"), rel("batch.checkpoint.json")],
    ];
    for (const workers of ["1", "2"]) {
      for (const [from, to, written] of cases) {
        const r = await inProcess(["compact", from, "-o", to, "--budget", String(kBudget), "--workers", workers, "--quiet"]);
        expect(r.code, `${from} -o ${to}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(`the input ${from} `);
        expect(r.stderr).toContain(` ${written}: `);
        expect(readFileSync(from).equals(source)).toBe(true);
      }
      // What a shell's `< same.jsonl` opens is only a process's stdin.
      const piped = cli(["compact", "-", "-o", "same.jsonl", "--budget", String(kBudget), "--workers", workers, "--quiet"], {
        redirect: { stdin: "same.jsonl" },
      });
      expect(piped.code, piped.stderr).toBe(2);
      expect(piped.stderr).toContain("stdin");
      expect(readFileSync(path.join(dir, "same.jsonl")).equals(source)).toBe(true);
    }
  });

  it.skipIf(!existsSync("/dev/full"))(
    "stops with exit 1 naming the output and the OS code when it cannot be written (/dev/full), with 2 workers as in-process",
    () => {
      for (const workers of ["1", "2"]) {
        const r = cli([
          "compact",
          "in.jsonl",
          "-o",
          "/dev/full",
          "--offload-dir",
          `full${workers}.offload`,
          "--budget",
          String(kBudget),
          "--workers",
          workers,
          "--quiet",
        ]);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toContain("cannot write /dev/full: ENOSPC");
      }
      const piped = cli(["compact", "in.jsonl", "-o", "-", "--offload-dir", "full.offload", "--budget", String(kBudget), "--quiet"], {
        redirect: { stdout: "/dev/full" },
      });
      expect(piped.code, piped.stderr).toBe(1);
      expect(piped.stderr).toContain("cannot write stdout: ENOSPC");
    },
  );

  it("stops with exit 1 naming the offload dir when it cannot be written, with 2 workers as in-process (no worker crashed)", () => {
    writeFileSync(path.join(dir, "plain"), "not a directory");
    for (const workers of ["1", "2"]) {
      const r = cli([
        "compact",
        "in.jsonl",
        "-o",
        `nostore${workers}.jsonl`,
        "--budget",
        String(kBudget),
        "--workers",
        workers,
        "--offload-dir",
        "plain/offload",
        "--quiet",
      ]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(path.join(dir, "plain", "offload"));
      expect(r.stderr).toContain("ENOTDIR");
      expect(existsSync(path.join(dir, `nostore${workers}.jsonl.errors.jsonl`))).toBe(false);
    }
  });

  it("--max-worker-heap-mb: a run over a quarter of a worker's heap is written through with E_TOO_LARGE naming the flag, never parsed in a worker", () => {
    // A 40 MB tool output between ordinary runs: parsing it in a 40 MB heap could need more in one
    // allocation than Node can recover from in a worker.
    const big = JSON.stringify({
      id: "big",
      messages: [
        { role: "user", content: "task" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "line of output text\n".repeat(2_000_000) },
        { role: "assistant", content: "done" },
      ],
    });
    const source = [...lines.slice(0, 4), big, ...lines.slice(4, 8)];
    writeFileSync(path.join(dir, "big.jsonl"), source.join("\n") + "\n");
    const r = cli(["compact", "big.jsonl", "-o", "big.out.jsonl", "--budget", String(kBudget), "--workers", "2", "--max-worker-heap-mb", "40", "--json"], {
      hooks: { compact: { chunkBytes: 1 } },
    });
    expect(r.code, r.stderr).toBe(3);
    expect(JSON.parse(r.stdout.toString())).toMatchObject({ runs: 9, crashed: 0, retried: 0, errors: 1 });
    const errors = outLines(path.join(dir, "big.out.jsonl.errors.jsonl")).map((l) => JSON.parse(l) as { line: number; code: string; reason: string });
    expect(errors).toEqual([{ line: 5, code: "E_TOO_LARGE", reason: expect.stringContaining("raise --max-worker-heap-mb, now 40, to 161 or more") }]);
    expect(outLines(path.join(dir, "big.out.jsonl"))).toEqual([...want.slice(0, 4), big, ...want.slice(4, 8)]);
  });

  it("--max-worker-heap-mb: a worker that runs out of heap is retried, then its chunk written through with records naming the flag", () => {
    const r = cli(["compact", "in.jsonl", "-o", "oom.jsonl", "--budget", String(kBudget), "--workers", "2", "--max-worker-heap-mb", "40", "--json"], {
      hooks: { compact: { chunkBytes: 200_000, testHooks: { crash: { chunk: 1, always: true, oom: true } } } },
    });
    expect(r.code, r.stderr).toBe(3);
    const summary = JSON.parse(r.stdout.toString()) as { crashed: number; retried: number; errors: number };
    expect(summary).toMatchObject({ crashed: 1, retried: 1 });
    const errors = outLines(path.join(dir, "oom.jsonl.errors.jsonl")).map((l) => JSON.parse(l) as { line: number; code: string; reason: string });
    expect(errors.length).toBe(summary.errors);
    for (const e of errors) expect(e).toMatchObject({ code: "E_WORKER_CRASH", reason: expect.stringContaining("raise --max-worker-heap-mb, now 40") });
    const dead = new Set(errors.map((e) => e.line - 1));
    outLines(path.join(dir, "oom.jsonl")).forEach((l, i) => expect(l).toBe(dead.has(i) ? lines[i] : want[i]));
  });

  it("--max-worker-heap-mb too small for a worker to start: exit 1 naming the flag, no hang", () => {
    const r = cli(["compact", "in.jsonl", "-o", "tiny.jsonl", "--budget", String(kBudget), "--workers", "2", "--max-worker-heap-mb", "4"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/a worker died outside a chunk: .*raise --max-worker-heap-mb, now 4/);
    expect(cli(["compact", "in.jsonl", "-o", "x.jsonl", "--budget", "100", "--max-worker-heap-mb", "-1"]).code).toBe(2);
  });

  it("stops on SIGINT with a checkpoint, and --resume finishes with no run lost or written twice", async () => {
    const out = path.join(dir, "int.jsonl");
    const code = await interrupted(["compact", "in.jsonl", "-o", "int.jsonl", "--budget", String(kBudget), "--workers", "1", "--quiet"], out);
    expect(code).toBe(130);
    const checkpoint = JSON.parse(readFileSync(`${out}.checkpoint.json`, "utf8")) as { lines: number };
    expect(checkpoint.lines).toBeGreaterThan(0);
    expect(checkpoint.lines).toBeLessThan(lines.length);
    expect(outLines(out)).toEqual(want.slice(0, checkpoint.lines));

    const resumed = cli(["compact", "in.jsonl", "-o", "int.jsonl", "--budget", String(kBudget), "--workers", "1", "--resume", "--json"], {
      hooks: { compact: { chunkBytes: 60_000 } },
    });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout.toString())).toMatchObject({ resumedAfterLine: checkpoint.lines, runs: lines.length });
    expect(outLines(out)).toEqual(want);
    expect(existsSync(`${out}.checkpoint.json`)).toBe(false);

    const mismatch = cli(["compact", "in.jsonl", "-o", "int.jsonl", "--budget", "9000", "--resume"]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain("no checkpoint");
  });

  it("--resume refuses with exit 2 an input changed since the checkpoint (naming it and what changed) or a checkpoint of another version, and resumes once it is back", async () => {
    const swap = path.join(dir, "swap.jsonl");
    copyFileSync(input, swap);
    const mtime = new Date("2026-01-02T03:04:05Z"); // whole seconds, which utimes sets back exactly
    utimesSync(swap, mtime, mtime);
    const out = path.join(dir, "swap.out.jsonl");
    const args = ["compact", "swap.jsonl", "-o", "swap.out.jsonl", "--budget", String(kBudget), "--quiet"];
    // Interrupted in-process (a pool takes this small input's few chunks in flight at once), resumed by a pool.
    expect(await interrupted([...args, "--workers", "1"], out)).toBe(130);
    const checkpointText = readFileSync(`${out}.checkpoint.json`, "utf8");
    const checkpoint = JSON.parse(checkpointText) as { lines: number };
    expect(checkpoint.lines).toBeGreaterThan(0);
    expect(checkpoint.lines).toBeLessThan(lines.length);
    const original = readFileSync(swap);
    const resume = () => cli([...args, "--workers", "2", "--resume", "--json"]);

    // Another file of the same length (the runs in reverse order): its mtime tells.
    writeFileSync(swap, [...lines].reverse().join("\n") + "\n");
    expect(statSync(swap).size).toBe(original.length);
    const replaced = resume();
    expect(replaced.code, replaced.stderr).toBe(2);
    expect(replaced.stderr).toContain(`swap.jsonl changed since swap.out.jsonl.checkpoint.json was written (modified `);
    // Same length and mtime: only the lines done tell.
    utimesSync(swap, mtime, mtime);
    const sameStat = resume();
    expect(sameStat.code, sameStat.stderr).toBe(2);
    expect(sameStat.stderr).toContain(
      `swap.jsonl changed since swap.out.jsonl.checkpoint.json was written (its first ${checkpoint.lines} lines are not the ones compacted)`,
    );

    writeFileSync(swap, original);
    utimesSync(swap, mtime, mtime);
    writeFileSync(`${out}.checkpoint.json`, JSON.stringify({ ...JSON.parse(checkpointText), version: 1 }));
    const oldVersion = resume();
    expect(oldVersion.code, oldVersion.stderr).toBe(2);
    expect(oldVersion.stderr).toContain("is a version 1 checkpoint; this ctxfold resumes only from version 3");

    // Nothing the refusals did stands in the way: the input back as it was, the resume completes.
    writeFileSync(`${out}.checkpoint.json`, checkpointText);
    const resumed = resume();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout.toString())).toMatchObject({ resumedAfterLine: checkpoint.lines, runs: lines.length });
    expect(outLines(out)).toEqual(want);
  });

  it("--redact-offload keeps secrets out of the offload dir, in-process and with 2 workers; without it the originals are kept as they were", () => {
    const key = "sk-proj-" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4";
    const leaky = lines.map((l) => l.replace(/"content":"/g, `"content":"OPENAI_API_KEY=${key} `));
    writeFileSync(path.join(dir, "leaky.jsonl"), leaky.join("\n") + "\n");
    const packs = (d: string) =>
      readdirSync(d)
        .filter((f) => f.endsWith(".bin"))
        .map((f) => readFileSync(path.join(d, f), "latin1"))
        .join("");
    for (const workers of ["1", "2"]) {
      const off = `redact-${workers}.offload`;
      const r = cli([
        "compact",
        "leaky.jsonl",
        "-o",
        `redact-${workers}.jsonl`,
        "--budget",
        String(kBudget),
        "--workers",
        workers,
        "--offload-dir",
        off,
        "--redact-offload",
        "--quiet",
      ]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const stored = packs(path.join(dir, off));
      expect(stored.length).toBeGreaterThan(1000);
      expect(stored).not.toContain(key);
      expect(stored).toContain("[REDACTED:");
    }
    const raw = cli(["compact", "leaky.jsonl", "-o", "raw.jsonl", "--budget", String(kBudget), "--offload-dir", "raw.offload", "--quiet"]);
    expect(raw.code).toBe(0);
    expect(packs(path.join(dir, "raw.offload"))).toContain(key);
  });

  it("explains bad usage with exit code 2", async () => {
    expect((await inProcess(["compact", input, "-o", path.join(dir, "x.jsonl")])).code).toBe(2);
    const r = await inProcess(["compact", input, "-o", path.join(dir, "x.jsonl"), "--budget", "8000", "--format", "klingon"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--format");
    expect((await inProcess(["compact", "-", "-o", "-", "--budget", "8000", "--resume"])).code).toBe(1);
  });
});
