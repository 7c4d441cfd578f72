import { afterAll, beforeAll, expect } from "vitest";
import { CtxfoldError, type CtxfoldErrorCode } from "../src/errors.js";
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRng, type Rng } from "../src/gen/text.js";
import { renderMessages, type Format } from "../src/adapters/index.js";
import type { OpenAIChatMessage } from "../src/adapters/openai-chat.js";
import { generateRuns } from "../src/gen/run.js";

/** ../shared/corpus beside the checkout, where CI and developers have it. */
export const kCorpusDir = fileURLToPath(new URL("../../shared/corpus/", import.meta.url));
/** Every corpus file there (`*.jsonl.gz`: dev.jsonl.gz, dev2.jsonl.gz…), by name; none without ../shared. */
export const kCorpusFiles = existsSync(kCorpusDir)
  ? readdirSync(kCorpusDir)
      .filter((f) => f.endsWith(".jsonl.gz"))
      .sort()
      .map((f) => join(kCorpusDir, f))
  : [];
/** The dev corpus alone: what the eval gate's thresholds hold on (test/eval/corpus-gate.test.ts). */
export const kCorpusPath = join(kCorpusDir, "dev.jsonl.gz");
export const hasCorpus = kCorpusFiles.includes(kCorpusPath);
export const kNoCorpusReason = "skipped: ../shared/corpus/dev.jsonl.gz is absent (a fresh clone without ../shared)";

export { createRng, type Rng };

/**
 * A temporary directory for one test file: made before its tests, removed after them; `root()`
 * is its path, `fresh()` the path of a new subdirectory name in it (`store-0`, `store-1`, …, not
 * made: the stores under test make their own).
 */
export function tempDirs(prefix: string): { root: () => string; fresh: () => string } {
  let root: string | undefined;
  let dirs = 0;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => rmSync(root!, { recursive: true, force: true }));
  return { root: () => root!, fresh: () => join(root!, `store-${dirs++}`) };
}

const kRunFormats: Format[] = ["openai-chat", "anthropic", "openai-responses", "ai-sdk", "langchain"];

/** Runs in every format, as bare arrays and as objects with other fields (Anthropic with `system`). */
export function generatedRunLines(count: number, seed: number): string[] {
  return generateRuns(count, seed).map((r, i) => {
    const m = renderMessages(r.messages, kRunFormats[i % kRunFormats.length]);
    const env = Array.isArray(m) ? { messages: m } : (m as object);
    return JSON.stringify(i % 3 ? { id: `run-${i}`, ...env, source: { seed, i } } : m);
  });
}

/**
 * Runs just over the batch engine's in-process threshold (1 MiB), so that `--workers 2` runs the
 * pool: the first 12 of seed 5's (1.34 MB, a quarter over it). No bigger: the tests that need a
 * pool run it tens of times, and compaction's cost grows with the input.
 */
export function poolSizedRunLines(): string[] {
  return generatedRunLines(12, 5);
}

/** The first of `names` that is an executable in /usr/bin or on PATH (a Debian package's binary .ci/run installs), or null. */
export function findExecutable(names: string[]): string | null {
  const dirs = ["/usr/bin", ...(process.env.PATH ?? "").split(delimiter)].filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // not here
      }
    }
  }
  return null;
}

/** A random string that stresses UTF-16: ASCII, BMP, astral pairs, lone surrogates. */
export function randomTricky(r: Rng, maxLen: number): string {
  const len = r.int(maxLen + 1);
  const units: number[] = [];
  while (units.length < len) {
    const k = r.next();
    if (k < 0.55) units.push(0x20 + r.int(0x5f));
    else if (k < 0.62) units.push([0x0a, 0x0d, 0x09, 0x20][r.int(4)]);
    else if (k < 0.75) units.push(0x80 + r.int(0x3000));
    else if (k < 0.85) units.push(0x4e00 + r.int(0x5000));
    else if (k < 0.93) {
      const cp = 0x10000 + r.int(0xfffff);
      units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
    } else units.push(0xd800 + r.int(0x800)); // lone surrogate, high or low
  }
  units.length = Math.min(units.length, len);
  let s = "";
  for (let i = 0; i < units.length; i += 4096) s += String.fromCharCode(...units.slice(i, i + 4096));
  return s;
}

/** The CtxfoldError `fn` throws; any other outcome fails the test. */
export function errorOf(fn: () => unknown): CtxfoldError {
  try {
    fn();
  } catch (e) {
    if (CtxfoldError.isInstance(e)) return e;
    throw e;
  }
  throw new Error("expected a CtxfoldError");
}

/** The CtxfoldError `fn` throws with `code` (fails the test if it throws nothing or something else). */
export function thrown(fn: () => unknown, code: CtxfoldErrorCode): CtxfoldError {
  try {
    fn();
  } catch (err) {
    expect(CtxfoldError.isInstance(err), String(err)).toBe(true);
    expect((err as CtxfoldError).code, String(err)).toBe(code);
    return err as CtxfoldError;
  }
  throw new Error(`expected ${code}, nothing was thrown`);
}

/** The CtxfoldError a promise rejects with; any other outcome fails the test. */
export async function rejection(p: Promise<unknown>): Promise<CtxfoldError> {
  try {
    await p;
  } catch (e) {
    expect(CtxfoldError.isInstance(e), String(e)).toBe(true);
    return e as CtxfoldError;
  }
  throw new Error("expected a CtxfoldError, nothing was thrown");
}

/**
 * The OpenAI chat prompt of a SWE-bench agent whose task takes nearly all the budget: six
 * exchanges between the task and the latest one must go, and the summary line naming their
 * ref has no room at a budget a few tokens over the critical messages (`critical`: the system
 * prompt, the task, the latest assistant text with its call and that call's result).
 */
export function tightTaskPrompt(): { messages: OpenAIChatMessage[]; critical: OpenAIChatMessage[] } {
  const words = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i % 97}`).join(" ");
  const call = (id: string, command: string) => ({ id, type: "function" as const, function: { name: "bash", arguments: JSON.stringify({ command }) } });
  const history: OpenAIChatMessage[] = Array.from({ length: 6 }, (_, k): OpenAIChatMessage[] => [
    { role: "assistant", content: `Looking at part ${k}.`, tool_calls: [call(`c${k}`, `cat src/part${k}.py`)] },
    { role: "tool", tool_call_id: `c${k}`, content: words(300, `line${k}_`) },
  ]).flat();
  const critical: OpenAIChatMessage[] = [
    { role: "system", content: "You are a helpful assistant that runs one shell command a step." },
    { role: "user", content: `Fix the issue below.\n${words(1500, "issue")}` },
    {
      role: "assistant",
      content: `THOUGHT: the format function is the culprit.\n${words(400, "code")}`,
      tool_calls: [call("last", "sed -n 1,20p src/fmt.py")],
    },
    { role: "tool", tool_call_id: "last", content: "<returncode>0</returncode>" },
  ];
  return { messages: [critical[0], critical[1], ...history, critical[2], critical[3]], critical };
}
