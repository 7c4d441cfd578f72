/**
 * The read-only ctxfold commands (stats, explain, show, validate, bench), run in-process with a
 * fake CliIo over small hand-built runs and seeded generated ones (src/gen/run.ts): their output,
 * --json shapes, exit codes, bad lines, gzip input and stdin.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kFormats, parseMessages, renderMessages, type Format } from "../../src/adapters/index.js";
import { bench, locateBench } from "../../src/cli/commands/bench.js";
import { compact } from "../../src/cli/commands/compact.js";
import { explain, type ExplainReport } from "../../src/cli/commands/explain.js";
import { show } from "../../src/cli/commands/show.js";
import { stats, type StatsReport } from "../../src/cli/commands/stats.js";
import { kValidateExit, validate, type ValidateReport } from "../../src/cli/commands/validate.js";
import { kExit, UsageError, type Command } from "../../src/cli/common.js";
import { fakeIo, run } from "./fake-io.js";
import { corpusLines } from "../helpers-corpus.js";
import { kCorpusFiles, tightTaskPrompt } from "../helpers.js";
import { promptTokens } from "../../src/eval/tokens.js";
import { generateRun, generateRuns } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { createCompactor } from "../../src/policy/index.js";
import { createFsStore, createPackStore, putMessages } from "../../src/store/index.js";

const json = <T>(s: string): T => JSON.parse(s) as T;

/** The rows of explain's stage table: label, tokens before and after (columns are two spaces apart or more). */
function tableRows(out: string): { label: string; before: string; after: string }[] {
  const lines = out.split("\n");
  const start = lines.findIndex((l) => l.startsWith("stage  "));
  const rows: { label: string; before: string; after: string }[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!/^(\d \w+|finish|ahead) /.test(l)) break;
    const cells = l.trim().split(/ {2,}/);
    rows.push({ label: cells[0], before: cells.at(-3)!, after: cells.at(-2)! });
  }
  return rows;
}

/** Canonical → one JSONL line in `format`, in an envelope with `id` (Anthropic's system beside messages). */
function lineOf(id: string, messages: Message[], format: Format, extra: Record<string, unknown> = {}): string {
  const wire = renderMessages(messages, format);
  return JSON.stringify(Array.isArray(wire) ? { id, ...extra, messages: wire } : { id, ...extra, ...(wire as object) });
}

let dir: string;
/** Five generated runs in OpenAI chat envelopes, a bare array, a non-JSON line, a blank line, an Anthropic request. */
let mixed: string;
const gen = generateRuns(5, 101);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ctxfold-cli-"));
  const lines = [
    lineOf(gen[0].id, gen[0].messages, "openai-chat", { meta: { model: "x" } }),
    lineOf(gen[1].id, gen[1].messages, "openai-chat"),
    "this is not json",
    JSON.stringify(renderMessages(gen[2].messages, "openai-chat")),
    "",
    lineOf(gen[3].id, gen[3].messages, "anthropic"),
    lineOf(gen[4].id, gen[4].messages, "langchain"),
  ];
  mixed = join(dir, "mixed.jsonl");
  writeFileSync(mixed, lines.join("\n") + "\n");
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file of the good lines of `mixed` only. */
function goodFile(name: string, format: Format = "openai-chat", runs = gen): string {
  const file = join(dir, name);
  writeFileSync(file, runs.map((r) => lineOf(r.id, r.messages, format)).join("\n") + "\n");
  return file;
}

