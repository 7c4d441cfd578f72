import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { StepReducer } from "../../src/steps/reducer.js";
import {
  droppedLine,
  kTurnSummaryKind,
  mergeAdjacent,
  summarizeTurn,
  summarizeTurns,
  summaryMessage,
  truncateToolOutput,
  truncateToolOutputs,
} from "../../src/block/turns.js";
import { createMemoryStore } from "../../src/store/index.js";

const lines = (n: number, width = 10) => Array.from({ length: n }, (_, i) => `line ${i}`.padEnd(width, "."));
const kMarker = /^\[… (\d+) (lines cut|long lines shortened); full output: (\S+)\]$/;

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

describe("truncateToolOutput", () => {
  it("leaves an output of exactly maxLines lines alone and stores nothing", () => {
    const store = createMemoryStore();
    const text = lines(50).join("\n");
    const r = truncateToolOutput(text, 50, store);
    expect(r).toEqual({ text, cut: false });
    expect(r.text).toBe(text);
    expect(store.refs()).toEqual([]);
  });

  it("cuts maxLines + 1 lines: first ⌈0.8·m⌉, marker, last ⌊0.2·m⌋; the ref gives the original back", () => {
    const store = createMemoryStore();
    const all = lines(51);
    const text = all.join("\n");
    const r = truncateToolOutput(text, 50, store);
    expect(r.cut).toBe(true);
    const out = r.text.split("\n");
    expect(out).toHaveLength(51);
    expect(out.slice(0, 40)).toEqual(all.slice(0, 40));
    expect(out[40]).toBe(`[… 1 lines cut; full output: ${r.ref}]`);
    expect(out.slice(41)).toEqual(all.slice(41));
    expect(store.getText(r.ref!)).toBe(text);
    expect(r.ref).toMatch(/\/output_[0-9a-f]{32}\.log$/);
  });

  it.each([1, 2, 3, 5, 7, 10, 13])("keeps ⌈0.8·%i⌉ head and ⌊0.2·m⌋ tail lines of a long output", (m) => {
    const all = lines(100);
    const r = truncateToolOutput(all.join("\n"), m, createMemoryStore());
    const out = r.text.split("\n");
    const head = Math.ceil((4 * m) / 5);
    const tail = Math.floor(m / 5);
    expect(head + tail).toBe(m);
    expect(out).toHaveLength(m + 1);
    expect(out.slice(0, head)).toEqual(all.slice(0, head));
    expect(out[head]).toMatch(kMarker);
    expect(out[head]).toContain(`[… ${100 - m} lines cut;`);
    expect(out.slice(head + 1)).toEqual(tail ? all.slice(-tail) : []);
  });

  it("maxLines 0 makes the whole output the marker; the empty output is never cut", () => {
    const store = createMemoryStore();
    const r = truncateToolOutput("a\nb\nc", 0, store);
    expect(r.text).toBe(`[… 3 lines cut; full output: ${r.ref}]`);
    expect(store.getText(r.ref!)).toBe("a\nb\nc");
    expect(truncateToolOutput("", 0, store)).toEqual({ text: "", cut: false });
    expect(truncateToolOutput("", 5, store)).toEqual({ text: "", cut: false });
  });

  it("cuts one huge line to 400 characters with a 'long lines shortened' marker", () => {
    const store = createMemoryStore();
    const text = "x".repeat(50_000);
    const r = truncateToolOutput(text, 50, store);
    const [line, marker, ...rest] = r.text.split("\n");
    expect(rest).toEqual([]);
    expect(line).toHaveLength(400);
    expect(line.endsWith("…")).toBe(true);
    expect(marker).toBe(`[… 1 long lines shortened; full output: ${r.ref}]`);
    expect(store.getText(r.ref!)).toBe(text);
  });

  it("cut for characters alone, it comes out within maxLines × 200 characters", () => {
    const text = lines(5, 300).join("\n"); // 5 lines of 300 chars: 1504 > 5 × 200
    const r = truncateToolOutput(text, 5, createMemoryStore());
    expect(r.cut).toBe(true);
    const kept = r.text.split("\n").filter((l) => !kMarker.test(l));
    expect(kept).toHaveLength(5);
    expect(kept.join("\n").length).toBeLessThanOrEqual(1000);
  });

  it("a few lines with many characters below the limit are left alone", () => {
    const text = lines(5, 199).join("\n");
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(truncateToolOutput(text, 5, createMemoryStore()).cut).toBe(false);
  });

  it("keeps CRLF line breaks and a final line break", () => {
    const store = createMemoryStore();
    const text = lines(20).join("\r\n") + "\r\n";
    const r = truncateToolOutput(text, 5, store);
    expect(r.text.endsWith("\r\n")).toBe(true);
    expect(r.text.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
    const out = r.text.slice(0, -2).split("\r\n");
    expect(out).toHaveLength(6);
    expect(out[4]).toBe(`[… 15 lines cut; full output: ${r.ref}]`);
    expect(out[5]).toBe(lines(20)[19]);
    expect(store.getText(r.ref!)).toBe(text);
    // "a\nb\n" is two lines, not three.
    expect(truncateToolOutput("a\nb\n", 2, store).cut).toBe(false);
  });

  it("never splits a surrogate pair when it shortens a line", () => {
    const text = "😀".repeat(6000); // 12,000 code units on one line
    for (const m of [1, 3, 50]) {
      const r = truncateToolOutput(text, m, createMemoryStore());
      expect(r.cut).toBe(true);
      expect(r.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  it("is idempotent: a cut output is not cut or stored again", () => {
    const store = createMemoryStore();
    for (const m of [0, 1, 5, 50]) {
      const once = truncateToolOutput(lines(300, 500).join("\n"), m, store);
      const stored = store.refs().length;
      const twice = truncateToolOutput(once.text, m, store);
      expect(twice).toEqual({ text: once.text, cut: false });
      expect(store.refs()).toHaveLength(stored);
    }
  });

  it("rejects a bad maxLines", () => {
    for (const bad of [-1, 1.5, NaN]) expect(() => truncateToolOutput("x", bad, createMemoryStore())).toThrow(/non-negative integer/);
  });

  it("property: a cut is recoverable, bounded and idempotent", () => {
    const line = fc.string({ maxLength: 600, unit: "binary" }).map((s) => s.replace(/[\r\n]/g, ""));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 80 }), fc.constantFrom("\n", "\r\n"), fc.boolean(), fc.integer({ min: 0, max: 30 }), (ls, sep, trailing, m) => {
        const store = createMemoryStore();
        const text = ls.join(sep) + (trailing && ls.length ? sep : "");
        const r = truncateToolOutput(text, m, store);
        const n = text === "" ? 0 : text.replace(/\r?\n$/, "").split(/\r?\n/).length;
        if (!r.cut) {
          expect(r.text).toBe(text);
          expect(n <= m + 1).toBe(true);
          return;
        }
        expect(store.getText(r.ref!)).toBe(text);
        const out = r.text.replace(/\r?\n$/, "").split(/\r?\n/);
        expect(out.length).toBeLessThanOrEqual(m + 1);
        expect(out.filter((l) => kMarker.test(l))).toHaveLength(1);
        for (const l of out) if (!kMarker.test(l)) expect(l.length).toBeLessThanOrEqual(400);
        expect(truncateToolOutput(r.text, m, store)).toEqual({ text: r.text, cut: false });
      }),
      { numRuns: 300 },
    );
  });
});

describe("truncateToolOutputs", () => {
  const msgs = (): Message[] => [
    { id: "u", role: "user", parts: [{ type: "text", text: lines(100).join("\n") }], meta: {} },
    {
      id: "a",
      role: "assistant",
      parts: [
        { type: "tool-call", id: "c1", name: "bash", args: "{}" },
        { type: "tool-call", id: "c2", name: "bash", args: "{}" },
      ],
      meta: {},
    },
    { id: "t1", role: "tool", parts: [{ type: "tool-result", callId: "c1", content: [{ type: "text", text: "short" }] }], meta: {} },
    {
      id: "t2",
      role: "tool",
      meta: {},
      parts: [
        {
          type: "tool-result",
          callId: "c2",
          content: [
            { type: "text", text: lines(30).join("\n") },
            { type: "media", mediaType: "image/png", data: "AAAA" },
            { type: "text", text: lines(40).join("\n") },
          ],
        },
      ],
    },
    { id: "p", role: "tool", pinned: true, parts: [{ type: "tool-result", callId: "c3", content: [{ type: "text", text: lines(100).join("\n") }] }], meta: {} },
  ];

  it("cuts every text part of every tool result, returns untouched messages as the same objects, never mutates", () => {
    const input = deepFreeze(msgs());
    const snapshot = structuredClone(input);
    const store = createMemoryStore();
    const r = truncateToolOutputs(input, 10, store);
    expect(r.messages).not.toBe(input);
    expect(r.messages[0]).toBe(input[0]); // user text is not a tool output
    expect(r.messages[1]).toBe(input[1]);
    expect(r.messages[2]).toBe(input[2]); // short
    expect(r.messages[4]).toBe(input[4]); // pinned: never cut
    const t2 = r.messages[3];
    expect(t2).not.toBe(input[3]);
    expect(t2.id).toBe("t2");
    const result = t2.parts[0];
    if (result.type !== "tool-result") throw new Error("expected a tool result");
    expect(result.content[1]).toBe((input[3].parts[0] as { content: unknown[] }).content[1]); // media kept as is
    const texts = result.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text);
    expect(texts.every((t) => t.split("\n").length === 11)).toBe(true);
    expect(r.refs).toHaveLength(2);
    expect(store.getText(r.refs[0])).toBe(lines(30).join("\n"));
    expect(store.getText(r.refs[1])).toBe(lines(40).join("\n"));
    expect(input).toEqual(snapshot);
  });

  it("with nothing to cut gives every message back as is", () => {
    const input = msgs();
    const r = truncateToolOutputs(input, 1000, createMemoryStore());
    r.messages.forEach((m, i) => expect(m).toBe(input[i]));
    expect(r.refs).toEqual([]);
  });
});

