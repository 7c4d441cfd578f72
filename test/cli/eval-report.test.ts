// The files `ctxfold eval` leaves: by default ctxfold-eval.html and ctxfold-eval.json in the
// current directory, named on stderr; -o OUT and --html FILE to put them elsewhere, --no-report
// for none; refused before any run is read when a file is an input (exit 2) or cannot be written
// (exit 1); written whole or not at all. Every run here writes in a temp dir.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { kExit } from "../../src/cli/common.js";
import { writeReport } from "../../src/cli/commands/eval-report.js";
import { runCli } from "../../src/cli/main.js";
import { CtxfoldError } from "../../src/errors.js";
import type { EvalReport } from "../../src/eval/index.js";
import { generateRun } from "../../src/gen/run.js";
import { run } from "./fake-io.js";
import { spawnCli } from "./spawn-cli.js";

let dir: string;
let input: string;
const kQuick = ["--budget", "8000", "--points", "4", "--trace", "1"];

/** `ctxfold eval` in-process (the checkout's cwd: every run here names where its files go, or refuses). */
const evalCli = (argv: string[], stdin?: Readable) => run((args, io) => runCli(["eval", ...args], io), argv, stdin);

/** A fresh empty directory under the test's own. */
const freshDir = (name: string) => {
  const d = join(dir, name);
  mkdirSync(d);
  return d;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ctxfold-eval-report-"));
  input = join(dir, "runs.jsonl");
  const line = (seed: number) => JSON.stringify({ id: `gen-${seed}`, messages: renderMessages(generateRun({ seed, steps: 20 }).messages, "openai-chat") });
  writeFileSync(input, `${[31, 32].map(line).join("\n")}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ctxfold eval's report files", () => {
  it("by default writes ctxfold-eval.html and ctxfold-eval.json in the current directory and names them in one line on stderr, last", () => {
    const cwd = freshDir("default");
    const r = spawnCli(cwd, ["eval", input, ...kQuick]);
    expect(r.code, r.stderr).toBe(kExit.ok);
    expect(readdirSync(cwd).sort()).toEqual(["ctxfold-eval.html", "ctxfold-eval.json"]);
    expect(r.stderr.trimEnd().split("\n").at(-1)).toBe("ctxfold eval: report ctxfold-eval.html, summary ctxfold-eval.json");
    expect(r.stdout.toString()).toMatch(/budget 8,000: /); // the tables, as before
    expect(readFileSync(join(cwd, "ctxfold-eval.html"), "utf8")).toMatch(/^<!doctype html>/i);
    expect((JSON.parse(readFileSync(join(cwd, "ctxfold-eval.json"), "utf8")) as EvalReport).corpus.runs).toBe(2);
  });

  it("the JSON summary is the very bytes --json prints", async () => {
    const out = join(freshDir("same"), "r");
    const r = await evalCli([input, ...kQuick, "--json", "-o", out]);
    expect(r.code, r.err).toBe(kExit.ok);
    expect(readFileSync(`${out}.json`, "utf8")).toBe(r.out);
    expect(r.err).toBe(`ctxfold eval: report ${out}.html, summary ${out}.json\n`);
  });

  it("-o OUT writes OUT.html and OUT.json (-o OUT.html the same; a directory gets ctxfold-eval.* inside); --html FILE puts the JSON beside FILE", async () => {
    const d = freshDir("named");
    for (const [flags, html, json] of [
      [["-o", join(d, "a")], "a.html", "a.json"],
      [["--output", join(d, "b.html")], "b.html", "b.json"],
      [["-o", join(d, "c.json")], "c.html", "c.json"],
      [["-o", freshDir("into")], "into/ctxfold-eval.html", "into/ctxfold-eval.json"],
      [["--html", join(d, "page.html")], "page.html", "page.json"],
      [["--html", join(d, "plain")], "plain", "plain.json"],
    ] as const) {
      const r = await evalCli([input, ...kQuick, ...flags]);
      expect(r.code, r.err).toBe(kExit.ok);
      const where = html.startsWith("into/") ? dir : d;
      expect(r.err).toBe(`ctxfold eval: report ${join(where, html)}, summary ${join(where, json)}\n`);
      expect(existsSync(join(where, html)) && existsSync(join(where, json)), html).toBe(true);
    }
  });

  it("--no-report writes nothing and says nothing of a report; --quiet writes the files without the line", () => {
    const none = freshDir("none");
    const r = spawnCli(none, ["eval", input, ...kQuick, "--no-report"]);
    expect(r.code, r.stderr).toBe(kExit.ok);
    expect(readdirSync(none)).toEqual([]);
    expect(r.stderr).not.toMatch(/report/);
    const quiet = freshDir("quiet");
    const q = spawnCli(quiet, ["eval", input, ...kQuick, "--quiet"]);
    expect(q).toMatchObject({ code: kExit.ok, stderr: "" });
    expect(q.stdout.length).toBe(0);
    expect(readdirSync(quiet).sort()).toEqual(["ctxfold-eval.html", "ctxfold-eval.json"]);
  });

  it.each([
    [["--no-report", "--html", "x.html"], "--no-report writes no files, so --html has nothing to name: give one or the other"],
    [["--no-report", "-o", "x"], "--no-report writes no files, so -o/--output has nothing to name: give one or the other"],
    [["-o", "x", "--html", "y.html"], "-o/--output and --html both name the report: give one (-o OUT writes OUT.html and OUT.json)"],
    [["-o", "-"], "-o/--output: the report is files, not stdout (--json prints the summary on stdout)"],
    [["--html", "-"], "--html: the report is files, not stdout"],
    [["-o", ""], "-o/--output needs a path"],
  ])("refuses %j in one line, exit 2, writing nothing", async (flags, message) => {
    const r = await evalCli([input, ...kQuick, ...flags]);
    expect(r.code).toBe(kExit.usage);
    expect(r.err).toContain(`ctxfold eval: ${message}`);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    expect(r.out).toBe("");
  });

  it("refuses a report file that is one of the inputs (a run file, stdin's, --config, --compare), exit 2, the input untouched", async () => {
    const d = freshDir("inputs");
    const runsJson = join(d, "runs.json");
    writeFileSync(runsJson, readFileSync(input));
    const config = join(d, "mine.json");
    writeFileSync(config, JSON.stringify({ targetRatio: 0.4 }));
    const cases: [string[], RegExp, Readable?][] = [
      [[input, "--html", input], /refusing to write the HTML report .*runs\.jsonl: it is the input .*runs\.jsonl \(the same file\)/],
      [[runsJson, "-o", join(d, "runs")], /refusing to write the JSON summary .*runs\.json: it is the input/],
      [[runsJson, "--html", join(d, "runs.html")], /refusing to write the JSON summary .*runs\.json: it is the input/],
      [[input, "--config", config, "-o", join(d, "mine.html")], /refusing to write the JSON summary .*mine\.json: it is the input/],
      [[input, "--compare", config, "-o", join(d, "mine")], /refusing to write the JSON summary .*mine\.json: it is the input/],
    ];
    for (const [argv, message] of cases) {
      const r = await evalCli([...argv, ...kQuick]);
      expect(r.code, argv.join(" ")).toBe(kExit.usage);
      expect(r.err).toMatch(message);
      expect(r.out).toBe("");
    }
    // stdin that is a file: refused under that file's name too.
    const viaStdin = spawnCli(d, ["eval", "-", ...kQuick, "--html", input], { redirect: { stdin: input } });
    expect(viaStdin.code).toBe(kExit.usage);
    expect(viaStdin.stderr).toMatch(/refusing to write the HTML report .*: it is the file on stdin/);
    expect(readFileSync(runsJson)).toEqual(readFileSync(input));
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ targetRatio: 0.4 });
    expect(readdirSync(d).sort()).toEqual(["mine.json", "runs.json"]);
  });

  it("a directory that cannot take the files stops the eval before it reads a run: exit 1 naming the file and the OS code", async () => {
    const missing = join(dir, "no-such-dir", "r");
    const underFile = join(input, "r");
    const isDir = freshDir("taken.html");
    const cases: [string[], string][] = [
      [["-o", missing], `ctxfold eval: cannot write ${missing}.html: ENOENT (`],
      [["-o", underFile], `ctxfold eval: cannot write ${underFile}.html: ENOTDIR (${input} is not a directory)`],
      [["--html", isDir], `ctxfold eval: cannot write ${isDir}: EISDIR (it is a directory)`],
    ];
    for (const [flags, message] of cases) {
      // An input that does not exist either: the report's error comes first, before any reading.
      const r = await evalCli([join(dir, "absent.jsonl"), ...kQuick, ...flags]);
      expect(r.code, flags.join(" ")).toBe(kExit.failed);
      expect(r.err.startsWith(message), r.err).toBe(true);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    }
    expect(readdirSync(isDir)).toEqual([]);
  });

  it("a write that fails leaves both files as they were and no temp file behind (E_OUTPUT_WRITE naming the file)", async () => {
    const d = freshDir("atomic");
    const r = await evalCli([input, ...kQuick, "--json", "--no-report"]);
    const report = JSON.parse(r.out) as EvalReport;
    const html = join(d, "r.html");
    writeFileSync(html, "old page");
    const json = join(d, "gone", "r.json");
    let thrown: unknown;
    try {
      writeReport({ html, json }, report);
    } catch (err) {
      thrown = err;
    }
    expect(CtxfoldError.isInstance(thrown) && thrown.code).toBe("E_OUTPUT_WRITE");
    expect((thrown as Error).message).toMatch(new RegExp(`^cannot write ${json}: ENOENT `));
    expect(readFileSync(html, "utf8")).toBe("old page");
    expect(readdirSync(d)).toEqual(["r.html"]);
    writeReport({ html, json: join(d, "r.json") }, report);
    expect(readdirSync(d).sort()).toEqual(["r.html", "r.json"]);
    expect(readFileSync(join(d, "r.json"), "utf8")).toBe(r.out);
  });
});
