/**
 * Focus-aware extraction: the focus terms of a conversation, the focus lines of an output, and
 * stage 2's replacement (observation, focus lines, ref) on hand-built conversations.
 */
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/model/schema.js";
import { Focus, focusLines, focusTerms, kFocusHeader, kMaxFocusTerms } from "../../../src/policy/relevance/focus.js";
import { createCompactor } from "../../../src/policy/index.js";
import { createMemoryStore } from "../../../src/store/index.js";

/** A measure of tokens simple enough to reason about: 4 characters a token. */
const quarter = (s: string) => Math.ceil(s.length / 4);

const sys: Message = { id: "sys", role: "system", parts: [{ type: "text", text: "You are a coding agent." }], meta: {} };
const user = (id: string, text: string): Message => ({ id, role: "user", parts: [{ type: "text", text }], meta: {} });
const call = (id: string, text: string, args: Record<string, unknown>, name = "read_file"): Message => ({
  id: `a_${id}`,
  role: "assistant",
  parts: [...(text ? [{ type: "text" as const, text }] : []), { type: "tool-call", id, name, args: JSON.stringify(args) }],
  meta: {},
});
const result = (id: string, text: string): Message => ({
  id: `t_${id}`,
  role: "tool",
  parts: [{ type: "tool-result", callId: id, content: [{ type: "text", text }] }],
  meta: {},
});

/** A file listing of `n` numbered lines, with `extra` lines put at their line index. */
function file(n: number, extra: Record<number, string> = {}): string {
  return Array.from({ length: n }, (_, i) => extra[i] ?? `    value_${i} = compute(${i}) + offset  # step ${i} of the table`).join("\n");
}

describe("focusTerms", () => {
  it("reads the latest assistant text and its arguments, the tail's calls, the latest user message, then the task", () => {
    const msgs: Message[] = [
      sys,
      user("task", "The importer crashes in parse_config (src/app/config.py)."),
      call("c1", "Looking at old_helper first.", { path: "src/app/old_helper.py" }),
      result("c1", file(3)),
      user("steer", "Also check MAX_RETRIES."),
      call("c2", "", { path: "src/app/retry.py" }),
      result("c2", file(3)),
      call("c3", "Now load_settings calls parse_config.", { path: "src/app/settings.py", line: 1234 }),
      result("c3", file(3)),
    ];
    const tail = 5; // the last two steps kept whole
    expect(focusTerms(msgs, tail)).toEqual([
      "load_settings",
      "parse_config",
      "src/app/settings.py",
      "1234",
      "src/app/retry.py",
      "MAX_RETRIES",
      "src/app/config.py",
    ]);
  });

  it("leaves a secret-named argument's value out: lines naming it would echo it", () => {
    const msgs: Message[] = [
      sys,
      user("task", "Deploy it."),
      call("c1", "", { service: "billing_api", password: "Hunter2Hunter2Zebra" }, "deploy"),
      result("c1", "ok"),
    ];
    const terms = focusTerms(msgs, 2);
    expect(terms).toContain("billing_api");
    expect(terms).not.toContain("Hunter2Hunter2Zebra");
  });

  it("keeps at most kMaxFocusTerms, the latest first", () => {
    const many = Array.from({ length: kMaxFocusTerms + 50 }, (_, i) => `name_${i}`).join(" ");
    const msgs: Message[] = [sys, user("task", many), call("c1", "Edit latest_name now.", { path: "x/y.py" }), result("c1", "ok")];
    const terms = focusTerms(msgs, 2);
    expect(terms).toHaveLength(kMaxFocusTerms);
    expect(terms.slice(0, 3)).toEqual(["latest_name", "x/y.py", "name_0"]);
  });

  it("no anchors, no terms", () => {
    expect(focusTerms([], 0)).toEqual([]);
    expect(focusTerms([sys], 1)).toEqual([]);
  });
});

