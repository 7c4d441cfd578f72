import { describe, expect, it, vi } from "vitest";
import { CtxfoldError } from "../../src/errors.js";
import { generateRun, generateRuns, kFileReadChars, type GeneratedRun } from "../../src/gen/run.js";
import { Message, type Part, type ToolCallPart, type ToolResultPart } from "../../src/model/schema.js";

const runs = generateRuns(200, 4242);

const calls = (m: Message): ToolCallPart[] => m.parts.filter((p): p is ToolCallPart => p.type === "tool-call");
const resultOf = (m: Message): ToolResultPart => m.parts[0] as ToolResultPart;
const resultText = (m: Message): string => (resultOf(m).content[0] as { text: string }).text;

/** Every tool result with the name of the call it answers. */
function results(run: GeneratedRun): { name: string; args: Record<string, string>; result: ToolResultPart; text: string }[] {
  const byId = new Map<string, ToolCallPart>();
  const out = [];
  for (const m of run.messages) {
    for (const c of calls(m)) byId.set(c.id, c);
    if (m.role !== "tool") continue;
    const call = byId.get(resultOf(m).callId)!;
    out.push({ name: call.name, args: JSON.parse(call.args) as Record<string, string>, result: resultOf(m), text: resultText(m) });
  }
  return out;
}

/** Checks the structural contract; returns a description of the first violation, or "". */
function violation(run: GeneratedRun): string {
  const ms = run.messages;
  if (ms[0]?.role !== "system" || ms[1]?.role !== "user") return "does not open with system + user";
  if (ms[0].turn?.index !== 0 || ms[1].turn?.index !== 0) return "system and task are not turn 0";
  let turn = 0;
  let steps = 0;
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i]!;
    if (m.id !== `m${i}`) return `message ${i} has id ${m.id}`;
    if (m.turn?.loop !== 0) return `message ${i} is not in loop 0`;
    if (i < 2) continue;
    if (m.role === "tool") return `message ${i}: a tool message that answers no call just before it`;
    if (m.role === "system") return `message ${i}: a second system message`;
    if (m.turn.index !== ++turn) return `message ${i} starts turn ${m.turn.index}, expected ${turn}`;
    const cs = calls(m);
    if (cs.length) steps++;
    for (let k = 0; k < cs.length; k++) {
      const t = ms[++i];
      if (t?.role !== "tool" || t.parts.length !== 1 || t.parts[0]!.type !== "tool-result") return `call ${cs[k]!.id} is not answered at message ${i}`;
      if (resultOf(t).callId !== cs[k]!.id) return `message ${i} answers ${resultOf(t).callId}, expected ${cs[k]!.id}`;
      if (t.turn?.index !== turn) return `result ${i} is not in its call's turn`;
    }
  }
  const last = ms[ms.length - 1]!;
  if (last.role !== "assistant" || calls(last).length || !last.parts.some((p) => p.type === "text")) return "does not end with a final text answer";
  if (steps !== run.steps) return `steps is ${run.steps}, counted ${steps}`;
  return "";
}

