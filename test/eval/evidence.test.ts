// Next-step evidence recall: the term extractor it reads names with (src/model/terms.ts), the
// evidence of a prompt for its next message and how much of it an output keeps
// (src/eval/evidence.ts), and the recall replayRuns reports, on hand-built runs whose right
// values are known — then input that must not break it (no tool calls, binary or enormous
// outputs, a missing next step, non-English text).
import { describe, expect, it } from "vitest";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import type { Contender, EvalRun } from "../../src/eval/index.js";
import { evidenceKept, indexedContains, messageHasTerm, namedTerms, nextStepEvidence, termTexts, wordIndex } from "../../src/eval/evidence.js";
import { replayRuns } from "../../src/eval/replay.js";
import { containsTerm, isSpecific, occursAt, specificTerms } from "../../src/model/terms.js";
import { createRng, randomTricky } from "../helpers.js";

type M = OpenAIChatMessage;
const call = (id: string, name: string, args: string) => ({ id, type: "function" as const, function: { name, arguments: args } });

describe("specific terms (src/model/terms.ts)", () => {
  it("takes paths, relative and absolute, without the sentence's punctuation", () => {
    expect(specificTerms("Open src/utils/parse.py, ./lib/x.ts and ../a/b.c; see ~/notes.md and /etc/hosts.")).toEqual([
      "src/utils/parse.py",
      "./lib/x.ts",
      "../a/b.c",
      "~/notes.md",
      "/etc/hosts",
    ]);
    expect(specificTerms("(foo.py) foo.py. foo.py, `foo.py`")).toEqual(["foo.py"]);
    expect(specificTerms("C:\\Users\\me\\file.txt")).toEqual(["Users\\me\\file.txt"]);
  });

  it("takes flags with a name, not single-letter switches or a bare dash", () => {
    expect(specificTerms("pytest -k test_foo --maxfail=1 -rf -O2 -v --verbose -- -x")).toEqual(["test_foo", "--maxfail", "-O2", "--verbose"]);
    expect(isSpecific("--x")).toBe(false);
    expect(isSpecific("-rf")).toBe(false);
    expect(isSpecific("-k_x")).toBe(true);
  });

  it("takes numbers of 3+ characters, versions and addresses, not 42", () => {
    expect(specificTerms("port 8080, pi 3.14, eps 1e-5, v1.2.3 at 10.0.0.1, answer 42, date 2024-01-05")).toEqual([
      "8080",
      "3.14",
      "1e-5",
      "v1.2.3",
      "10.0.0.1",
      "2024-01-05",
    ]);
    expect(isSpecific("42")).toBe(false);
    expect(isSpecific("-100")).toBe(true);
  });

  it("takes camelCase, acronym-led names, ::, _ and $ names and letter-digit mixes; not plain words", () => {
    expect(specificTerms("parseConfig HTTPServer XMLHttpRequest ValueError std::vector Foo::bar::baz foo_bar $scope __init__ ab2 x1")).toEqual([
      "parseConfig",
      "HTTPServer",
      "XMLHttpRequest",
      "ValueError",
      "std::vector",
      "Foo::bar::baz",
      "foo_bar",
      "$scope",
      "__init__",
      "ab2",
    ]);
    expect(specificTerms("The README says Error: e.g. i.e. a well-known a-b-c value HELLO World")).toEqual([]);
  });

  it("gives each term once, in order of first occurrence", () => {
    expect(specificTerms("b_2 a_1 b_2 a_1 c_3")).toEqual(["b_2", "a_1", "c_3"]);
  });

  it("reads non-English text: Cyrillic and CJK paths and identifiers, not plain words", () => {
    expect(specificTerms("Путь /tmp/данные.txt и функция обработатьДанные, 日本語のテキスト src/日本.py")).toEqual([
      "/tmp/данные.txt",
      "обработатьДанные",
      "src/日本.py",
    ]);
    expect(specificTerms("Привет мир 你好世界 مرحبا")).toEqual([]);
  });

  it("presence: whole terms only, at word-character ends; case-sensitive", () => {
    expect(containsTerm("/repo/foo/bar.py", "foo/bar.py")).toBe(true);
    expect(containsTerm("see foo.py.", "foo.py")).toBe(true);
    expect(containsTerm("port:8080,", "8080")).toBe(true);
    expect(containsTerm("foobar", "bar")).toBe(false);
    expect(containsTerm("foo.pyc", "foo.py")).toBe(false);
    expect(containsTerm("a_foo_bar", "foo_bar")).toBe(false);
    expect(containsTerm("18080", "8080")).toBe(false);
    expect(containsTerm("parseconfig", "parseConfig")).toBe(false);
    // A term starting with a non-word character needs no boundary before it.
    expect(containsTerm("---verbose", "--verbose")).toBe(true);
    // A later occurrence counts when the first is part of a longer word.
    expect(containsTerm("foo_bar_baz then foo_bar", "foo_bar")).toBe(true);
    expect(containsTerm("большиеданные", "данные")).toBe(false);
    expect(containsTerm("файл данные.txt", "данные.txt")).toBe(true);
    expect(containsTerm("", "x")).toBe(false);
    expect(containsTerm("x", "")).toBe(false);
    expect(occursAt("a foo_bar", "foo_bar", 2)).toBe(true);
    expect(occursAt("a foo_bar", "foo_bar", 1)).toBe(false);
    expect(occursAt("afoo_bar", "foo_bar", 1)).toBe(false);
    expect(occursAt("foo_bar", "foo_bar", -1)).toBe(false);
  });

  it("the word index answers as containsTerm does (differential, on tricky text)", () => {
    const r = createRng(7);
    const vocab = ["foo", "foo_bar", "a.b", "/x/y.py", "--flag", "8080", "Ünïcode", "日本", "𝑥", "$", "::", "_"];
    let checked = 0;
    for (let k = 0; k < 300; k++) {
      let text = randomTricky(r, 60);
      for (let j = r.int(6); j > 0; j--) text += [" ", "_", "", ".", "/", "x"][r.int(6)] + vocab[r.int(vocab.length)];
      text += randomTricky(r, 20);
      const ix = wordIndex(text);
      const terms = new Set([...specificTerms(text), ...vocab.map((a) => a + vocab[r.int(vocab.length)]), ...vocab]);
      for (const t of terms) {
        if (t === "") continue;
        expect(indexedContains(ix, t), `${JSON.stringify(t)} in ${JSON.stringify(text)}`).toBe(containsTerm(text, t));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(3000);
  });
});

// ---------------------------------------------------------------------------------------------
// A hand-built run: the agent reads config/loader.py (named in the task), then edits it.

const sys: M = { role: "system", content: "You are a careful coding agent. Use tools_v2 when asked." };
const task: M = { role: "user", content: "Fix the YAML bug in config/loader.py." };
const a1: M = { role: "assistant", content: "Let me read the loader.", tool_calls: [call("call_1", "read_file", '{"path":"config/loader.py"}')] };
const t1: M = { role: "tool", tool_call_id: "call_1", content: "def parseConfig(path):\n    return yaml_load(path)  # line 120\n" };
// Names parseConfig and yaml_load (from t1), config/loader.py (in the task: not evidence), safe_load (new), 4096 (new).
const a2: M = {
  role: "assistant",
  content: "parseConfig calls yaml_load; I will switch config/loader.py to a safe loader with a 4096 limit.",
  tool_calls: [call("call_2", "edit_file", '{"path":"config/loader.py","old":"yaml_load(path)","new":"safe_load(path)"}')],
};
const t2: M = { role: "tool", tool_call_id: "call_2", content: "edited 1 line" };
// Names safe_load (a2's arguments), yaml_load and parseConfig (t1, a2), tools_v2 (system only: not evidence).
const a3: M = { role: "assistant", content: "Done: safe_load replaces yaml_load in parseConfig; no tools_v2 needed." };
const run: EvalRun = { id: "loader", messages: [sys, task, a1, t1, a2, t2, a3] };

const stub = (name: string, compact: Contender["compact"]): Contender => ({ name, version: "test", note: "stub", compact });
const identity = stub("identity", async (messages) => ({ messages }));
const anchorsOnly = stub("anchors only", async (messages) => ({ messages: messages.slice(0, 2) }));
const summary = stub("summary", async (messages) => ({
  messages: [...messages.slice(0, 2), { role: "user", content: "Earlier: read the loader; parseConfig uses yaml_load." }],
}));
const refsOnly = stub("refs only", async (messages) => ({
  messages: [...messages.slice(0, 2), { role: "user", content: "Earlier steps stored as ref:7f3a9c (tool output, 2 KB)." }],
}));

async function recallOf(runs: EvalRun[], c: Contender, budget = 1) {
  const r = await replayRuns(runs, [c], { budgets: [budget], points: 40 });
  return r.metrics.get(budget)!.get(c)!;
}

describe("next-step evidence", () => {
  it("is what the next message names from the trajectory, not from the system prompt or the task", () => {
    expect(namedTerms(a2)).toEqual(["parseConfig", "yaml_load", "config/loader.py", "4096", "safe_load"]);
    expect(nextStepEvidence([sys, task], a1)).toEqual([]);
    expect(nextStepEvidence([sys, task, a1, t1], a2)).toEqual(["parseConfig", "yaml_load"]);
    expect(nextStepEvidence([sys, task, a1, t1, a2, t2], a3)).toEqual(["safe_load", "yaml_load", "parseConfig"]);
  });

  it("a term in the trajectory and also in the system prompt or the task is not evidence", () => {
    const echo: M = { role: "tool", tool_call_id: "call_1", content: "tools_v2 is on; see config/loader.py" };
    const next: M = { role: "assistant", content: "Using tools_v2 on config/loader.py." };
    expect(nextStepEvidence([sys, task, a1, echo], next)).toEqual([]);
  });

  it("reads JSON arguments by their string values: an escaped newline never glues two names", () => {
    const args = JSON.stringify({ path: "app/main.py", content: "import os\nfrom helpers import load_data\nload_data()\n" });
    expect(args).toContain("\\nfrom");
    const write: M = { role: "assistant", content: null, tool_calls: [call("call_9", "write_file", args)] };
    expect(termTexts(write)).toEqual(["app/main.py", "import os\nfrom helpers import load_data\nload_data()\n"]);
    expect(namedTerms(write)).toEqual(["app/main.py", "load_data"]);
    // Presence reads them the same way: raw, "\nload_data" has an "n" right before the name.
    const kept: M = { role: "assistant", content: null, tool_calls: [call("call_8", "note", JSON.stringify({ text: "seen:\nload_data" }))] };
    expect(containsTerm((kept.tool_calls![0] as { function: { arguments: string } }).function.arguments, "load_data")).toBe(false);
    expect(messageHasTerm(kept, "load_data")).toBe(true);
    const out: M = { role: "tool", tool_call_id: "call_1", content: "def load_data():\n    pass" };
    expect(nextStepEvidence([sys, task, a1, out], write)).toEqual(["load_data"]);
    expect(evidenceKept(["load_data"], [sys, task, kept])).toBe(1);
    // Arguments that are not JSON are read as they are.
    const raw: M = { role: "assistant", content: null, tool_calls: [call("c", "bash", "cat src/app.py | grep run_main")] };
    expect(namedTerms(raw)).toEqual(["src/app.py", "run_main"]);
  });

  it("has none without a next assistant message", () => {
    expect(nextStepEvidence([sys, task, a1, t1], undefined)).toEqual([]);
    expect(nextStepEvidence([sys, task, a1, t1], { role: "user", content: "parseConfig please" })).toEqual([]);
  });

  it("is kept only by text: a summary naming the terms keeps them, a ref does not", () => {
    const ev = nextStepEvidence([sys, task, a1, t1], a2);
    expect(evidenceKept(ev, [sys, task, a1, t1])).toBe(2);
    expect(evidenceKept(ev, [sys, task])).toBe(0);
    expect(evidenceKept(ev, [sys, task, { role: "user", content: "parseConfig (stored: ref:1)" }])).toBe(1);
    expect(evidenceKept([], [sys])).toBe(0);
  });
});

describe("evidence recall through replayRuns", () => {
  // Points: before a1 (no trajectory: no evidence), before a2 (2 terms), before a3 (3 terms).
  it("is 1 when the output keeps the trajectory, 0 when it keeps only the system prompt and the task", async () => {
    const all = await recallOf([run], identity);
    expect(all.evidence).toEqual({ prompts: 2, terms: 5, kept: 5 });
    expect(all.evidenceRecall).toBe(1);
    const none = await recallOf([run], anchorsOnly);
    expect(none.evidence).toEqual({ prompts: 2, terms: 5, kept: 0 });
    expect(none.evidenceRecall).toBe(0);
  });

  it("pools kept terms over terms: a summary naming parseConfig and yaml_load keeps 4 of 5", async () => {
    const m = await recallOf([run], summary);
    expect(m.evidence).toEqual({ prompts: 2, terms: 5, kept: 4 });
    expect(m.evidenceRecall).toBe(0.8);
    expect((await recallOf([run], refsOnly)).evidenceRecall).toBe(0);
  });

  it("counts only the points above the budget; null when none has evidence", async () => {
    const m = await recallOf([run], identity, 1_000_000);
    expect(m.evidence).toEqual({ prompts: 0, terms: 0, kept: 0 });
    expect(m.evidenceRecall).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// Input that must not break the metrics: each gives a documented value, none throws.

describe("evidence and the other metrics on awkward runs", () => {
  it("a run without tool calls: evidence from earlier assistant and user text", async () => {
    const chat: EvalRun = {
      id: "chat",
      messages: [
        sys,
        task,
        { role: "assistant", content: "I think parseConfig in cfg/x.py is the culprit." },
        { role: "user", content: "Yes, and check MAX_DEPTH too." },
        { role: "assistant", content: "cfg/x.py sets MAX_DEPTH = 512 before parseConfig runs." },
      ],
    };
    expect(nextStepEvidence(chat.messages.slice(0, 4), chat.messages[4])).toEqual(["cfg/x.py", "MAX_DEPTH", "parseConfig"]);
    const m = await recallOf([chat], identity);
    expect(m).toMatchObject({
      prompts: 2,
      evidence: { prompts: 1, terms: 3, kept: 3 },
      evidenceRecall: 1,
      failedResults: 0,
      failedVisible: null,
      violationFree: 1,
    });
    expect(m.costPairs).toBe(1);
  });

  it("a run with no prompt point (no assistant message, or only the task): nothing measured, all null", async () => {
    const m = await recallOf(
      [
        { id: "empty", messages: [sys, task] },
        { id: "none", messages: [] },
      ],
      identity,
    );
    expect(m).toMatchObject({
      prompts: 0,
      evidenceRecall: null,
      costPerCall: null,
      costSavings: null,
      costPairs: 0,
      budgetFill: { p50: null, p95: null },
      withinBudget: null,
    });
  });

  it("a run ending on a tool result (the next step missing): its last prompt is not a point; the rest is measured", async () => {
    const cut: EvalRun = { id: "cut", messages: [sys, task, a1, t1, a2, t2] };
    const m = await recallOf([cut], identity);
    expect(m.prompts).toBe(2);
    expect(m.evidence).toEqual({ prompts: 1, terms: 2, kept: 2 });
  });

  it("binary-looking tool output: read as text, no term made of it, nothing throws", async () => {
    const r = createRng(3);
    let noise = "";
    for (let i = 0; i < 20_000; i++) noise += String.fromCharCode(r.int(256));
    noise += "\ud800\udfff\udc00\u0000\ufffd";
    const bin: EvalRun = {
      id: "bin",
      messages: [
        sys,
        task,
        a1,
        { role: "tool", tool_call_id: "call_1", content: `${noise}\nparseConfig\n${noise}` },
        { role: "assistant", content: "Found parseConfig among the bytes" },
      ],
    };
    const m = await recallOf([bin], identity);
    expect(m.evidence).toEqual({ prompts: 1, terms: 1, kept: 1 });
    expect(m.errors).toBe(0);
  });

  // Its speed is the bench gate's ("evidence 500 KB output" in bench/enormous.ts).
  it("an enormous (5 MB) tool output and an enormous next message: exact counts", async () => {
    let big = "";
    for (let i = 0; big.length < 5_000_000; i++) big += `row_${i} = compute_${i % 997}(x.y${i % 31})\n`;
    // The agent writes back half of it: thousands of distinct names, most of them in the output.
    const write: M = {
      role: "assistant",
      content: null,
      tool_calls: [call("call_2", "write_file", JSON.stringify({ path: "out/rows.py", content: big.slice(0, 2_500_000) + "new_row_x = 1\n" }))],
    };
    const huge: EvalRun = { id: "huge", messages: [sys, task, a1, { role: "tool", tool_call_id: "call_1", content: big }, write] };
    const ev = nextStepEvidence(huge.messages.slice(0, 4), write);
    expect(ev.length).toBeGreaterThan(50_000);
    expect(ev).not.toContain("new_row_x");
    expect(ev).not.toContain("out/rows.py");
    const half = stub("first half", async (messages) => ({
      messages: [...messages.slice(0, 3), { ...messages[3], content: (messages[3].content as string).slice(0, 1_000_000) }] as M[],
    }));
    const m = await recallOf([huge], half);
    // In this text every name is a whole candidate, so what the first megabyte shows is its terms.
    const inFirstMb = new Set(specificTerms(big.slice(0, 1_000_000)));
    const keptInMb = ev.filter((t) => inFirstMb.has(t)).length;
    expect(m.evidence).toEqual({ prompts: 1, terms: ev.length, kept: keptInMb });
    expect(m.evidence.kept).toBeLessThan(ev.length);
  }, 60_000);

  it("non-English text: Cyrillic and CJK names are terms, prose is not", async () => {
    const ru: EvalRun = {
      id: "ru",
      messages: [
        { role: "system", content: "Ты агент." },
        { role: "user", content: "Исправь ошибку." },
        { role: "assistant", content: "Смотрю файл.", tool_calls: [call("c1", "read", '{"path":"модуль/данные.py"}')] },
        { role: "tool", tool_call_id: "c1", content: "def обработатьДанные(): return 数据_表\n" },
        { role: "assistant", content: "Ошибка в обработатьДанные: 数据_表 пуст, правлю модуль/данные.py." },
      ],
    };
    expect(nextStepEvidence(ru.messages.slice(0, 4), ru.messages[4])).toEqual(["обработатьДанные", "数据_表", "модуль/данные.py"]);
    const m = await recallOf([ru], anchorsOnly);
    expect(m.evidence).toEqual({ prompts: 1, terms: 3, kept: 0 });
  });

  it("odd message shapes: null content, image parts, non-string arguments", () => {
    const odd = [
      { role: "assistant", content: null },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "data:x" } },
          { type: "text", text: "see img_001.png" },
        ],
      },
      { role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: { not: "a string" } } }] },
    ] as unknown as M[];
    expect(() => nextStepEvidence([sys, task, ...odd], { role: "assistant", content: "img_001.png again" })).not.toThrow();
    expect(nextStepEvidence([sys, task, ...odd], { role: "assistant", content: "img_001.png again" })).toEqual(["img_001.png"]);
    expect(namedTerms(odd[2])).toEqual([]);
  });
});