describe("stats", () => {
  it("counts tokens per run as the tiered compactor measures them, by role, category and budget", async () => {
    const file = goodFile("stats-good.jsonl");
    const { code, out, err } = await run(stats, [file, "--json", "--budget", "5000,20000"]);
    expect(err).toBe("");
    expect(code).toBe(kExit.ok);
    const r = json<StatsReport>(out);
    const compactor = createCompactor();
    const totals = gen.map((g) => compactor.measure(parseMessages(renderMessages(g.messages, "openai-chat")).messages));
    const sorted = [...totals].sort((a, b) => a - b);
    expect(r).toMatchObject({ runs: 5, badLines: 0, mode: "estimate", encoding: "o200k_base", formats: { "openai-chat": 5 } });
    expect(r.messages).toBe(gen.reduce((n, g) => n + g.messages.length, 0));
    expect(r.tokens).toEqual({
      count: 5,
      min: sorted[0],
      p50: sorted[2],
      p90: sorted[4],
      p99: sorted[4],
      max: sorted[4],
      total: totals.reduce((a, b) => a + b, 0),
      mean: Math.round(totals.reduce((a, b) => a + b, 0) / 5),
    });
    // Roles add up to the total less the per-request overhead (3 a run).
    const roles = Object.values(r.byRole);
    expect(roles.reduce((n, x) => n + x.tokens, 0)).toBe(r.tokens.total - 3 * 5);
    expect(roles.reduce((n, x) => n + x.messages, 0)).toBe(r.messages);
    // Every call and result is under one category and one action.
    const calls = gen.reduce((n, g) => n + g.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool-call").length, 0);
    const results = gen.reduce((n, g) => n + g.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool-result").length, 0);
    for (const table of [r.byCategory, r.byAction]) {
      expect(Object.values(table).reduce((n, x) => n + x.calls, 0)).toBe(calls);
      expect(Object.values(table).reduce((n, x) => n + x.results, 0)).toBe(results);
    }
    expect(Object.keys(r.byCategory)).toEqual(["file", "shell", "search", "web", "other"]);
    expect(r.byCategory.shell.calls).toBeGreaterThan(0);
    expect(r.byCategory.file.calls).toBe(r.byAction.read.calls + r.byAction.write.calls + r.byAction.list.calls);
    expect(r.byCategory.file.tokens).toBeGreaterThan(0);
    expect(r.overBudget).toEqual([5000, 20000].map((budget) => ({ budget, runs: totals.filter((t) => t > budget).length })));
  });

  it("measures every format's runs as the compactor does, with their provider's overheads", async () => {
    const compactor = createCompactor();
    for (const format of kFormats) {
      const file = goodFile(`stats-${format}.jsonl`, format, gen.slice(0, 2));
      const r = json<StatsReport>((await run(stats, [file, "--json"])).out);
      const expected = gen.slice(0, 2).reduce((n, g) => n + compactor.measure(parseMessages(renderMessages(g.messages, format)).messages, format), 0);
      expect(r.formats, format).toEqual({ [format]: 2 });
      expect(r.tokens.total, format).toBe(expected);
    }
  });

  it("reports a bad line with file:line on stderr, counts it, and exits 3", async () => {
    const { code, out, err } = await run(stats, [mixed, "--json"]);
    expect(code).toBe(kExit.partial);
    expect(err).toMatch(new RegExp(`^${mixed.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3: not JSON`, "m"));
    const r = json<StatsReport>(out);
    expect(r).toMatchObject({ runs: 5, badLines: 1, formats: { "openai-chat": 3, anthropic: 1, langchain: 1 } });
    // The Anthropic line's system prompt is read from beside its messages.
    expect(r.byRole.system.messages).toBe(5);
  });

  it("reports a line whose messages fail the schema, at its line", async () => {
    const file = join(dir, "schema.jsonl");
    writeFileSync(
      file,
      [lineOf("ok", gen[0].messages, "openai-chat"), JSON.stringify({ id: "bad", messages: [{ role: "user", content: 42 }] }), '{"no":"messages"}'].join("\n"),
    );
    const { code, out, err } = await run(stats, [file, "--json"]);
    expect(code).toBe(kExit.partial);
    expect(err).toContain(`${file}:2: messages[0]`);
    expect(err).toContain(`${file}:3: messages: expected a messages array`);
    expect(json<StatsReport>(out)).toMatchObject({ runs: 1, badLines: 2 });
  });

  it("reads gzip (by name or by magic bytes) and stdin alike", async () => {
    const plain = readFileSync(goodFile("stats-plain.jsonl", "ai-sdk", gen.slice(0, 3)));
    const gz = join(dir, "stats.jsonl.gz");
    const disguised = join(dir, "stats-gz.jsonl");
    writeFileSync(gz, gzipSync(plain));
    writeFileSync(disguised, gzipSync(plain));
    const reports = await Promise.all([
      run(stats, [join(dir, "stats-plain.jsonl"), "--json"]),
      run(stats, [gz, "--json"]),
      run(stats, [disguised, "--json"]),
      run(stats, ["-", "--json"], Readable.from([plain.subarray(0, 1000), plain.subarray(1000)])),
      run(stats, ["-", "--json"], Readable.from([gzipSync(plain)])),
    ]);
    const strip = (s: string) => ({ ...json<StatsReport>(s), file: "" });
    for (const r of reports) {
      expect(r.code).toBe(kExit.ok);
      expect(strip(r.out)).toEqual(strip(reports[0].out));
    }
    expect(json<StatsReport>(reports[3].out).file).toBe("stdin");
    expect(json<StatsReport>(reports[0].out)).toMatchObject({ runs: 3, formats: { "ai-sdk": 3 } });
  });

  it("prints human tables", async () => {
    const { code, out } = await run(stats, [mixed, "--budget", "1000,1000000"]);
    expect(code).toBe(kExit.partial);
    expect(out).toContain("5 runs");
    expect(out).toContain("1 bad line");
    for (const heading of ["per run", "by role", "by tool category", "by tool action", "runs over budget"]) expect(out).toContain(heading);
    expect(out).toMatch(/^\s+1,000,000\s+0\s+0\.0%$/m);
    expect(out).toMatch(/^\s+1,000\s+5\s+100\.0%$/m);
    expect(out).toMatch(/^\s+shell\s+\d+/m);
  });

  it("counts exactly with --exact, and handles an empty input", async () => {
    const file = goodFile("stats-one.jsonl", "openai-chat", [generateRun({ seed: 7, steps: 3 })]);
    const estimate = json<StatsReport>((await run(stats, [file, "--json"])).out);
    const exact = json<StatsReport>((await run(stats, [file, "--json", "--exact"])).out);
    expect(exact.mode).toBe("exact");
    expect(json<StatsReport>((await run(stats, [file, "--json", "--encoding", "cl100k_base"])).out).encoding).toBe("cl100k_base");
    expect(Math.abs(exact.tokens.total - estimate.tokens.total) / exact.tokens.total).toBeLessThan(0.1);
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "\n");
    const r = await run(stats, [empty, "--json"]);
    expect(r.code).toBe(kExit.ok);
    expect(json<StatsReport>(r.out).tokens).toMatchObject({ count: 0, min: null, p50: null, total: 0 });
    expect((await run(stats, [empty])).out).toContain("no runs");
  });

  it("rejects bad usage and fails on a missing file", async () => {
    await expect(run(stats, [])).rejects.toBeInstanceOf(UsageError);
    await expect(run(stats, [mixed, "--budget", "8000,abc"])).rejects.toThrow(/--budget/);
    await expect(run(stats, [mixed, "--budget", "0"])).rejects.toBeInstanceOf(UsageError);
    await expect(run(stats, [mixed, "--encoding", "p50k"])).rejects.toBeInstanceOf(UsageError);
    await expect(run(stats, [mixed, "--nope"])).rejects.toBeInstanceOf(UsageError);
    await expect(run(stats, [join(dir, "missing.jsonl")])).rejects.toMatchObject({ code: "ENOENT" });
    const corrupt = join(dir, "corrupt.jsonl.gz");
    writeFileSync(corrupt, Buffer.concat([gzipSync("[]\n").subarray(0, 10), Buffer.from("garbage")]));
    await expect(run(stats, [corrupt])).rejects.toMatchObject({ code: "E_BAD_INPUT" });
  });
});

describe("explain", () => {
  const long = generateRun({ seed: 3, steps: 30 });
  let file: string;
  let budget: number;
  beforeAll(() => {
    file = join(dir, "explain.jsonl");
    writeFileSync(
      file,
      [lineOf("short", generateRun({ seed: 4, steps: 3 }).messages, "openai-chat"), "oops", lineOf("long-run", long.messages, "anthropic")].join("\n") + "\n",
    );
    budget = Math.floor(createCompactor().measure(parseMessages(renderMessages(long.messages, "anthropic")).messages) / 2);
  });

  it("reports every stage, the result and its refs (--json), refs readable with show", async () => {
    const offload = join(dir, "explain-offload");
    const { code, out, err } = await run(explain, [file, "--run", "long-run", "--budget", String(budget), "--json", "--offload-dir", offload]);
    expect(err).toBe("");
    expect(code).toBe(kExit.ok);
    const r = json<ExplainReport>(out);
    expect(r).toMatchObject({ id: "long-run", line: 3, format: "anthropic", budget, mode: "tiered", tier: "critical", status: "ok", offloadDir: offload });
    expect(r.tokensAfter).toBeLessThanOrEqual(budget);
    expect(r.tokensBefore).toBeGreaterThan(budget);
    expect(r.stages.length).toBeGreaterThan(0);
    for (const s of r.stages) {
      expect(Object.keys(s).sort()).toEqual(["candidateCount", "compacted", "durationMs", "name", "skipped", "stage", "tokensAfter", "tokensBefore"]);
      expect(s.tokensAfter).toBeLessThanOrEqual(s.tokensBefore);
    }
    expect(r.stages.map((s) => s.stage)).toEqual([...r.stages.map((s) => s.stage)].sort());
    expect(r.refs.length).toBeGreaterThan(0);
    expect(new Set(r.refs).size).toBe(r.refs.length);
    // Every ref resolves in the directory, and show gives its exact bytes.
    const store = createFsStore({ dir: offload });
    for (const ref of r.refs.slice(0, 5)) {
      const shown = await run(show, [ref, "--offload-dir", offload]);
      expect(shown.code).toBe(kExit.ok);
      expect(shown.bytes.equals(Buffer.from(store.get(ref)))).toBe(true);
    }
  });

  it("prints a stage table and the refs for humans; finds a run by `line N`", async () => {
    const { code, out } = await run(explain, [file, "--run", "line 3", "--budget", String(budget)]);
    expect(code).toBe(kExit.ok);
    expect(out).toContain("run long-run (");
    expect(out).toMatch(/tier critical, status ok, tokens [\d,]+ → [\d,]+/);
    expect(out).toMatch(/^stage\s+candidates\s+compacted\s+skipped\s+tokens before\s+after\s+ms$/m);
    expect(out).toMatch(/^\d tool_args|^\d historical_text|^\d tool_outputs/m);
    // A stage skipped whole says it was not run and why, not "0 candidates, no_gain 1".
    const json = JSON.parse((await run(explain, [file, "--run", "line 3", "--budget", String(budget), "--json"])).out) as ExplainReport;
    const whole = json.stages.filter((s) => s.candidateCount === 0 && s.skipped.no_gain === 1);
    expect(whole.length).toBeGreaterThan(0);
    for (const s of whole)
      expect(out).toMatch(new RegExp(`^${s.stage} ${s.name}\\s+–\\s+–\\s+not run: stage 3 replaces what it would shorten \\(no_gain\\)  `, "m"));
    expect(out).not.toMatch(/^\d \w+\s+0\s+0\s+no_gain 1\b/m);
    expect(out).toContain("held in memory only");
    expect(out).toMatch(/^ {2}workspace\/outputs\/\w+_[0-9a-f]{32}\.\w+$/m);
  });

  it("states the stage table's own figures above it: its first tokens before, its last after (a finish row where the exact recount moved them)", async () => {
    // Seed 11's 30 steps at 3,000 end near the budget, where the exact recount decides; the
    // corpus's runs (when present) at 2,000 and 8,000 as well.
    const lines = [lineOf("near-budget", generateRun({ seed: 11, steps: 30 }).messages, "openai-chat")];
    const [dev2] = kCorpusFiles.filter((f) => f.endsWith("dev2.jsonl.gz"));
    if (dev2) lines.push(...corpusLines({ files: [dev2] }).slice(0, 4));
    const input = join(dir, "explain-figures.jsonl");
    writeFileSync(input, lines.join("\n") + "\n");
    let finishes = 0;
    for (let line = 1; line <= lines.length; line++) {
      for (const b of line === 1 ? [3000] : [2000, 8000]) {
        const { code, out } = await run(explain, [input, "--run", `line ${line}`, "--budget", String(b)]);
        expect(code).toBe(kExit.ok);
        const [, before, after] = /^tier \w+, status \w+, tokens ([\d,]+) → ([\d,]+), /m.exec(out)!;
        const rows = tableRows(out);
        if (out.includes("stage 0 (fits)")) continue; // the normal tier: no stage, no table
        expect(rows.length).toBeGreaterThan(0);
        expect(rows[0].before, `line ${line} at ${b}`).toBe(before);
        expect(rows.at(-1)!.after, `line ${line} at ${b}`).toBe(after);
        for (let i = 1; i < rows.length; i++) expect(rows[i].before).toBe(rows[i - 1].after);
        const r = json<ExplainReport>((await run(explain, [input, "--run", `line ${line}`, "--budget", String(b), "--json"])).out);
        expect([before, after]).toEqual([r.tokensBefore, r.tokensAfter].map((n) => n.toLocaleString("en-US")));
        if (rows.at(-1)!.label === "finish") finishes++;
      }
    }
    expect(finishes).toBeGreaterThan(0);
  });

  it("finds a run by a bare line number that is no run's id, and lists at most --refs N refs (10 by default)", async () => {
    const byNumber = await run(explain, [file, "--run", "3", "--budget", String(budget)]);
    expect(byNumber.code).toBe(kExit.ok);
    expect(byNumber.out).toContain("run long-run (");
    const all = json<ExplainReport>((await run(explain, [file, "--run", "3", "--budget", String(budget), "--json"])).out).refs;
    expect(all.length).toBeGreaterThan(10);
    const listed = (out: string) => out.split("\n").filter((l) => /^ {2}workspace\//.test(l)).length;
    expect(listed(byNumber.out)).toBe(10);
    expect(byNumber.out).toContain(`… and ${all.length - 10} more (--refs N lists N; --json all)`);
    const three = await run(explain, [file, "--run", "3", "--budget", String(budget), "--refs", "3"]);
    expect(listed(three.out)).toBe(3);
    const missing = await run(explain, [file, "--run", "9", "--budget", String(budget)]);
    expect(missing.code).toBe(kExit.failed);
    expect(missing.err).toContain('no run with id "9" and no line 9');
  });

  it("says that nothing runs in the normal tier", async () => {
    const { code, out } = await run(explain, [file, "--run", "short", "--budget", "1000000", "--json"]);
    expect(code).toBe(kExit.ok);
    expect(json<ExplainReport>(out)).toMatchObject({ tier: "normal", stages: [], refs: [], status: "ok" });
    const human = await run(explain, [file, "--run", "short", "--budget", "1000000"]);
    expect(human.out).toContain("stage 0 (fits)");
  });

  it("runs legacy mode and a step preset as compact would", async () => {
    const legacy = await run(explain, [file, "--run", "long-run", "--budget", String(budget), "--mode", "legacy", "--json"]);
    expect(legacy.code).toBe(kExit.ok);
    expect(json<ExplainReport>(legacy.out)).toMatchObject({ mode: "legacy", stages: [] });
    expect(json<ExplainReport>(legacy.out).tokensAfter).toBeLessThan(json<ExplainReport>(legacy.out).tokensBefore);
    expect((await run(explain, [file, "--run", "long-run", "--budget", String(budget), "--mode", "legacy"])).out).toContain("legacy mode");
    const preset = await run(explain, [file, "--run", "long-run", "--budget", String(budget), "--preset", "debugging", "--json"]);
    expect(preset.code).toBe(kExit.ok);
    expect(json<ExplainReport>(preset.out)).toMatchObject({ mode: "tiered", status: "ok" });
  });

  it("reports an infeasible budget as a finding", async () => {
    const { code, out } = await run(explain, [file, "--run", "long-run", "--budget", "50", "--json"]);
    expect(code).toBe(kExit.ok);
    const r = json<ExplainReport>(out);
    expect(r.status).toBe("budget_infeasible");
    expect(r.infeasible?.criticalTokens).toBeGreaterThan(50);
  });

  it("says when the critical messages fit but not with the summary of what was removed", async () => {
    const { messages, critical } = tightTaskPrompt();
    const tight = join(dir, "tight.jsonl");
    writeFileSync(tight, `${JSON.stringify({ id: "tight", messages })}\n`);
    const own = promptTokens(critical);
    const { code, out } = await run(explain, [tight, "--run", "tight", "--budget", String(own + 5)]);
    expect(code).toBe(kExit.ok);
    expect(out).toMatch(
      new RegExp(
        `budget infeasible: the critical messages take ${own.toLocaleString("en-US")} tokens of the ${(own + 5).toLocaleString("en-US")} budget, and [\\d,]+ with what ctxfold keeps of the rest`,
      ),
    );
  });

  it("reads stdin and gzip", async () => {
    const gz = gzipSync(readFileSync(file));
    const a = await run(explain, ["-", "--run", "short", "--budget", "100000", "--json"], Readable.from([gz]));
    expect(a.code).toBe(kExit.ok);
    expect(json<ExplainReport>(a.out)).toMatchObject({ file: "stdin", line: 1, id: "short" });
  });

  it("names the id and the file when no run has it, and the line when it is bad", async () => {
    const missing = await run(explain, [file, "--run", "nope", "--budget", "1000"]);
    expect(missing.code).toBe(kExit.failed);
    expect(missing.err).toBe(`ctxfold explain: no run with id "nope" in ${file} (1 line could not be read)\n`);
    const bad = await run(explain, [file, "--run", "line 2", "--budget", "1000"]);
    expect(bad.code).toBe(kExit.failed);
    expect(bad.err).toContain(`${file}:2: not JSON`);
    const wrongFormat = await run(explain, [file, "--run", "short", "--budget", "1000", "--format", "langchain"]);
    expect(wrongFormat.code).toBe(kExit.failed);
    expect(wrongFormat.err).toContain(`${file}:1`);
  });

  it("rejects bad usage", async () => {
    await expect(run(explain, [file, "--budget", "1000"])).rejects.toThrow(/--run/);
    await expect(run(explain, [file, "--run", "short"])).rejects.toThrow(/--budget/);
    await expect(run(explain, [file, "--run", "short", "--budget", "-5"])).rejects.toBeInstanceOf(UsageError);
    await expect(run(explain, [file, "--run", "short", "--budget", "100", "--format", "xml"])).rejects.toThrow(/--format/);
    await expect(run(explain, [file, "--run", "short", "--budget", "100", "--mode", "fast"])).rejects.toThrow(/--mode/);
    await expect(run(explain, [file, "--run", "short", "--budget", "100", "--preset", "nope"])).rejects.toThrow(/--preset/);
  });

  it("--preset takes a preset's own name only, in explain and compact alike (not an inherited key such as toString)", async () => {
    for (const name of ["toString", "constructor", "__proto__"]) {
      await expect(run(explain, [file, "--run", "short", "--budget", "100", "--preset", name])).rejects.toThrow(/--preset: one of /);
      await expect(run(compact, [file, "-o", join(dir, "never.jsonl"), "--budget", "100", "--preset", name])).rejects.toThrow(/--preset: one of /);
    }
  });

  it("--format takes the CLI's short names and the API's names, and lists both when it refuses one", async () => {
    const a = await run(explain, [file, "--run", "short", "--budget", "1000", "--format", "openai", "--json"]);
    const b = await run(explain, [file, "--run", "short", "--budget", "1000", "--format", "openai-chat", "--json"]);
    expect(b.code).toBe(a.code);
    const [ra, rb] = [a.out, b.out].map((o) => JSON.parse(o) as ExplainReport);
    expect(rb.format).toBe("openai-chat");
    expect({ ...rb, durationMs: 0, stages: rb.stages.map((st) => ({ ...st, durationMs: 0 })) }).toEqual({
      ...ra,
      durationMs: 0,
      stages: ra.stages.map((st) => ({ ...st, durationMs: 0 })),
    });
    await expect(run(explain, [file, "--run", "short", "--budget", "100", "--format", "xml"])).rejects.toThrow(/openai, .*openai-chat, .*openai-responses/);
  });
});

describe("show", () => {
  it("writes the stored bytes exactly: binary, WTF-8, a message index", async () => {
    const offload = join(dir, "show");
    const store = createFsStore({ dir: offload });
    const binary = Uint8Array.from({ length: 512 }, (_, i) => (i * 7) % 256);
    const index = putMessages(store, generateRun({ seed: 9, steps: 2 }).messages.slice(0, 3)).ref;
    const refs = [store.put(binary, { kind: "media", ext: "bin" }), store.put("lone \ud800 surrogate, ✓ and \r\n", { kind: "output" }), index];
    for (const ref of refs) {
      const r = await run(show, [ref, "--offload-dir", offload]);
      expect(r.code).toBe(kExit.ok);
      expect(r.err).toBe("");
      expect(r.bytes.equals(Buffer.from(store.get(ref)))).toBe(true);
    }
    // The packs compact writes are read as well as plain files.
    const packs = createPackStore({ dir: offload });
    const packed = packs.put("in a pack\n", { kind: "output" });
    packs.flush();
    const fromPack = await run(show, [packed, "--offload-dir", offload]);
    expect(fromPack.code).toBe(kExit.ok);
    expect(fromPack.out).toBe("in a pack\n");
    const shownIndex = json<{ ctxfold: string; refs: string[] }>((await run(show, [index, "--offload-dir", offload])).out);
    expect(shownIndex.ctxfold).toBe("messages");
    expect(shownIndex.refs).toHaveLength(3);
    // A bare file name, and a ref under another prefix, name the same file.
    const name = refs[0].split("/").pop()!;
    expect((await run(show, [name, "--offload-dir", offload])).bytes.equals(Buffer.from(binary))).toBe(true);
    expect((await run(show, [`elsewhere/${name}`, "--offload-dir", offload])).bytes.equals(Buffer.from(binary))).toBe(true);
  });

  it("with --format, gives a history or message ref back as the removed messages in that provider format", async () => {
    const offload = join(dir, "show-format");
    const store = createFsStore({ dir: offload });
    const removed = generateRun({ seed: 11, steps: 3 }).messages.filter((m) => m.role !== "system");
    const { ref: index, refs } = putMessages(store, removed);
    const messageRef = refs[1];
    for (const format of ["openai", "openai-chat", "anthropic", "responses", "ai-sdk", "langchain"] as const) {
      const api = format === "openai" ? "openai-chat" : format === "responses" ? "openai-responses" : format;
      const whole = await run(show, [index, "--offload-dir", offload, "--format", format]);
      expect(whole.code, whole.err).toBe(kExit.ok);
      expect(json(whole.out)).toEqual(JSON.parse(JSON.stringify(renderMessages(removed, api))));
      const one = await run(show, [messageRef, "--offload-dir", offload, "--format", format]);
      expect(json(one.out)).toEqual(JSON.parse(JSON.stringify(renderMessages([removed[1]], api))));
    }
    // A content ref is its bytes whatever --format says; a bad format is bad usage.
    const text = store.put("plain text", { kind: "output" });
    expect((await run(show, [text, "--offload-dir", offload, "--format", "anthropic"])).out).toBe("plain text");
    await expect(run(show, [index, "--offload-dir", offload, "--format", "xml"])).rejects.toThrow(/--format/);
  });

  it("compact's summary names a ref of its output and the show line that reads it back", async () => {
    const out = join(dir, "summary-ref.jsonl");
    const input = join(dir, "summary-ref-in.jsonl");
    writeFileSync(
      input,
      `${generateRuns(3, 5)
        .map((r) => lineOf(r.id, r.messages, "openai-chat"))
        .join("\n")}\n`,
    );
    const r = await run(compact, [input, "-o", out, "--budget", "2000"]);
    expect(r.code, r.err).toBe(kExit.ok);
    const line = /^a ref +(\S+): (ctxfold show .*)$/m.exec(r.err);
    expect(line, r.err).not.toBeNull();
    expect(readFileSync(out, "utf8")).toContain(line![1]);
    const [, , ref, , offload] = line![2].split(" ");
    const shown = await run(show, [ref, "--offload-dir", offload, "--format", "openai"]);
    expect(shown.code).toBe(kExit.ok);
    expect(Array.isArray(json(shown.out))).toBe(true);
  });

  it("ends quietly when the reader of its pipe goes away (EPIPE)", async () => {
    const offload = join(dir, "show-epipe");
    const ref = createFsStore({ dir: offload }).put("x".repeat(100_000));
    const f = fakeIo();
    f.io.stdout = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    });
    expect(await show([ref, "--offload-dir", offload], f.io)).toBe(kExit.ok);
  });

  it("fails with the ref named for a malformed, a missing ref and a missing directory", async () => {
    const offload = join(dir, "show-empty");
    mkdirSync(offload, { recursive: true });
    const malformed = await run(show, ["../../etc/passwd", "--offload-dir", offload]);
    expect(malformed.code).toBe(kExit.failed);
    expect(malformed.err).toContain('"../../etc/passwd"');
    const ref = "workspace/outputs/output_0123456789abcdef.txt";
    const missing = await run(show, [ref, "--offload-dir", offload]);
    expect(missing.code).toBe(kExit.failed);
    expect(missing.err).toContain(`"${ref}" is not stored in ${offload}`);
    const noDir = await run(show, [ref, "--offload-dir", join(dir, "no-such-dir")]);
    expect(noDir.err).toContain("does not exist");
    expect(missing.out + malformed.out + noDir.out).toBe("");
  });

  it("rejects bad usage", async () => {
    await expect(run(show, ["workspace/outputs/output_0123456789abcdef.txt"])).rejects.toThrow(/--offload-dir/);
    await expect(run(show, ["--offload-dir", dir])).rejects.toThrow(/REF/);
    await expect(run(show, ["a", "b", "--offload-dir", dir])).rejects.toBeInstanceOf(UsageError);
  });
});

