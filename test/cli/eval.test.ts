// `ctxfold eval` in-process: input formats and bad lines, thresholds and exit codes, --json,
// --html, --compare, --against, several input files reported per source, and usage errors. The
// runs that do not look at the report files write none (--no-report), or write them in a temp dir:
// the tests run in the checkout, which they must leave as they found it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderMessages, type Format } from "../../src/adapters/index.js";
import { evalCommand } from "../../src/cli/commands/eval.js";
import { runCli } from "../../src/cli/main.js";
import { kExit } from "../../src/cli/common.js";
import type { EvalReport } from "../../src/eval/index.js";
import { generateRun } from "../../src/gen/run.js";
import { run } from "./fake-io.js";

let dir: string;
let input: string;

function line(id: string, seed: number, format: Format): string {
  const wire = renderMessages(generateRun({ seed, steps: 24 }).messages, format);
  return JSON.stringify(Array.isArray(wire) ? { id, messages: wire } : { id, ...(wire as object) });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ctxfold-eval-"));
  input = join(dir, "runs.jsonl");
  writeFileSync(
    input,
    [
      line("openai-1", 11, "openai-chat"),
      "{not json",
      line("anthropic-1", 12, "anthropic"),
      JSON.stringify({ id: "bad-schema", messages: [{ role: "wizard", content: "hi" }] }),
      line("openai-2", 13, "openai-chat"),
    ].join("\n") + "\n",
  );
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ctxfold eval", () => {
  it("replays every format, lists the lines it cannot use by line and id, and passes thresholds it meets", async () => {
    const r = await run(evalCommand, [
      input,
      "--budget",
      "4000,8000",
      "--points",
      "8",
      "--json",
      "--fail-under",
      "within_budget=1,failed_visible=1,critical_verbatim=100%",
      "--no-report",
    ]);
    expect(r.code, r.err).toBe(kExit.ok);
    const report = JSON.parse(r.out) as EvalReport;
    expect(report.corpus.runs).toBe(3);
    expect(report.failedRuns.map((f) => [f.line, f.id ?? null, f.code])).toEqual([
      [2, null, "E_BAD_INPUT"],
      [4, "bad-schema", expect.stringMatching(/^E_/)],
    ]);
    expect(report.budgets.map((b) => b.budget)).toEqual([4000, 8000]);
    expect(report.thresholds).toHaveLength(6);
    expect(report.thresholds.every((t) => t.ok)).toBe(true);
    expect(report.traces.length).toBe(4); // the two runs with the most points, at each budget
    // ctxfold's row names the package and version it ran, as an installed package has them.
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(report.contenders.find((c) => c.name === "ctxfold")?.version).toBe(`ctxfold ${pkg.version}`);
  });

  it("a missed threshold exits 1 with a line naming the metric, budget, value and threshold", async () => {
    const r = await run(evalCommand, [input, "--budget", "8000", "--points", "4", "--fail-under", "throughput=1000000000,within_budget=1", "--no-report"]);
    expect(r.code).toBe(kExit.failed);
    expect(r.err).toMatch(/^ctxfold eval: threshold missed: throughput at budget 8000: [0-9.]+\/s < 1000000000\.0\/s \(ctxfold\)$/m);
    expect(r.err).not.toMatch(/within_budget/);
    expect(r.out).toMatch(/MISS throughput ≥ 1000000000 at 8000/);
  });

  it("prints a table per budget; --html writes the self-contained report; --compare adds a row", async () => {
    const cfg = join(dir, "low.json");
    writeFileSync(cfg, JSON.stringify({ targetRatio: 0.4 }));
    const html = join(dir, "report.html");
    const r = await run(evalCommand, [input, "--budget", "8000", "--points", "6", "--compare", cfg, "--html", html, "--trace", "openai-1"]);
    expect(r.code, r.err).toBe(kExit.ok);
    expect(r.out).toMatch(/budget 8,000: /);
    expect(r.out).toMatch(/^\s+ctxfold\s+100%/m);
    expect(r.out).toMatch(/^\s+ctxfold \(low\.json\)\s/m);
    expect(r.out).toMatch(/^\s+tail baseline\s+100%/m);
    // The second table of a budget: evidence, cost and fill under their --fail-under names.
    expect(r.out).toMatch(/^\s+contender\s+evidence recall\s+cost\/call\s+cost savings\s+budget fill\s+fill p95\s+savings\s+cache prefix\s/m);
    expect(r.out).toMatch(/^\s+ctxfold\s+(?:[0-9.]+%|n\/a)\s+(?:[0-9,]+|n\/a)\s+(?:[0-9.]+%|n\/a)\s+(?:[0-9.]+%|n\/a)\s+(?:[0-9.]+%|n\/a)\s+[0-9.]+/m);
    expect(r.out).toContain("at anthropic pricing (cached prefix ×0.1, the rest ×1.25)");
    expect(r.out).toMatch(/2 lines left out:\n\s+line 2: E_BAD_INPUT/);
    // --quiet: no report, the verdict in the exit code (and the HTML still written).
    const quiet = await run(evalCommand, [input, "--budget", "8000", "--points", "6", "--quiet", "--html", html]);
    expect(quiet).toMatchObject({ code: kExit.ok, out: "" });
    const page = readFileSync(html, "utf8");
    expect(page).toMatch(/<svg[^>]*class="trace"/);
    expect(page).toContain("openai-1");
    expect(page).not.toMatch(/(src|href)="https?:/);
  });

  it("--pricing sets the prices of the cost metric: a preset or read=R,write=W (default anthropic)", async () => {
    const priced = async (...extra: string[]) => {
      const r = await run(evalCommand, [input, "--budget", "4000", "--points", "6", "--json", "--trace", "0", "--no-report", ...extra]);
      expect(r.code, r.err).toBe(kExit.ok);
      return JSON.parse(r.out) as EvalReport;
    };
    const anthropic = await priced();
    const openai = await priced("--pricing", "openai");
    const custom = await priced("--pricing", "read=0,write=1");
    expect(anthropic.options.pricing).toEqual({ name: "anthropic", read: 0.1, write: 1.25 });
    expect(openai.options.pricing).toEqual({ name: "openai", read: 0.1, write: 1 });
    expect(custom.options.pricing).toEqual({ name: "custom", read: 0, write: 1 });
    const cost = (r: EvalReport) => r.budgets[0].rows[0].metrics.costPerCall!;
    expect(cost(anthropic)).toBeGreaterThan(cost(openai));
    // Caching free and writes at 1: the cost is the tokens not in the common prefix.
    expect(cost(custom)).toBeLessThan(cost(openai));
    expect(anthropic.budgets[0].rows[0].metrics.costPairs).toBeGreaterThan(0);
  });

  it("reads several files as one pooled set and reports every metric per source (the id's part before the first /), naming the worst", async () => {
    const second = join(dir, "second.jsonl");
    const bare = JSON.stringify(renderMessages(generateRun({ seed: 23, steps: 24 }).messages, "openai-chat"));
    writeFileSync(
      second,
      [line("alpha/1", 21, "openai-chat"), line("beta/1", 22, "anthropic"), "{not json", bare, line("alpha/2", 24, "openai-chat")].join("\n") + "\n",
    );
    const json = await run(evalCommand, [
      input,
      second,
      "--budget",
      "8000",
      "--points",
      "6",
      "--json",
      "--trace",
      "0",
      "--fail-under",
      "within_budget=1",
      "--no-report",
    ]);
    expect(json.code, json.err).toBe(kExit.ok);
    const report = JSON.parse(json.out) as EvalReport;
    expect(report.input).toBe(`${input}, ${second}`);
    expect(report.corpus.runs).toBe(7);
    // The pooled metrics stay where they were; the thresholds judge them.
    expect(report.budgets[0].rows[0].metrics.prompts).toBe(report.sources.groups.reduce((n, g) => n + g.budgets[0].rows[0].metrics.prompts, 0));
    expect(report.thresholds).toHaveLength(1);
    expect(report.sources.groups.map((g) => [g.source, g.runs])).toEqual([
      ["openai-1", 1],
      ["anthropic-1", 1],
      ["openai-2", 1],
      ["alpha", 2],
      ["beta", 1],
      ["unnamed", 1],
    ]);
    expect(report.failedRuns.map((f) => [f.file, f.line])).toEqual([
      [input, 2],
      [input, 4],
      [second, 3],
    ]);
    const worst = report.sources.worst.filter((w) => w.contender === "ctxfold" && w.budget === 8000);
    expect(worst.map((w) => w.metric)).toContain("cost_per_call");
    const cost = worst.find((w) => w.metric === "cost_per_call")!;
    expect(cost.value).toBe(Math.max(...report.sources.groups.map((g) => g.budgets[0].rows[0].metrics.costPerCall ?? -1)));
    const text = await run(evalCommand, [input, second, "--budget", "8000", "--points", "6", "--trace", "0", "--no-report"]);
    expect(text.out).toMatch(/^\s+source · contender\s+runs\s+within budget\s+new violations\s+critical verbatim/m);
    expect(text.out).toMatch(/^\s+alpha · ctxfold\s+2\s+100%/m);
    expect(text.out).toMatch(/^\s+unnamed · tail baseline\s+1\s/m);
    expect(text.out).toMatch(new RegExp(`^  worst source \\(ctxfold\\): .*cost_per_call ${cost.source} `, "m"));
    expect(text.out).toContain(`${second}:line 3: E_BAD_INPUT`);
  }, 60_000);

  it("--against runs an installed peer side by side", async () => {
    const r = await run(evalCommand, [input, "--budget", "8000", "--points", "4", "--against", "langchain", "--json", "--trace", "0", "--no-report"]);
    expect(r.code, r.err).toBe(kExit.ok);
    const report = JSON.parse(r.out) as EvalReport;
    expect(report.budgets[0].rows.map((x) => x.contender)).toEqual(["ctxfold", "tail baseline", "LangChain trimMessages"]);
  }, 60_000);

  it("bad usage exits 2 naming the option; a bad config file exits 1 naming the file and field", async () => {
    const cli = (...argv: string[]) => run((args, io) => runCli(["eval", ...args], io), argv);
    const usage: [string[], RegExp][] = [
      [[input], /--budget is required/],
      [[input, "--budget", "8000", "--against", "crewai"], /--against: unknown peer "crewai" \(one of langchain, mastra, ai-sdk\)/],
      [[input, "--budget", "x"], /--budget: expected a comma list of positive integers/],
      [[input, "--budget", "8000", "--fail-under", "speed=1"], /--fail-under: unknown metric "speed"/],
      [[input, "--budget", "8000", "--points", "1"], /--points: at least 2/],
      [[input, "--budget", "8000", "--pricing", "gemini"], /--pricing: bad item "gemini": expected anthropic, openai or read=R,write=W/],
      [[input, "--budget", "8000", "--pricing", "read=0.1"], /--pricing: missing write/],
      [["-", "-", "--budget", "8000"], /stdin \(-\) can be read once/],
    ];
    for (const [argv, message] of usage) {
      const r = await cli(...argv);
      expect(r.code).toBe(kExit.usage);
      expect(r.err).toMatch(message);
    }
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ softRatio: 3 }));
    let r = await cli(input, "--budget", "8000", "--config", bad);
    expect(r.code).toBe(kExit.failed);
    expect(r.err).toMatch(/bad\.json\.softRatio/);
    writeFileSync(bad, JSON.stringify({ store: "x" }));
    r = await cli(input, "--budget", "8000", "--config", bad);
    expect(r.err).toMatch(/bad\.json\.store: unknown setting "store"/);
    r = await cli(join(dir, "missing.jsonl"), "--budget", "8000");
    expect(r.code).toBe(kExit.failed);
    expect(r.err).toMatch(/ENOENT/);
  });
});
