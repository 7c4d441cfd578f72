// The command line's help, version and mistakes: every command's --help, --version, and one line
// naming a mistyped command or flag with the nearest valid one (exit 2).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { kCommandUsage, nearest } from "../../src/cli/usage.js";
import { fakeIo } from "./fake-io.js";

async function cli(argv: string[]) {
  const f = fakeIo();
  const code = await runCli(argv, f.io);
  return { code, out: f.stdout(), err: f.stderr() };
}

describe("help and version", () => {
  it.each(Object.keys(kCommandUsage))("ctxfold %s --help and -h: that command's usage on stdout, exit 0", async (command) => {
    for (const flag of ["--help", "-h"]) {
      const r = await cli([command, flag]);
      expect(r.code).toBe(0);
      expect(r.out.startsWith(`usage: ctxfold ${command}`)).toBe(true);
      expect(r.out).toContain("exit codes:");
      expect(r.err).toBe("");
    }
  });

  it("a command's help describes each of its flags with its default, and lists only the exit codes it can give", async () => {
    for (const command of Object.keys(kCommandUsage)) {
      const { out } = await cli([command, "--help"]);
      const [synopsis, rest = ""] = out.split("\noptions:\n");
      const options = rest.split("\nexit codes:\n")[0];
      // Every flag of the synopsis has its line under options:, and each line says its default or that it is required.
      for (const flag of new Set([...synopsis.matchAll(/--[a-z][\w-]*/g)].map((m) => m[0]).filter((f) => f !== "--help"))) {
        expect(options, `${command} ${flag}`).toMatch(new RegExp(`^ {2}(?:-\\w, )?${flag}\\b.*\\((?:default [^)]*|required)\\)$`, "m"));
      }
      const codes = [...out.split("\nexit codes:\n")[1].matchAll(/^ +(\d+) {2}/gm)].map((m) => Number(m[1]));
      expect(codes.slice(0, 3), command).toEqual([0, 1, 2]);
      if (!["compact", "worker"].includes(command)) expect(out, command).not.toMatch(/Redis|--resume|SIGINT|\b130\b/);
    }
    expect((await cli(["compact", "--help"])).out).toMatch(/--preset NAME .*interactive-chat, long-research, code-analysis, debugging/);
    expect((await cli(["validate", "--help"])).out).toMatch(/^ {4}4 {2}errors found/m);
    // The README's transcript is the command's output.
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const quoted = /```\n\$ ctxfold show --help\n([\s\S]*?)```/.exec(readme);
    expect(quoted, "README's show --help transcript").not.toBeNull();
    expect(quoted![1]).toBe((await cli(["show", "--help"])).out);
  });

  it("--help after other arguments still asks for help; after -- it is an argument", async () => {
    expect((await cli(["compact", "in.jsonl", "--budget", "5", "--help"])).code).toBe(0);
    const r = await cli(["count", "--", "--help"]);
    expect(r.code).toBe(1); // counts a file named --help, which does not exist
    expect(r.err).toContain("--help");
  });

  it("ctxfold --help lists every command, bench only where its script is (a checkout, not an installed package)", async () => {
    const f = fakeIo();
    expect(await runCli(["--help"], f.io)).toBe(0);
    for (const c of Object.keys(kCommandUsage)) expect(f.stdout()).toContain(`\n  ${c} `);
    const installed = fakeIo();
    expect(await runCli(["--help"], installed.io, { benchScript: "/nonexistent/dist/bench/run.js" })).toBe(0);
    expect(installed.stdout()).not.toContain("\n  bench ");
    expect(installed.stdout()).toContain("\n  compact ");
  });

  it("--version, -V and version print the package's version", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    for (const flag of ["--version", "-V", "version"]) expect(await cli([flag])).toEqual({ code: 0, out: `ctxfold ${version}\n`, err: "" });
  });
});

describe("mistakes: one line naming the problem and the nearest valid choice, exit 2", () => {
  it.each([
    [["compat", "x"], 'ctxfold: unknown command "compat" (did you mean compact?); ctxfold --help lists them'],
    [["valdiate"], 'ctxfold: unknown command "valdiate" (did you mean validate?)'],
    [["frobnicate"], 'ctxfold: unknown command "frobnicate"; ctxfold --help lists them'],
    [
      ["compact", "in.jsonl", "-o", "out.jsonl", "--budgt", "8000"],
      "ctxfold compact: unknown option --budgt (did you mean --budget?); see ctxfold compact --help",
    ],
    [["stats", "in.jsonl", "--jsno"], "unknown option --jsno (did you mean --json?)"],
    [["eval", "in.jsonl", "--budget", "8000", "--fail-undr", "savings=0.5"], "unknown option --fail-undr (did you mean --fail-under?)"],
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget"], "ctxfold compact: --budget needs a value"],
    [["compact", "in.jsonl", "-o"], "ctxfold compact: --output needs a value"],
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "lots"], '--budget: expected a positive integer, got "lots"'],
    [["show", "ref", "--xyz"], "unknown option --xyz; see ctxfold show --help"],
    // A negative number is a value the option refuses by name, not a missing one.
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "-1"], '--budget: expected a positive integer, got "-1"'],
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget=-1"], '--budget: expected a positive integer, got "-1"'],
    [["compact", "in.jsonl", "-o", "out.jsonl", "--workers", "-2", "--budget", "5"], '--workers: expected a positive integer, got "-2"'],
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "--quiet"], "--budget needs a value"],
    [
      ["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "-x"],
      "--budget needs a value (what follows it looks like an option: write --budget=VALUE if it is the value)",
    ],
    // Plain decimal safe integers only: no hex, exponents, fractions or values Number() rounds.
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "0x10"], '--budget: expected a positive integer, got "0x10"'],
    [
      ["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "9007199254740993"],
      '--budget: expected a positive integer, got "9007199254740993" (decimal digits, at most 9007199254740991)',
    ],
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "1e3"], '--budget: expected a positive integer, got "1e3"'],
    [["compact", "in.jsonl", "-o", "out.jsonl", "--budget", "8000.0"], '--budget: expected a positive integer, got "8000.0"'],
    [["stats", "in.jsonl", "--budget", "8000,0x10"], '--budget: expected a comma list of positive integers, got "8000,0x10"'],
    [["stats", "in.jsonl", "--budget", "-5"], '--budget: expected a comma list of positive integers, got "-5"'],
  ])("%j", async (argv, message) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    expect(r.out).toBe("");
  });
});

describe("nearest", () => {
  it("finds typos, transpositions and unique prefixes, and nothing for what is far from every choice", () => {
    const flags = ["--budget", "--format", "--offload-dir", "--output", "--quiet", "--queue"];
    expect(nearest("--budgt", flags)).toBe("--budget");
    expect(nearest("--fromat", flags)).toBe("--format");
    expect(nearest("--offload", flags)).toBe("--offload-dir");
    expect(nearest("--queu", flags)).toBe("--queue");
    expect(nearest("--quite", flags)).toBe("--quiet");
    expect(nearest("--colour", flags)).toBeUndefined();
    expect(nearest("x", ["compact", "stats"])).toBeUndefined();
  });
});