describe("focusLines", () => {
  const output = file(40, {
    7: "def parse_config(path):",
    12: "    settings = load_settings(path)",
    20: "    return parse_config_v2(settings)",
    33: "ValueError: parse_config got an empty path",
  });

  it("keeps the lines naming the focus, numbered from 1, in the output's order", () => {
    const lines = focusLines(output, ["parse_config", "load_settings"], 200, quarter);
    expect(lines.split("\n")).toEqual([
      kFocusHeader,
      "8: def parse_config(path):",
      "13:     settings = load_settings(path)",
      "34: ValueError: parse_config got an empty path",
    ]);
  });

  it("under the cap: more distinct terms first, then error lines, then nearer the end", () => {
    const out = file(30, {
      2: "x = parse_config(a)",
      5: "y = parse_config(b)",
      9: "ValueError: bad parse_config",
      14: "z = parse_config(load_settings(c))",
      22: "w = parse_config(d)",
    });
    const take = (tokens: number) => focusLines(out, ["parse_config", "load_settings"], tokens, quarter).split("\n").slice(1);
    const header = quarter(kFocusHeader) + 1;
    const line15 = "15: z = parse_config(load_settings(c))";
    expect(take(header + quarter(line15) + 1)).toEqual([line15]);
    const errorLine = "10: ValueError: bad parse_config";
    expect(take(header + quarter(line15) + quarter(errorLine) + 2)).toEqual([errorLine, line15]);
    const line23 = "23: w = parse_config(d)";
    expect(take(header + quarter(line15) + quarter(errorLine) + quarter(line23) + 3)).toEqual([errorLine, line15, line23]);
    expect(take(10_000)).toHaveLength(5);
  });

  it("is deterministic, whatever the order of the terms", () => {
    const a = focusLines(output, ["parse_config", "load_settings", "compute_x"], 40, quarter);
    expect(focusLines(output, ["parse_config", "load_settings", "compute_x"], 40, quarter)).toBe(a);
    expect(focusLines(output, ["compute_x", "load_settings", "parse_config"], 40, quarter)).toBe(a);
  });

  it("nothing when no line names the focus, no focus, a cap of 0 or too small for a line", () => {
    expect(focusLines(output, ["nowhere_here"], 200, quarter)).toBe("");
    expect(focusLines(output, [], 200, quarter)).toBe("");
    expect(focusLines(output, ["parse_config"], 0, quarter)).toBe("");
    expect(focusLines(output, ["parse_config"], quarter(kFocusHeader) + 2, quarter)).toBe("");
    expect(focusLines("", ["parse_config"], 200, quarter)).toBe("");
  });

  it("terms as wholes only: a longer name holding the term is not a match", () => {
    expect(focusLines("call my_parse_config()\nparse_config_v2 only", ["parse_config"], 200, quarter)).toBe("");
  });

  it("binary outputs give none", () => {
    const bin = "\x00\x01\x02PK\x03\x04 parse_config \x00\x00" + "\x07".repeat(200);
    expect(focusLines(bin, ["parse_config"], 200, quarter)).toBe("");
  });

  // That this stays fast is the bench gate's ("focus 1 MB output" in bench/enormous.ts).
  it("an enormous output: its head and tail are scanned, with true line numbers", () => {
    const n = 60_000;
    const big = Array.from({ length: n }, (_, i) =>
      i === 10 ? "head hit parse_config" : i === n / 2 ? "middle parse_config" : i === n - 3 ? "tail hit parse_config" : `filler line ${i} with some words`,
    ).join("\n");
    expect(big.length).toBeGreaterThan(1 << 20);
    const lines = focusLines(big, ["parse_config"], 200, quarter).split("\n");
    expect(lines).toEqual([kFocusHeader, "11: head hit parse_config", `${n - 2}: tail hit parse_config`]);
  });

  it("a long line shows the neighbourhoods of its terms", () => {
    const long = `${"a".repeat(500)} start parse_config end ${"b".repeat(500)} then load_settings here ${"c".repeat(500)}`;
    const [, shown] = focusLines(long, ["parse_config", "load_settings"], 400, quarter).split("\n");
    expect(shown.startsWith("1: …")).toBe(true);
    expect(shown).toContain("start parse_config end");
    expect(shown).toContain("then load_settings here");
    expect(shown.endsWith("…")).toBe(true);
    expect(shown.length).toBeLessThan(300);
  });

  it("non-English text and terms", () => {
    const out = "первая строка\nвызов обработать_данные(x)\n処理_関数 が失敗しました\nlast line";
    expect(focusLines(out, ["обработать_данные", "処理_関数"], 200, quarter).split("\n")).toEqual([
      kFocusHeader,
      "2: вызов обработать_данные(x)",
      "3: 処理_関数 が失敗しました",
    ]);
  });

  it("shows a repeated line once, and redacts secrets", () => {
    const out = "retry parse_config\nretry parse_config\nparse_config key=sk-proj-abcdefghijklmnopqrstuvwxyz123456";
    const lines = focusLines(out, ["parse_config"], 200, quarter).split("\n");
    expect(lines).toEqual([kFocusHeader, "2: retry parse_config", "3: parse_config key=[REDACTED:openai-key]"]);
  });

  it("takes a prepared Focus as well as a term list", () => {
    expect(focusLines(output, new Focus(["parse_config"]), 200, quarter)).toBe(focusLines(output, ["parse_config"], 200, quarter));
  });
});