describe("summarizeTurn", () => {
  const turn: Message[] = [
    { id: "u", role: "user", parts: [{ type: "text", text: "Please fix the failing\ntest in parser.py" }], meta: {} },
    {
      id: "a",
      role: "assistant",
      meta: {},
      parts: [
        { type: "reasoning", text: "SECRET-REASONING I should look at the test first", signature: "sig" },
        { type: "text", text: "Let me run the tests." },
        { type: "tool-call", id: "c1", name: "bash", args: JSON.stringify({ command: "pytest -q" }) },
        { type: "tool-call", id: "c2", name: "read_file", args: JSON.stringify({ path: "src/parser.py" }) },
      ],
    },
    { id: "t1", role: "tool", parts: [{ type: "tool-result", callId: "c1", content: [{ type: "text", text: "1 failed, 3 passed\nexit code: 1" }] }], meta: {} },
    { id: "t2", role: "tool", parts: [{ type: "tool-result", callId: "c2", content: [{ type: "text", text: "def parse(x):\n    return x\n" }] }], meta: {} },
  ];

  it("is one line: label, user head, assistant head, then each step's observation, in order", () => {
    const line = summarizeTurn(turn, "Turn 3");
    const observations = new StepReducer({ offload: false }).reduceMessages(turn).map((s) => s.observation);
    expect(observations).toHaveLength(2);
    expect(line.startsWith(`Turn 3: user: "Please fix the failing ⏎ test in parser.py"; assistant: "Let me run the tests."; `)).toBe(true);
    expect(line).toBe(`Turn 3: user: "Please fix the failing ⏎ test in parser.py"; assistant: "Let me run the tests."; ${observations.join("; ")}`);
    expect(line).not.toContain("\n");
    expect(line).not.toContain("SECRET-REASONING");
  });

  it("stores nothing by default and is at most 300 characters", () => {
    const store = createMemoryStore();
    const big: Message[] = [
      { id: "u", role: "user", parts: [{ type: "text", text: "word ".repeat(500) }], meta: {} },
      {
        id: "a",
        role: "assistant",
        parts: Array.from({ length: 20 }, (_, k) => ({
          type: "tool-call" as const,
          id: `c${k}`,
          name: "bash",
          args: JSON.stringify({ command: `echo ${k}` }),
        })),
        meta: {},
      },
      ...Array.from(
        { length: 20 },
        (_, k): Message => ({
          id: `t${k}`,
          role: "tool",
          parts: [{ type: "tool-result", callId: `c${k}`, content: [{ type: "text", text: "y\n".repeat(5000) }] }],
          meta: {},
        }),
      ),
    ];
    const line = summarizeTurn(big, "Turn 9", new StepReducer({ store, offload: false }));
    expect(line.length).toBeLessThanOrEqual(300);
    expect(line.endsWith("…")).toBe(true);
    expect(store.refs()).toEqual([]);
    expect(summarizeTurn(big, "Turn 9")).toBe(line);
  });

  it("a turn of reasoning alone says there is nothing to summarise", () => {
    const only: Message[] = [{ id: "a", role: "assistant", parts: [{ type: "reasoning", text: "hmm", signature: "s" }], meta: {} }];
    expect(summarizeTurn(only, "Turn 1")).toBe("Turn 1: (nothing to summarise)");
  });
});