describe("generateRun", () => {
  it("produces messages that the canonical schema accepts unchanged", () => {
    for (const run of runs) for (const m of run.messages) expect(Message.parse(m)).toEqual(m);
  });

  it("answers every call with exactly one result right after its assistant message, in order, turn by turn", () => {
    for (const run of runs) expect(violation(run), run.id).toBe("");
  });

  it("gives calls unique ids of the form call_<seed>_<n>, also across runs", () => {
    const ids = runs.flatMap((r) => r.messages.flatMap(calls).map((c) => c.id));
    expect(new Set(ids).size).toBe(ids.length);
    const first = runs[0]!.messages.flatMap(calls).map((c) => c.id);
    expect(first.slice(0, 3)).toEqual(["call_4242_1", "call_4242_2", "call_4242_3"]);
  });

  it("is deterministic: same seed deep-equal, different seed different", () => {
    expect(generateRun({ seed: 99 })).toEqual(generateRun({ seed: 99 }));
    expect(generateRun({ seed: 99 })).not.toEqual(generateRun({ seed: 100 }));
    expect(generateRun({ seed: 99, steps: 6 }).messages.slice(2)).not.toEqual(generateRun({ seed: 100, steps: 6 }).messages.slice(2));
    expect(generateRuns(3, 7)[1]).toEqual(generateRun({ seed: 8 }));
  });

  it("never reads Math.random or the clock", () => {
    const boom = (): never => {
      throw new Error("nondeterministic source used");
    };
    vi.spyOn(Math, "random").mockImplementation(boom);
    vi.spyOn(Date, "now").mockImplementation(boom);
    vi.spyOn(performance, "now").mockImplementation(boom);
    expect(() => generateRuns(20, 1)).not.toThrow();
  });

  it("gives tools realistic JSON arguments, compact and spaced", () => {
    const keys: Record<string, string[]> = {
      read_file: ["path"],
      write_file: ["path", "content"],
      bash: ["command"],
      grep: ["pattern", "path"],
      search: ["pattern", "path"],
      web_fetch: ["url"],
      list_dir: ["path"],
    };
    const all = runs.flatMap((r) => r.messages.flatMap(calls));
    for (const c of all) expect(Object.keys(JSON.parse(c.args) as object), c.args).toEqual(keys[c.name]);
    expect(new Set(all.map((c) => c.name))).toEqual(new Set(Object.keys(keys)));
    expect(all.some((c) => c.args.startsWith('{"') && !c.args.includes('": '))).toBe(true);
    expect(all.some((c) => /^\{"\w+": "/.test(c.args))).toBe(true);
    expect(all.some((c) => c.args.startsWith("{\n"))).toBe(true);
  });

  it("keeps file reads between 0.5 and 40 KB and spans that range", () => {
    const reads = runs
      .flatMap(results)
      .filter((x) => x.name === "read_file" && !x.result.isError)
      .map((x) => x.text.length);
    expect(reads.length).toBeGreaterThan(500);
    for (const n of reads) {
      expect(n).toBeGreaterThanOrEqual(kFileReadChars.min);
      expect(n).toBeLessThanOrEqual(kFileReadChars.max);
    }
    expect(reads.some((n) => n < 1000)).toBe(true);
    expect(reads.some((n) => n > 30_000)).toBe(true);
  });

  it("reads back what the agent wrote", () => {
    let checked = 0;
    for (const run of runs) {
      const written = new Map<string, string>();
      for (const x of results(run)) {
        if (x.name === "write_file" && !x.result.isError) written.set(x.args.path!, x.args.content!);
        if (x.name === "read_file" && !x.result.isError && written.has(x.args.path!)) {
          const content = written.get(x.args.path!)!;
          const numbered = content
            .split("\n")
            .map((l, i) => `${String(i + 1).padStart(6)}\t${l}`)
            .join("\n");
          if (x.text === content || x.text === numbered) checked++;
          else expect.fail(`${run.id}: read of ${x.args.path} differs from what was written`);
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("shows shell exit codes, search hits as path:line: match, and tracebacks or missing files on failure", () => {
    const all = runs.flatMap(results);
    const shell = all.filter((x) => x.name === "bash");
    const exit = /<returncode>(\d+)<\/returncode>|exit code: (\d+)$|^Exit code: (\d+)/m;
    for (const x of shell) {
      const m = exit.exec(x.text);
      expect(m, x.text.slice(0, 200)).not.toBeNull();
      expect(Number(m![1] ?? m![2] ?? m![3]) !== 0).toBe(x.result.isError === true);
    }
    const hits = all.filter((x) => (x.name === "grep" || x.name === "search") && !x.result.isError && x.text !== "No matches found.");
    expect(hits.length).toBeGreaterThan(0);
    for (const x of hits) for (const line of x.text.split("\n")) expect(line).toMatch(/^\S+:\d+: \S/);
    const failed = all.filter((x) => x.result.isError);
    for (const x of failed) expect(x.text).toMatch(/Traceback \(most recent call last\):|\n {4}at \S|no such file or directory/i);
    expect(failed.some((x) => x.text.includes("Traceback (most recent call last):"))).toBe(true);
    expect(failed.some((x) => /\n {4}at \S/.test(x.text))).toBe(true);
    expect(all.every((x) => x.text.length > 0)).toBe(true);
  });

  it("has failures, parallel calls, reasoning, redaction and steering at the default rates", () => {
    const ms = runs.flatMap((r) => r.messages);
    const parts: Part[] = ms.flatMap((m) => m.parts);
    const reasoning = parts.filter((p) => p.type === "reasoning");
    const assistants = ms.filter((m) => m.role === "assistant");
    const steering = runs.flatMap((r) => r.messages.slice(2).filter((m) => m.role === "user"));
    const failed = parts.filter((p) => p.type === "tool-result" && p.isError === true);
    const results = parts.filter((p) => p.type === "tool-result");
    const parallel = assistants.filter((m) => calls(m).length > 1);
    const steps = assistants.filter((m) => calls(m).length > 0);
    expect(failed.length / results.length).toBeGreaterThan(0.1);
    expect(failed.length / results.length).toBeLessThan(0.2);
    expect(parallel.length / steps.length).toBeGreaterThan(0.15);
    expect(parallel.length / steps.length).toBeLessThan(0.25);
    expect(reasoning.length / assistants.length).toBeGreaterThan(0.25);
    expect(reasoning.length / assistants.length).toBeLessThan(0.35);
    expect(steering.length).toBeGreaterThan(0);
    const redacted = reasoning.filter((p) => p.redacted !== undefined);
    expect(redacted.length).toBeGreaterThan(0);
    for (const p of redacted) expect(p.text === undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(p.redacted!)).toBe(true);
    for (const p of reasoning.filter((x) => x.redacted === undefined)) {
      expect(p.text!.length).toBeGreaterThan(0);
      expect(p.signature).toMatch(/^[A-Za-z0-9+/]{200,}={0,2}$/);
    }
    const stepCounts = runs.map((r) => r.steps);
    expect(Math.min(...stepCounts)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...stepCounts)).toBeLessThanOrEqual(40);
  });

  it("honours the options at their extremes", () => {
    const none = generateRun({ seed: 3, steps: 12, parallel: 0, failures: 0, reasoning: 0, steering: 0 });
    expect(none.steps).toBe(12);
    expect(violation(none)).toBe("");
    const parts = none.messages.flatMap((m) => m.parts);
    expect(parts.some((p) => p.type === "reasoning" || (p.type === "tool-result" && p.isError))).toBe(false);
    expect(none.messages.filter((m) => m.role === "assistant").every((m) => calls(m).length <= 1)).toBe(true);
    expect(none.messages.filter((m) => m.role === "user")).toHaveLength(1);

    const all = generateRun({ seed: 3, steps: 12, parallel: 1, failures: 1, reasoning: 1, steering: 1, redacted: 1 });
    expect(violation(all)).toBe("");
    const assistants = all.messages.filter((m) => m.role === "assistant");
    expect(assistants.every((m) => m.parts[0]!.type === "reasoning" && (m.parts[0] as { redacted?: string }).redacted)).toBe(true);
    expect(assistants.slice(0, -1).every((m) => calls(m).length >= 2)).toBe(true);
    expect(all.messages.filter((m) => m.role === "tool").every((m) => resultOf(m).isError === true)).toBe(true);
    expect(all.messages.filter((m) => m.role === "user")).toHaveLength(12);

    const empty = generateRun({ seed: 3, steps: 0 });
    expect(empty.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
  });

  it("rejects bad options with E_BAD_INPUT naming the option", () => {
    const bad = [{ seed: 1.5 }, { seed: 1, steps: -1 }, { seed: 1, steps: 2.5 }, { seed: 1, failures: 1.2 }, { seed: 1, parallel: Number.NaN }];
    for (const o of bad) {
      let err: unknown;
      try {
        generateRun(o);
      } catch (e) {
        err = e;
      }
      expect(CtxfoldError.isInstance(err) && err.code === "E_BAD_INPUT" && err.path === `options.${Object.keys(o).at(-1)}`, JSON.stringify(o)).toBe(true);
    }
  });

  it("generates 1,000 valid runs", () => {
    const many = generateRuns(1000, 20261123);
    expect(many).toHaveLength(1000);
    expect(new Set(many.map((r) => r.id)).size).toBe(1000);
    for (const run of many) if (violation(run)) expect(violation(run), run.id).toBe("");
  });
});
