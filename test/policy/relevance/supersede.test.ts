/**
 * Supersession (src/policy/supersede.ts, src/policy/shell-access.ts) and stage 2 letting
 * superseded outputs go: each rule and the cases it must leave alone, on hand-built steps.
 */
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/model/schema.js";
import { classify } from "../../../src/policy/classify.js";
import { createCompactor } from "../../../src/policy/index.js";
import { commandAccess } from "../../../src/policy/relevance/shell-access.js";
import { findSuperseded, type SupersedeOptions } from "../../../src/policy/relevance/supersede.js";
import { StepReducer } from "../../../src/steps/reducer.js";
import { createMemoryStore } from "../../../src/store/index.js";

/** A step: tool, arguments (an object, or a shell command), output. */
type StepSpec = [tool: string, args: Record<string, unknown> | string, output: string];

/** System, task, then one assistant tool call (`c1`, `c2`, …) and its tool result per step. */
function conversation(steps: readonly StepSpec[]): Message[] {
  const msgs: Message[] = [
    { id: "sys", role: "system", parts: [{ type: "text", text: "You fix bugs." }], meta: {} },
    { id: "task", role: "user", parts: [{ type: "text", text: "Fix the failing test." }], meta: {} },
  ];
  steps.forEach(([tool, args, output], k) => {
    const id = `c${k + 1}`;
    const a = typeof args === "string" ? { command: args } : args;
    msgs.push({ id: `a${k + 1}`, role: "assistant", parts: [{ type: "tool-call", id, name: tool, args: JSON.stringify(a) }], meta: {} });
    msgs.push({ id: `t${k + 1}`, role: "tool", parts: [{ type: "tool-result", callId: id, name: tool, content: [{ type: "text", text: output }] }], meta: {} });
  });
  return msgs;
}

/** Which calls are superseded (call id → reason), with no preserved tail unless given. */
function superseded(steps: readonly StepSpec[], options: SupersedeOptions & { tail?: number; pin?: number } = {}): Record<string, string> {
  const msgs = conversation(steps);
  if (options.pin !== undefined) msgs[options.pin] = { ...msgs[options.pin], pinned: true };
  const reduced = new StepReducer({ offload: false }).reduceMessages(msgs);
  const out = findSuperseded(reduced, msgs, classify(msgs), options.tail ?? msgs.length, options);
  return Object.fromEntries(out.map((s) => [s.callId, s.reason]));
}

const bash = (command: string, output = "ok\n"): StepSpec => ["bash", command, output];
const file = (n: number) => Array.from({ length: n }, (_, k) => `line ${k + 1}: value_${k}`).join("\n");

describe("same call again", () => {
  it("a shell command run again supersedes the earlier run, whitespace aside", () => {
    expect(superseded([bash("python  t.py", "FAILED"), bash("python t.py", "passed")])).toEqual({ c1: "same command run again in step_002" });
  });

  it("different commands supersede nothing", () => {
    expect(superseded([bash("python t.py"), bash("python u.py"), bash("pytest -k a"), bash("pytest -k b")])).toEqual({});
  });

  it("a query-like tool asked again is superseded whatever it answered", () => {
    const get = (out: string): StepSpec => ["get_user_details", { user_id: "mia_1" }, out];
    expect(superseded([get('{"name":"Mia"}'), get('{"name":"Mia","reservations":["X1"]}')])).toEqual({ c1: "same call made again in step_002" });
  });

  it("a tool that may change state is superseded only by the same answer again", () => {
    const book = (out: string): StepSpec => ["book_reservation", { user_id: "mia_1", flight: "HAT136" }, out];
    expect(superseded([book('{"reservation_id":"AAA"}'), book('{"reservation_id":"BBB"}')])).toEqual({});
    expect(superseded([book("Error: payment declined"), book("Error: payment declined")])).toEqual({ c1: "same call, same output in step_002" });
  });

  it("argument key order does not make another call", () => {
    const a: StepSpec = ["search_direct_flight", { origin: "JFK", destination: "SEA" }, "[]"];
    const b: StepSpec = ["search_direct_flight", { destination: "SEA", origin: "JFK" }, "[1]"];
    expect(superseded([a, b])).toEqual({ c1: "same call made again in step_002" });
  });
});