describe("summarizeTurns", () => {
  const run = generateRun({ seed: 21, steps: 30 });
  const turns = Array.from({ length: 30 }, (_, t) => ({ label: `Turn ${t + 1}`, messages: run.messages.filter((m) => m.turn?.index === t + 1) }));
  const estimate = (text: string) => Math.ceil(text.length / 4);
  const cost = (ls: string[]) => ls.reduce((n, l) => n + estimate(l), 0);

  it("summarises every turn when the budget allows, with no dropped line", () => {
    const r = summarizeTurns(turns, 1_000_000, estimate);
    expect(r).toMatchObject({ kept: 30, dropped: 0 });
    expect(r.lines).toEqual(turns.map((t) => summarizeTurn(t.messages, t.label)));
  });

  it("drops the remaining turns when the budget is spent, and the dropped line counts within it", () => {
    const full = summarizeTurns(turns, 1_000_000, estimate);
    const all = cost(full.lines);
    let lastKept = -1;
    for (const budget of [0, 5, 10, 40, 100, 250, 600, all - 1, all]) {
      const r = summarizeTurns(turns, budget, estimate);
      expect(r.kept + r.dropped).toBe(30);
      expect(cost(r.lines)).toBeLessThanOrEqual(budget);
      expect(r.kept).toBeGreaterThanOrEqual(lastKept);
      lastKept = r.kept;
      expect(r.lines.slice(0, r.kept)).toEqual(full.lines.slice(0, r.kept));
      if (r.dropped > 0 && r.lines.length > 0) expect(r.lines.at(-1)).toBe(droppedLine(r.dropped));
      if (r.dropped > 0 && r.lines.length > 0) expect(r.lines.at(-1)).toBe(`… ${r.dropped} later turns not summarised`);
      // Maximal: one more turn would not fit beside the dropped line.
      if (r.dropped > 0 && r.lines.length > 0) {
        const more = cost(full.lines.slice(0, r.kept + 1)) + (r.dropped > 1 ? estimate(droppedLine(r.dropped - 1)) : 0);
        expect(more).toBeGreaterThan(budget);
      }
    }
    expect(summarizeTurns(turns, 0, estimate)).toEqual({ lines: [], kept: 0, dropped: 30 });
    expect(summarizeTurns(turns, all, estimate)).toMatchObject({ kept: 30, dropped: 0 });
    expect(summarizeTurns(turns, all - 1, estimate).lines.at(-1)).toMatch(/^… \d+ later turns not summarised$/);
  });

  it("an empty list is no lines", () => {
    expect(summarizeTurns([], 100, estimate)).toEqual({ lines: [], kept: 0, dropped: 0 });
  });
});