describe("validate", () => {
  /** A hand-built OpenAI run whose tool result answers no call (an error in every format). */
  const orphan = [
    { role: "user", content: "hi" },
    { role: "assistant", content: "ok" },
    { role: "tool", tool_call_id: "call_9", content: "out" },
  ];

  it("finds no issue in valid runs of every format", async () => {
    const file = join(dir, "valid.jsonl");
    writeFileSync(file, kFormats.map((f, i) => lineOf(`run-${f}`, gen[i % gen.length].messages, f)).join("\n") + "\n");
    const { code, out, err } = await run(validate, [file]);
    expect(err).toBe("");
    expect(code).toBe(kExit.ok);
    expect(out).toBe(`${file}: 5 runs, no issues\n`);
  });

  it("prints each issue with file:line, run id, code and path; exits 4 for errors", async () => {
    const file = join(dir, "issues.jsonl");
    writeFileSync(file, [lineOf("fine", gen[0].messages, "openai-chat"), JSON.stringify({ run_id: "orphaned", messages: orphan })].join("\n"));
    const { code, out } = await run(validate, [file]);
    expect(code).toBe(kValidateExit.errors);
    expect(out).toContain(`${file}:2: run orphaned (openai-chat): error TOOL_RESULT_ORPHAN at messages[2]: `);
    expect(out).toMatch(/1 issue \(1 error, 0 warnings\) in 1 of 2 runs; TOOL_RESULT_ORPHAN 1\n$/);
  });

  it("exits 5 when every issue is a warning (a call still waiting for its result)", async () => {
    const file = join(dir, "pending.jsonl");
    const pending = [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }] },
    ];
    writeFileSync(file, JSON.stringify({ id: "pending", messages: pending }) + "\n");
    const { code, out } = await run(validate, [file]);
    // The call's own field, not the canonical messages[1].parts[0].
    expect(out).toContain("warning TOOL_CALL_PENDING at messages[1].tool_calls[0]: ");
    expect(out).toMatch(/\(0 errors, 1 warning\)/);
    expect(code).toBe(kValidateExit.warnings);
  });

  it("names the field in the line's own shape (Anthropic: a block of a wire message that is two canonical ones)", async () => {
    // system + [user, assistant(tool_use), user(tool_result + text)]: the last wire message is two canonical ones.
    const wire = {
      id: "anth",
      system: "be brief",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: { command: "ls" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "a b" },
            { type: "text", text: "   " },
          ],
        },
      ],
    };
    const file = join(dir, "anth.jsonl");
    writeFileSync(file, JSON.stringify(wire) + "\n");
    const { code, out } = await run(validate, [file, "--json"]);
    expect(code).toBe(kValidateExit.errors);
    const r = json<ValidateReport>(out);
    const empty = r.issues.find((i) => i.code === "EMPTY_TEXT")!;
    expect(empty).toMatchObject({ file, line: 1, run: "anth", format: "anthropic", severity: "error" });
    expect([empty.path, empty.canonicalPath]).toEqual(["messages[2].content[1]", "messages[4].parts[0]"]);
    const human = await run(validate, [file]);
    expect(human.out).toContain(`${file}:1: run anth (anthropic): error EMPTY_TEXT at messages[2].content[1]: `);
  });

  it("reports unparseable lines on stderr, still validates the rest, and exits 1", async () => {
    const file = join(dir, "broken.jsonl");
    writeFileSync(file, ["{not json", JSON.stringify({ id: "o", messages: orphan }), "", '[{"role":"wizard","content":"x"}]'].join("\n"));
    const { code, out, err } = await run(validate, [file, "--json"]);
    expect(code).toBe(kExit.failed);
    expect(err).toContain(`${file}:1: not JSON`);
    expect(err).toContain(`${file}:4:`);
    const r = json<ValidateReport>(out);
    expect(r.runs).toBe(1);
    expect(r.badLines.map((b) => b.line)).toEqual([1, 4]);
    expect(r.badLines[0].code).toBe("E_BAD_INPUT");
    expect(r.summary).toMatchObject({ issues: 1, errors: 1, warnings: 0, runsWithIssues: 1, byCode: { TOOL_RESULT_ORPHAN: 1 } });
  });

  it("reads every line in the --format given: another format's lines cannot be parsed", async () => {
    const file = join(dir, "as-langchain.jsonl");
    writeFileSync(file, [lineOf("lc", gen[0].messages, "langchain"), lineOf("an", gen[1].messages, "anthropic")].join("\n"));
    const lc = await run(validate, [file, "--format", "langchain", "--json"]);
    expect(lc.code).toBe(kExit.failed);
    expect(json<ValidateReport>(lc.out)).toMatchObject({ runs: 1, badLines: [{ line: 2 }] });
    const auto = await run(validate, [file, "--format", "auto"]);
    expect(auto.code).toBe(kExit.ok);
    await expect(run(validate, [file, "--format", "gemini"])).rejects.toThrow(/--format/);
  });

  it("--errors-only leaves warnings out of the output and the exit code; reads gzip from stdin", async () => {
    // Ends on an unanswered call: TOOL_CALL_PENDING, a warning.
    const pending = [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }] },
    ];
    const data = gzipSync(JSON.stringify({ id: "p", messages: pending }) + "\n");
    const all = await run(validate, ["-", "--json"], Readable.from([data]));
    expect(all.code).toBe(kValidateExit.warnings);
    expect(json<ValidateReport>(all.out).issues).toMatchObject([{ code: "TOOL_CALL_PENDING", severity: "warning", file: "stdin", run: "p" }]);
    const errorsOnly = await run(validate, ["-", "--errors-only"], Readable.from([data]));
    expect(errorsOnly.code).toBe(kExit.ok);
    expect(errorsOnly.out).toBe("stdin: 1 run, no issues\n");
  });
});