describe("file read again", () => {
  it("a full read supersedes earlier reads of the file, partial or whole", () => {
    expect(superseded([bash("sed -n '10,20p' src/a.py", file(11)), bash("grep -n value_3 src/a.py", "4:x"), bash("nl -ba src/a.py", file(40))])).toEqual({
      c1: "src/a.py read again in step_003",
      c2: "src/a.py read again in step_003",
    });
  });

  it("reads of different ranges supersede nothing; a covering range does", () => {
    expect(superseded([bash("sed -n 10,20p src/a.py", file(11)), bash("sed -n 100,120p src/a.py", file(21))])).toEqual({});
    expect(superseded([bash("sed -n 10,20p src/a.py", file(11)), bash("nl -ba src/a.py | sed -n '1,50p'", file(50))])).toEqual({
      c1: "src/a.py read again in step_002",
    });
    expect(superseded([bash("cat src/a.py", file(40)), bash("head -n 5 src/a.py", file(5))])).toEqual({});
  });

  it("another file, or an output that shows more than files, is not superseded", () => {
    expect(superseded([bash("cat src/a.py", file(5)), bash("cat src/b.py", file(5))])).toEqual({});
    expect(superseded([bash("cat src/a.py && python t.py", file(5)), bash("cat src/a.py", file(5))])).toEqual({});
    expect(superseded([bash("cat src/a.py src/b.py", file(9)), bash("cat src/a.py", file(5))])).toEqual({});
  });

  it("a read of several files is superseded once each is read again, by the latest of them", () => {
    expect(superseded([bash("cat src/a.py src/b.py", file(9)), bash("cat src/a.py", file(5)), bash("cat src/b.py", file(4))])).toEqual({
      c1: "src/b.py read again in step_003",
    });
  });

  it("paths are compared after the cd before them", () => {
    expect(superseded([bash("cd src && cat a.py", file(5)), bash("cat ./src/a.py", file(5))])).toEqual({ c1: "src/a.py read again in step_002" });
  });

  it("an editor's view: a range, then the whole file", () => {
    const view = (range?: number[]): StepSpec => ["str_replace_editor", { command: "view", path: "/w/a.c", ...(range ? { view_range: range } : {}) }, file(20)];
    expect(superseded([view([1, 50]), view([10, 20])])).toEqual({});
    expect(superseded([view([1, 50]), view()])).toEqual({ c1: "/w/a.c read again in step_002" });
  });

  it("each superseded output names the earliest later step that superseded it", () => {
    expect(superseded([bash("cat a.py", file(5)), bash("nl a.py", file(5)), bash("cat a.py", file(5))])).toEqual({
      c1: "a.py read again in step_002",
      c2: "a.py read again in step_003",
    });
  });
});

describe("file edited", () => {
  it("an edit supersedes earlier reads of the file (sed -i, a heredoc, a Python write, an editor)", () => {
    const read = bash("cat a.py", file(5));
    expect(superseded([read, bash("sed -i 's/x/y/' a.py", "")])).toEqual({ c1: "a.py edited in step_002" });
    expect(superseded([read, bash("cat <<'EOF' > a.py\nprint(1)\nEOF", "")])).toEqual({ c1: "a.py edited in step_002" });
    expect(superseded([read, bash("python3 - <<'EOF'\nwith open('a.py', 'w') as f:\n    f.write('x')\nEOF", "")])).toEqual({ c1: "a.py edited in step_002" });
    expect(superseded([read, ["str_replace_editor", { command: "str_replace", path: "a.py", old_str: "x", new_str: "y" }, "edited"]])).toEqual({
      c1: "a.py edited in step_002",
    });
  });

  it("not with edits off, nor for another file, nor by a failed edit", () => {
    const read = bash("cat a.py", file(5));
    expect(superseded([read, bash("sed -i 's/x/y/' a.py", "")], { edits: false })).toEqual({});
    expect(superseded([read, bash("sed -i 's/x/y/' b.py", "")])).toEqual({});
    expect(superseded([read, bash("sed -i 's/x/y/' a.py", "sed: can't read a.py: No such file or directory\n<returncode>2</returncode>")])).toEqual({});
  });

  it("an edit's own output is not superseded by a later read", () => {
    const edit: StepSpec = [
      "str_replace_editor",
      { command: "str_replace", path: "a.py", old_str: "x", new_str: "y" },
      "The file a.py has been edited. Here's a snippet: ...",
    ];
    expect(superseded([edit, ["str_replace_editor", { command: "view", path: "a.py" }, file(30)]])).toEqual({});
  });
});

