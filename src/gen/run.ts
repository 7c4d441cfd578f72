/**
 * Seeded generator of realistic agent runs in the canonical model (src/model/schema.ts): a
 * system prompt describing the tools, a user task, then assistant turns (optional reasoning
 * with a signature, a short text, one or several tool calls with raw JSON arguments) each
 * answered by its tool results, occasional user steering, and a final answer. Tests and
 * benchmarks of every adapter and compactor stand on it where ../shared/corpus is absent.
 *
 * Decisions where real runs vary:
 * - Each run simulates one project (Python or TypeScript) with a fixed file tree, symbols and
 *   a tool harness style (argument spacing, shell exit-code wrapper, absolute or relative
 *   paths, line-numbered reads, Python or Node error traces), so one run is self-consistent
 *   and runs differ from each other. A file reads the same every time it is read; a file the
 *   agent wrote reads back as written.
 * - Turns: the system prompt and the first user task are turn 0; each assistant message and
 *   the tool messages answering it make one turn; a steering user message is a turn of its
 *   own; the final answer is the last turn. Every message is `{ loop: 0, index }`.
 * - An assistant step says a short text 85% of the time (always right after a failure or a
 *   steering message, which it acknowledges); otherwise it only calls, as models often do.
 * - Parallel steps (2-4 calls) use read-only tools: reads, searches, listings, fetches.
 * - One tool message per result (the OpenAI Chat shape), holding one tool-result part with
 *   one text part. `isError` is present only on failures; the result carries no tool name
 *   (the call id links it), as messages parsed from OpenAI Chat do.
 * - A failed call always shows a Python or Node traceback or "No such file or directory"
 *   (case as the tool prints it); a failed shell command ends with a non-zero exit code.
 * - Tool results are never empty (an empty shell output still has its exit-code line), since
 *   some providers reject empty text blocks.
 */
import { CtxfoldError } from "../errors.js";
import type { Message, Part, Role, ToolCallPart } from "../model/schema.js";
import { between, chance, formatArgs, makeHarness, makeProject, pick, type Ctx, type ToolKey } from "./run-project.js";
import { finalText, reasoningPart, stepText, steeringText, systemPrompt, taskText } from "./run-texts.js";
import { kParallelTools, kTools, weightedTool } from "./run-tools.js";
import { createRng } from "./text.js";

export { kFileReadChars } from "./run-project.js";

export interface GenerateRunOptions {
  /** Any integer, taken modulo 2^32 (ids and `gen-<seed>` show that value); the run is a pure function of the options. */
  seed: number;
  /** Tool steps (assistant turns that call tools). @default random in 5..40 */
  steps?: number;
  /** Probability that a step makes 2 to 4 parallel calls. @default 0.2 */
  parallel?: number;
  /** Probability that a tool call fails. @default 0.15 */
  failures?: number;
  /** Probability that an assistant turn opens with a reasoning part. @default 0.3 */
  reasoning?: number;
  /** Probability of a user steering message before each step after the first. @default 0.1 */
  steering?: number;
  /** Probability that a reasoning part is redacted (encrypted data, no text). @default 0.05 */
  redacted?: number;
}

export interface GeneratedRun {
  /** `gen-<seed>`. */
  id: string;
  messages: Message[];
  /** Tool steps generated (assistant turns with calls). */
  steps: number;
}

/**
 * One run. Same options, same run (deep-equal); all randomness comes from the seed.
 * Throws CtxfoldError E_BAD_INPUT for a non-integer seed, a negative or fractional step
 * count, or a probability outside [0, 1].
 */
