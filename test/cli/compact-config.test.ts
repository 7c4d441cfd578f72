/**
 * `ctxfold compact --config FILE`: a batch compacts with the settings a config file gives (the
 * same file `ctxfold eval --config` takes), run for run what createCompactor with them gives;
 * flags given win over it; a bad file stops the batch before it writes anything, naming the
 * file and the field; a queued job whose settings a worker would not accept is refused naming
 * the field.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { createCompactor } from "../../src/policy/index.js";
import { admitJob } from "../../src/queue/confine.js";
import { createMemoryStore } from "../../src/store/index.js";
import { generatedRunLines } from "../helpers.js";
import { fakeIo } from "./fake-io.js";

let dir: string;
let input: string;
let lines: string[];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ctxfold-compact-config-"));
  lines = generatedRunLines(6, 41).filter((l) => Array.isArray(JSON.parse(l)) || Array.isArray(JSON.parse(l).messages));
  input = path.join(dir, "runs.jsonl");
  writeFileSync(input, `${lines.join("\n")}\n`);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function compact(args: string[]) {
  const f = fakeIo();
  const code = await runCli(["compact", input, "--budget", "4000", "--workers", "1", "--quiet", ...args], f.io);
  return { code, stderr: f.stderr() };
}

const config = (name: string, value: unknown) => {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(value));
  return file;
};

/** Each run's messages as createCompactor with `settings` compacts them (in each line's own format). */
async function expected(settings: object): Promise<unknown[]> {
  const compactor = createCompactor({ ...settings, store: createMemoryStore() });
  const out: unknown[] = [];
  for (const line of lines) {
    const value = JSON.parse(line) as unknown;
    const messages = Array.isArray(value) ? value : (value as { messages: unknown[] }).messages;
    const r = await compactor.compact(messages, { budget: 4000 });
    // Anthropic's form is an object with its messages (and system).
    out.push(r.tier === "normal" ? messages : Array.isArray(r.messages) ? r.messages : (r.messages as { messages: unknown[] }).messages);
  }
  return out;
}

const outputMessages = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => {
      const v = JSON.parse(l) as unknown;
      return Array.isArray(v) ? v : (v as { messages: unknown[] }).messages;
    });

describe("compact --config", () => {
  it("compacts each run as createCompactor with the file's settings does, and differently from the defaults", async () => {
    const out = path.join(dir, "with-config.jsonl");
    const r = await compact(["-o", out, "--config", config("target.json", { targetRatio: 0.3, ledgerRatio: 0.05 })]);
    expect(r.code, r.stderr).toBe(0);
    expect(outputMessages(out)).toEqual(await expected({ targetRatio: 0.3, ledgerRatio: 0.05 }));
    expect(outputMessages(out)).not.toEqual(await expected({}));
  });

  it("a flag given wins over the file; one not given takes the file's", async () => {
    const file = config("legacy.json", { mode: "legacy" });
    const a = path.join(dir, "legacy.jsonl");
    const b = path.join(dir, "tiered.jsonl");
    expect((await compact(["-o", a, "--config", file])).code).toBe(0);
    expect((await compact(["-o", b, "--config", file, "--mode", "tiered"])).code).toBe(0);
    expect(outputMessages(a)).toEqual(await expected({ mode: "legacy" }));
    expect(outputMessages(b)).toEqual(await expected({}));
  });

  it("a bad file stops the batch before it writes, naming the file and the field", async () => {
    const out = path.join(dir, "never.jsonl");
    const cases: [string, unknown, string][] = [
      ["range.json", { targetRatio: 2 }, "range.json.targetRatio"],
      ["unknown.json", { summarizer: "mine" }, "unknown.json.summarizer"],
      ["array.json", [1], "array.json"],
    ];
    for (const [name, value, where] of cases) {
      const r = await compact(["-o", out, "--config", config(name, value)]);
      expect(r.code, name).not.toBe(0);
      expect(r.stderr, name).toContain(where);
    }
    const missing = await compact(["-o", out, "--config", path.join(dir, "absent.json")]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("absent.json");
    expect(() => readFileSync(out)).toThrow();
  });
});

describe("a queued job's settings", () => {
  /** A job as a producer queues it, its options carrying `settings`. */
  const job = (settings: unknown) => ({
    shard: "0".repeat(32),
    batch: "00000000-0000-4000-8000-000000000000",
    firstLine: 1,
    key: "0".repeat(64),
    storage: pathToFileURL(path.join(dir, "work", "b")).href,
    options: { budget: 8000, format: "auto", mode: "tiered", file: "runs.jsonl", config: settings },
  });
  const roots = () => ({ workDir: dir });

  it("are admitted when a config file could hold them", () => {
    expect(admitJob("1", job({ targetRatio: 0.3 }), roots()).options.config).toEqual({ targetRatio: 0.3 });
  });

  it("are refused, E_JOB_REFUSED naming the field, when not", () => {
    for (const [settings, field] of [
      [{ targetRatio: 7 }, "options.config.targetRatio"],
      [{ store: { dir: "/" } }, "options.config.store"],
      [{ onEvent: "x" }, "options.config.onEvent"],
      ["tight", "options.config"],
    ] as const) {
      expect(() => admitJob("1", job(settings), roots()), field).toThrowError(
        expect.objectContaining({ code: "E_JOB_REFUSED", message: expect.stringContaining(field) }),
      );
    }
  });
});