describe("bench", () => {
  /** `bench` run with another script than the package's (a test's hook). */
  const withScript =
    (benchScript: string): Command =>
    (argv, io) =>
      bench(argv, io, { benchScript });

  it("finds dist/bench/run.js in the package root", () => {
    const { script, cwd } = locateBench();
    expect(script).toBe(join(cwd, "dist", "bench", "run.js"));
    expect(JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")).name).toBe("ctxfold");
  });

  it("runs the script with the arguments, streams its output and returns its exit code", async () => {
    const script = join(dir, "fake-bench.mjs");
    writeFileSync(
      script,
      "process.stdout.write('args ' + JSON.stringify(process.argv.slice(2)) + '\\n'); process.stderr.write('note\\n'); process.exitCode = 7;\n",
    );
    const r = await run(withScript(script), ["--quick", "--json", "--scope", "hash"]);
    expect(r.out).toBe('args ["--quick","--json","--scope","hash"]\n');
    expect(r.err).toBe("note\n");
    expect(r.code).toBe(7);
  });

  it("forwards an interrupt and exits 130", async () => {
    const script = join(dir, "slow-bench.mjs");
    writeFileSync(
      script,
      "process.on('SIGINT', () => { process.stdout.write('stopped\\n'); process.exit(1); }); process.stdout.write('ready\\n'); setTimeout(() => {}, 20000);\n",
    );
    const f = fakeIo();
    const done = withScript(script)([], f.io);
    await expect.poll(() => f.stdout(), { timeout: 10_000 }).toBe("ready\n");
    f.interrupts.forEach((h) => h());
    expect(await done).toBe(kExit.interrupted);
    expect(f.stdout()).toBe("ready\nstopped\n");
    expect(f.interrupts).toEqual([]);
  });

  it("says in one line that the script is absent, and exits 1", async () => {
    const r = await run(withScript(join(dir, "no-bench.js")), ["--quick"]);
    expect(r.code).toBe(kExit.failed);
    expect(r.out).toBe("");
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    expect(r.err).toContain("no benchmark script at");
  });
});