export function generateRun(options: GenerateRunOptions): GeneratedRun {
  const o = resolveOptions(options);
  const r = createRng(o.seed);
  const steps = options.steps ?? between(r, 5, 40);
  const project = makeProject(r);
  const ctx: Ctx = { r, project, harness: makeHarness(r), files: new Map(), written: [] };
  const out = new RunWriter(o.seed);
  out.push("system", [text(systemPrompt(ctx))], 0);
  out.push("user", [text(taskText(ctx))], 0);
  let turn = 1;
  let steered = false;
  let lastFailure: string | undefined;
  for (let s = 0; s < steps; s++) {
    if (s > 0 && chance(r, o.steering)) {
      out.push("user", [text(steeringText(ctx))], turn++);
      steered = true;
    }
    const n = chance(r, o.parallel) ? between(r, 2, 4) : 1;
    const keys: ToolKey[] = [];
    for (let k = 0; k < n; k++) keys.push(n > 1 ? pick(r, kParallelTools) : weightedTool(r));
    const runs = keys.map((key) => {
      const failed = chance(r, o.failures);
      return { key, failed, run: kTools[key](ctx, failed) };
    });
    const parts: Part[] = [];
    if (chance(r, o.reasoning)) parts.push(reasoningPart(ctx, chance(r, o.redacted)));
    if (steered || lastFailure !== undefined || chance(r, 0.85)) parts.push(text(stepText(ctx, keys[0], runs[0].run.args, n, steered, lastFailure)));
    const calls = runs.map(({ key, run }) => out.call(ctx.harness.names[key], formatArgs(ctx.harness.argStyle, run.args)));
    out.push("assistant", [...parts, ...calls], turn);
    for (let k = 0; k < n; k++)
      out.push("tool", [{ type: "tool-result", callId: calls[k].id, content: [text(runs[k].run.text)], ...(runs[k].failed ? { isError: true } : {}) }], turn);
    turn++;
    steered = false;
    lastFailure = runs
      .find((x) => x.failed)
      ?.run.text.split("\n")
      .find((l) => /error|no such file/i.test(l));
  }
  const final: Part[] = chance(r, o.reasoning) ? [reasoningPart(ctx, chance(r, o.redacted))] : [];
  final.push(text(finalText(ctx)));
  out.push("assistant", final, turn);
  return { id: `gen-${o.seed}`, messages: out.messages, steps };
}

/**
 * Where each step of `messages` ends: the index after a message and the tool results that
 * follow it, in order, where a runner calls its session (the last is `messages.length`).
 */
export function stepEnds(messages: readonly Message[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < messages.length; ) {
    let j = i + 1;
    while (j < messages.length && messages[j].role === "tool") j++;
    out.push(j);
    i = j;
  }
  return out;
}

/** `count` runs; run i is `generateRun({ seed: seed + i })` (32-bit wrap-around). */
export function generateRuns(count: number, seed: number): GeneratedRun[] {
  const runs: GeneratedRun[] = [];
  for (let i = 0; i < count; i++) runs.push(generateRun({ seed: (seed + i) >>> 0 }));
  return runs;
}

function resolveOptions(options: GenerateRunOptions): Required<Omit<GenerateRunOptions, "steps">> {
  if (!Number.isInteger(options.seed)) throw new CtxfoldError("E_BAD_INPUT", `seed must be an integer, got ${options.seed}`, { path: "options.seed" });
  if (options.steps !== undefined && !(Number.isInteger(options.steps) && options.steps >= 0)) {
    throw new CtxfoldError("E_BAD_INPUT", `steps must be a non-negative integer, got ${options.steps}`, { path: "options.steps" });
  }
  const prob = (name: "parallel" | "failures" | "reasoning" | "steering" | "redacted", dflt: number): number => {
    const p = options[name] ?? dflt;
    if (!(p >= 0 && p <= 1)) throw new CtxfoldError("E_BAD_INPUT", `${name} must be a probability in [0, 1], got ${p}`, { path: `options.${name}` });
    return p;
  };
  return {
    seed: options.seed >>> 0,
    parallel: prob("parallel", 0.2),
    failures: prob("failures", 0.15),
    reasoning: prob("reasoning", 0.3),
    steering: prob("steering", 0.1),
    redacted: prob("redacted", 0.05),
  };
}

/** Numbers messages `m<i>` and calls `call_<seed>_<n>` as they are added. */
class RunWriter {
  readonly messages: Message[] = [];
  private calls = 0;
  constructor(private readonly seed: number) {}
  push(role: Role, parts: Part[], index: number): void {
    this.messages.push({ id: `m${this.messages.length}`, role, parts, turn: { loop: 0, index }, meta: {} });
  }
  call(name: string, args: string): ToolCallPart {
    return { type: "tool-call", id: `call_${this.seed}_${++this.calls}`, name, args };
  }
}

const text = (t: string): { type: "text"; text: string } => ({ type: "text", text: t });