describe("summaryMessage", () => {
  it("is one user message: the header, then the lines; marked in meta", () => {
    expect(summaryMessage(["a", "b"], "Header", "s1")).toEqual({
      id: "s1",
      role: "user",
      parts: [{ type: "text", text: "Header\na\nb" }],
      meta: { ctxfold: { kind: kTurnSummaryKind } },
    });
    expect(kTurnSummaryKind).toBe("turn-summary");
    expect(summaryMessage([], "Header", "s2").parts).toEqual([{ type: "text", text: "Header" }]);
  });
});

describe("mergeAdjacent", () => {
  const m = (id: string, role: Message["role"]): Message => ({ id, role, parts: [{ type: "text", text: id }], meta: {} });

  it("merges same-role user or assistant neighbours only where a gap made them neighbours", () => {
    const input = [
      m("s", "system"),
      m("u1", "user"),
      m("u2", "user"),
      m("u3", "user"),
      m("a1", "assistant"),
      m("a2", "assistant"),
      m("t1", "tool"),
      m("t2", "tool"),
    ];
    const out = mergeAdjacent(input, [false, false, false, true, false, true, false, true]);
    expect(out.map((x) => x.id)).toEqual(["s", "u1", "u2", "a1", "t1", "t2"]);
    expect(out[2].parts.map((p) => (p as { text: string }).text)).toEqual(["u2", "u3"]);
    expect(out[3].parts.map((p) => (p as { text: string }).text)).toEqual(["a1", "a2"]);
    expect(out[0]).toBe(input[0]);
    expect(out[1]).toBe(input[1]);
    expect(out[4]).toBe(input[6]);
    expect(input[2].parts).toHaveLength(1); // not mutated
  });

  it("looks past system messages, which stay where they were", () => {
    const input = [m("u1", "user"), m("s", "system"), m("u2", "user")];
    expect(mergeAdjacent(input, [false, true, false]).map((x) => x.id)).toEqual(["u1", "s"]);
    expect(mergeAdjacent(input, [false, false, true]).map((x) => x.id)).toEqual(["u1", "s"]);
    expect(mergeAdjacent(input, [false, false, false]).map((x) => x.id)).toEqual(["u1", "s", "u2"]);
  });
});