describe("directory listed again", () => {
  it("a later listing of the same directory supersedes the earlier; a recursive one covers a plain one", () => {
    expect(superseded([bash("ls src", "a.py\nb.py"), bash("ls -la src/", "a.py\nb.py\nc.py")])).toEqual({ c1: "src listed again in step_002" });
    expect(superseded([bash("ls src", "a.py"), bash("ls -R src", "src:\na.py")])).toEqual({ c1: "src listed again in step_002" });
  });

  it("another directory, or a plain listing after a recursive one, supersedes nothing", () => {
    expect(superseded([bash("ls src", "a.py"), bash("ls tests", "t.py")])).toEqual({});
    expect(superseded([bash("ls -R src", "src:\na.py"), bash("ls src", "a.py")])).toEqual({});
  });
});

describe("what is never marked", () => {
  const steps = [bash("cat a.py", file(5)), bash("cat a.py", file(5)), bash("cat a.py", file(5))];

  it("results in the preserved tail stay, though a later step supersedes them", () => {
    // The tail starts at the second step's call (message 4): only the first result is before it.
    expect(superseded(steps, { tail: 4 })).toEqual({ c1: "a.py read again in step_002" });
  });

  it("a critical message's results stay", () => {
    expect(superseded(steps, { pin: 3 })).toEqual({ c2: "a.py read again in step_003" });
  });

  it("a failed output is superseded only by the same call again", () => {
    const failed = bash("sed -n 1,5p a.py", "sed: can't read a.py: No such file or directory\n<returncode>2</returncode>");
    expect(superseded([failed, bash("cat a.py", file(5))])).toEqual({});
    expect(superseded([failed, failed])).toEqual({ c1: "same command run again in step_002" });
  });

  it("the same steps give the same answer", () => {
    const many = [...steps, bash("python t.py"), bash("ls"), bash("python t.py"), bash("sed -i s/a/b/ a.py", ""), bash("ls")];
    expect(superseded(many)).toEqual(superseded(many));
    expect(Object.keys(superseded(many)).sort()).toEqual(["c1", "c2", "c3", "c4", "c5"]);
  });
});

describe("commandAccess", () => {
  it("reads, ranges, listings and edits of shell commands", () => {
    expect(commandAccess("nl -ba src/x.py | sed -n '3,9p'")).toEqual({
      accesses: [{ kind: "read", path: "src/x.py", range: { from: 3, to: 9 } }],
      opaque: false,
    });
    expect(commandAccess("head -n 30 x.py 2>&1")).toEqual({ accesses: [{ kind: "read", path: "x.py", range: { from: 1, to: 30 } }], opaque: false });
    expect(commandAccess("sed -n '30,$p' x.py").accesses).toEqual([{ kind: "read", path: "x.py", range: { from: 30, to: Infinity } }]);
    expect(commandAccess("ls -la /repo/src/")).toEqual({ accesses: [{ kind: "list", dir: "/repo/src", recursive: false }], opaque: false });
    expect(commandAccess("echo hi > notes.txt && rm old.py")).toEqual({
      accesses: [
        { kind: "edit", path: "notes.txt" },
        { kind: "edit", path: "old.py" },
      ],
      opaque: false,
    });
  });

  it("a program, a recursive search or a transforming sed is opaque", () => {
    expect(commandAccess("python t.py").opaque).toBe(true);
    expect(commandAccess("grep -rn foo src").opaque).toBe(true);
    expect(commandAccess("sed 's/a/b/' x.py").opaque).toBe(true);
    expect(commandAccess("perl -ne 'print if /x/' x.py").opaque).toBe(true);
    expect(commandAccess("perl -pi -e 's/a/b/' x.py")).toEqual({ accesses: [{ kind: "edit", path: "x.py" }], opaque: false });
    expect(commandAccess("cat x.py > /dev/null").opaque).toBe(false);
  });

  it("a heredoc's body is not read as commands", () => {
    expect(commandAccess("cat <<'EOF' > t.py\nimport os; cat = 1\nls = 2\nEOF\npython t.py")).toEqual({
      accesses: [{ kind: "edit", path: "t.py" }],
      opaque: true,
    });
  });
});