describe("stage 2 with focus lines", () => {
  /** A task about parse_config, `n` file reads (each naming parse_config once), then the latest step. */
  function conversation(n: number): Message[] {
    const msgs: Message[] = [sys, user("task", "The importer crashes; find why parse_config rejects the path.")];
    for (let k = 0; k < n; k++) {
      msgs.push(call(`c${k}`, "", { path: `src/mod_${k}.py` }), result(`c${k}`, file(60, { [10 + k]: `    cfg = parse_config(p${k})  # caller ${k}` })));
    }
    msgs.push(call("last", "Next I look at load_settings.", { path: "src/settings.py" }), result("last", "def load_settings(): ..."));
    return msgs;
  }

  /** At a target stage 2 alone reaches on these conversations (stage 3 would replace the outputs whole). */
  const compact = async (focusTokens: number, messages: Message[], budget: number) => {
    const store = createMemoryStore();
    const r = await createCompactor({ store, focusTokens, targetRatio: 0.3 }).compactCanonical(messages, { budget });
    return { r, store };
  };
  const outputsOf = (msgs: readonly Message[]) =>
    msgs.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool-result" && p.content[0].type === "text" ? [p.content[0].text] : [])));

  it("an older output becomes its observation, its focus lines, then its ref", async () => {
    const messages = conversation(8);
    const budget = Math.floor(createCompactor().measure(messages) / 0.9);
    const { r, store } = await compact(30, messages, budget);
    expect(r.stages.find((s) => s.stage === 3)?.compacted ?? 0).toBe(0);
    const replaced = outputsOf(r.canonical).filter((t) => t.startsWith("[ctxfold]"));
    expect(replaced.length).toBeGreaterThan(0);
    for (const [k, t] of replaced.entries()) {
      const lines = t.split("\n");
      expect(lines[1]).toBe(kFocusHeader);
      expect(lines[2]).toBe(`${11 + k}:     cfg = parse_config(p${k})  # caller ${k}`);
      expect(lines.at(-1)).toMatch(/^\[full output: .+\]$/);
      const ref = /^\[full output: (.+)\]$/.exec(lines.at(-1)!)![1];
      expect(store.getText(ref)).toBe(outputsOf(messages)[k]);
    }
  });

  it("focusTokens 0 is the plain observation and ref", async () => {
    const messages = conversation(8);
    const budget = Math.floor(createCompactor().measure(messages) / 0.9);
    const { r } = await compact(0, messages, budget);
    const replaced = outputsOf(r.canonical).filter((t) => t.startsWith("[ctxfold]"));
    expect(replaced.length).toBeGreaterThan(0);
    for (const t of replaced) {
      expect(t).not.toContain(kFocusHeader);
      expect(t.split("\n")).toHaveLength(2);
    }
  });

  it("the focus lines go again, oldest first, where the observations alone reach the target", async () => {
    const messages = conversation(8);
    const total = createCompactor().measure(messages);
    // Every candidate replaced by its observation just meets the low-water mark: with its lines, none would.
    const plain = await compact(0, messages, Math.floor(total / 0.9));
    const allPlain = outputsOf(plain.r.canonical).filter((t) => t.startsWith("[ctxfold]")).length;
    // The smallest budget at which the observations alone still spare stage 3 (bisection).
    let budget = Math.floor(total / 0.9);
    for (let lo = Math.floor(total / 20); budget - lo > 8; ) {
      const mid = Math.floor((lo + budget) / 2);
      if ((await compact(0, messages, mid)).r.stages.some((s) => s.stage === 3)) lo = mid;
      else budget = mid;
    }
    const { r } = await compact(400, messages, budget);
    expect(allPlain).toBeGreaterThan(0);
    expect(r.stages.some((s) => s.stage === 3)).toBe(false);
    expect(r.tokensAfter).toBeLessThanOrEqual(budget);
    const replaced = outputsOf(r.canonical).filter((t) => t.startsWith("[ctxfold]"));
    expect(replaced[0]).not.toContain(kFocusHeader);
  });

  it("the same input gives the same output, and the next epoch renders an older output the same", async () => {
    const messages = conversation(8);
    const budget = Math.floor(createCompactor().measure(messages) / 0.9);
    const a = await compact(30, messages, budget);
    const b = await compact(30, messages, budget);
    expect(JSON.stringify(b.r.canonical)).toBe(JSON.stringify(a.r.canonical));
    // The focus moves to load_settings: outputs that hold none of its new names keep their lines.
    const later = [...messages, call("more", "Still parse_config: check src/mod_9.py.", { path: "src/mod_9.py" }), result("more", "x")];
    const c = await compact(30, later, budget);
    expect(outputsOf(c.r.canonical)[0]).toBe(outputsOf(a.r.canonical)[0]);
  });
});