describe("stage 2 with supersede", () => {
  /** Outputs of about 600 tokens, distinct per seed. */
  const big = (seed: string) => Array.from({ length: 120 }, (_, k) => `${seed}_${k} = compute(${k * 7})`).join("\n");
  const failure = `Traceback (most recent call last):\n  File "t.py", line 3\nZeroDivisionError: division by zero\n${big("trace")}\n<returncode>1</returncode>`;
  const steps: StepSpec[] = [
    bash("python build.py", big("build")),
    bash("python t.py", failure),
    bash("python t.py", big("pass")),
    bash("ls", "a.py"),
    bash("git status", "clean"),
  ];

  /** Compacted at a budget where replacing one output reaches the target. */
  async function compactOnce(supersede: boolean) {
    const msgs = conversation(steps);
    const config = { store: createMemoryStore(), targetRatio: 0.8, supersede };
    const total = (await createCompactor(config).compactCanonical(msgs, { budget: 1_000_000 })).tokensBefore;
    const r = await createCompactor(config).compactCanonical(msgs, { budget: Math.floor((total - 300) / 0.8) });
    const texts = r.canonical.map((m) =>
      m.parts.map((p) => (p.type === "tool-result" ? p.content.map((c) => (c.type === "text" ? c.text : "")).join("") : "")).join(""),
    );
    return { r, texts, store: config.store };
  }

  it("lets every superseded output go, whatever its age, keeps its failure visible, and current outputs go oldest first", async () => {
    const { r, texts, store } = await compactOnce(true);
    expect(r.stages.find((s) => s.stage === 2)?.compacted).toBe(2);
    // The oldest output, current, went as its observation to reach the target; the newer current output stays.
    expect(texts[3]).toMatch(/^\[ctxfold\] python build\.py/);
    expect(texts[7]).toBe(big("pass"));
    const line = /^\[ctxfold\] superseded: same command run again in step_003 \(failed: .*ZeroDivisionError.*; call c2\)\n\[full output: (.+)\]$/s.exec(
      texts[5],
    );
    expect(line).not.toBeNull();
    expect(r.refs).toContain(line![1]);
    expect(store.getText(line![1])).toBe(failure);
  });

  it("compares the calls as the agent wrote them, though stage 1 shortened their arguments", async () => {
    const read = bash("cat src/a.py  # the module as it is before the fix, the whole of it, to compare", big("a"));
    const msgs = conversation([
      read,
      bash("python build.py", big("build")),
      bash("nl -ba src/a.py", big("a")),
      bash("ls", "a.py"),
      bash("git status", "clean"),
    ]);
    const config = { store: createMemoryStore(), targetRatio: 0.8, argTokens: 20 };
    const total = (await createCompactor(config).compactCanonical(msgs, { budget: 1_000_000 })).tokensBefore;
    const r = await createCompactor(config).compactCanonical(msgs, { budget: Math.floor((total - 300) / 0.8) });
    const call = r.canonical[2].parts[0];
    expect(call.type === "tool-call" && call.args).toContain("_ctxfold");
    const result = r.canonical[3].parts[0];
    expect(result.type === "tool-result" && result.content[0]).toMatchObject({
      text: expect.stringMatching(/^\[ctxfold\] superseded: src\/a\.py read again in step_003\n/),
    });
  });

  it("same input, same output", async () => {
    const [a, b] = [await compactOnce(true), await compactOnce(true)];
    expect(JSON.stringify(a.r.canonical)).toBe(JSON.stringify(b.r.canonical));
  });

  it("off, the oldest output goes first as before", async () => {
    const { r, texts } = await compactOnce(false);
    expect(r.stages.find((s) => s.stage === 2)?.compacted).toBe(1);
    expect(texts[3]).toMatch(/^\[ctxfold\] python build\.py/);
    expect(texts[5]).toBe(failure);
    expect(texts[7]).toBe(big("pass"));
  });
});
