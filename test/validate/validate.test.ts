import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kFormats, type Format } from "../../src/adapters/common.js";
import { anthropicAdapter, openaiResponsesAdapter } from "../../src/adapters/index.js";
import type { Message, Part, ReasoningPart, TextPart, ToolCallPart } from "../../src/model/schema.js";
import { kIssueCodes, kRules, newViolations, severityOf, validate, type Issue, type IssueCode, type ValidateOptions } from "../../src/validate/index.js";
import { turnInProgressOpener } from "../../src/validate/rules.js";

// ---------------------------------------------------------------------------------------------
// Canonical message builders.

const text = (t: string): TextPart => ({ type: "text", text: t });
const call = (id: string, name = "read_file"): ToolCallPart => ({ type: "tool-call", id, name, args: "{}" });
const think = (signature = "sig"): ReasoningPart => ({ type: "reasoning", text: "let me see", signature });

const msg = (id: string, role: Message["role"], parts: Part[]): Message => ({ id, role, parts, meta: {} });
const sys = (id: string, t = "Be brief."): Message => msg(id, "system", [text(t)]);
const user = (id: string, t = "Fix the bug."): Message => msg(id, "user", [text(t)]);
const asst = (id: string, ...parts: Part[]): Message => msg(id, "assistant", parts);
/** A tool message answering `callIds`, one result part each. */
const tool = (id: string, ...callIds: string[]): Message =>
  msg(
    id,
    "tool",
    callIds.map((callId) => ({ type: "tool-result", callId, content: [text(`output of ${callId}`)] })),
  );

/** Canonical messages of a Responses input / an Anthropic message list (server-side context parts come from the wire). */
const responses = (items: unknown[]) => openaiResponsesAdapter.parse(items);
const claude = (messages: unknown[]) => anthropicAdapter.parse(messages);
const rsItem = (id: string) => ({ type: "reasoning", id, summary: [], encrypted_content: "gAAAAB-enc" });
const fcItem = (n: number) => ({ type: "function_call", id: `fc_${n}`, call_id: `call_${n}`, name: "read_file", arguments: "{}" });
const fcOut = (n: number) => ({ type: "function_call_output", call_id: `call_${n}`, output: "ok" });
const signedBlock = { type: "compaction", content: "Summary so far.", signature: "EuYBCkQY" };
const thresholdBlock = { type: "compaction", content: "Summary so far.", encrypted_content: "opaque" };
const thinkingBlock = { type: "thinking", thinking: "Next, read the file.", signature: "sig" };
const toolUse = (n: number) => ({ type: "tool_use", id: `toolu_${n}`, name: "read_file", input: {} });
const toolResult = (n: number) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${n}`, content: "ok" }] });

const codes = (issues: readonly Issue[]) => issues.map((i) => i.code);
const only = (messages: Message[], format: Format, code: IssueCode) => validate(messages, format).issues.filter((i) => i.code === code);
const pick = (i: Issue) => ({ code: i.code, severity: i.severity, path: i.path, index: i.index, key: i.key });

// ---------------------------------------------------------------------------------------------

describe("kRules", () => {
  it("has exactly one rule per issue code, each applying to known formats with a description", () => {
    expect(kRules.map((r) => r.code).sort()).toEqual([...kIssueCodes].sort());
    for (const r of kRules) {
      expect(r.formats.length).toBeGreaterThan(0);
      for (const f of r.formats) expect(kFormats).toContain(f);
      for (const f of Object.keys(r.overrides ?? {})) expect(r.formats).toContain(f);
      expect(r.description.length).toBeGreaterThan(40);
    }
  });

  it("gives per-format severities through overrides", () => {
    const rule = kRules.find((r) => r.code === "SYSTEM_NOT_FIRST")!;
    expect(severityOf(rule, "anthropic")).toBe("error");
    expect(severityOf(rule, "ai-sdk")).toBe("warning");
  });
});

describe("validate: one test per issue code", () => {
  it("accepts a well-formed tool-use conversation on every format", () => {
    const run = [sys("s"), user("u1"), asst("a1", text("Reading."), call("c1"), call("c2")), tool("t1", "c1"), tool("t2", "c2"), asst("a2", text("Done."))];
    for (const f of kFormats) expect(validate(run, f)).toEqual({ ok: true, issues: [] });
  });

  it("TOOL_RESULT_ORPHAN: a result for a call its assistant message does not have", () => {
    const r = validate([user("u1"), asst("a1", call("c1")), tool("t1", "c1", "cX")], "openai-chat");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "TOOL_RESULT_ORPHAN", severity: "error", path: "messages[2].parts[1]", index: 2, key: "cX" }]);
    expect(r.issues[0].message).toContain('"cX"');
    expect(r.issues[0].message).toContain('"a1"');
  });

  it("TOOL_RESULT_ORPHAN: a result with no assistant message before it, or after a user message (non-Anthropic)", () => {
    expect(only([tool("t0", "c0"), user("u1")], "openai-chat", "TOOL_RESULT_ORPHAN").map(pick)).toEqual([
      { code: "TOOL_RESULT_ORPHAN", severity: "error", path: "messages[0].parts[0]", index: 0, key: "c0" },
    ]);
    const r = validate([user("u1"), asst("a1", call("c1")), user("u2"), tool("t1", "c1")], "openai-responses");
    expect(codes(r.issues)).toEqual(["TOOL_CALL_UNANSWERED", "TOOL_RESULT_ORPHAN"]);
    expect(r.issues.map((i) => i.path)).toEqual(["messages[1].parts[0]", "messages[3].parts[0]"]);
  });

  it("TOOL_CALL_UNANSWERED: a call with no result before the next non-tool message", () => {
    const r = validate([user("u1"), asst("a1", call("c1"), call("c2")), tool("t1", "c1"), user("u2")], "openai-chat");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "TOOL_CALL_UNANSWERED", severity: "error", path: "messages[1].parts[1]", index: 1, key: "c2" }]);
  });

  it("TOOL_CALL_UNANSWERED, not pending, when a partial answer follows the last assistant message", () => {
    const r = validate([user("u1"), asst("a1", call("c1"), call("c2")), tool("t1", "c1")], "anthropic");
    expect(r.issues.map(pick)).toEqual([{ code: "TOOL_CALL_UNANSWERED", severity: "error", path: "messages[1].parts[1]", index: 1, key: "c2" }]);
  });

  it("TOOL_CALL_PENDING: a call in the very last message is a warning", () => {
    const r = validate([user("u1"), asst("a1", text("Let me look."), call("c1"))], "openai-chat");
    expect(r.ok).toBe(true);
    expect(r.issues.map(pick)).toEqual([{ code: "TOOL_CALL_PENDING", severity: "warning", path: "messages[1].parts[1]", index: 1, key: "c1" }]);
  });

  it("TOOL_RESULT_DUPLICATE: a second result for one call in its window", () => {
    const r = validate([user("u1"), asst("a1", call("c1")), tool("t1", "c1"), tool("t2", "c1")], "ai-sdk");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "TOOL_RESULT_DUPLICATE", severity: "error", path: "messages[3].parts[0]", index: 3, key: "c1" }]);
  });

  it("DUPLICATE_CALL_ID: a call id used twice in the conversation", () => {
    const r = validate([user("u1"), asst("a1", call("c1")), tool("t1", "c1"), asst("a2", call("c1")), tool("t2", "c1")], "langchain");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "DUPLICATE_CALL_ID", severity: "error", path: "messages[3].parts[0]", index: 3, key: "c1" }]);
  });

  it("DUPLICATE_MESSAGE_ID: an error for OpenAI Responses, a warning elsewhere", () => {
    const run = [user("u1"), asst("a1", text("Hi.")), user("u1", "again")];
    const responses = validate(run, "openai-responses");
    expect(responses.ok).toBe(false);
    expect(responses.issues.map(pick)).toEqual([{ code: "DUPLICATE_MESSAGE_ID", severity: "error", path: "messages[2]", index: 2, key: "u1" }]);
    const chat = validate(run, "openai-chat");
    expect(chat.ok).toBe(true);
    expect(chat.issues.map(pick)).toEqual([{ code: "DUPLICATE_MESSAGE_ID", severity: "warning", path: "messages[2]", index: 2, key: "u1" }]);
  });

  it("TOOL_RESULT_NOT_FIRST (anthropic): user text between the assistant message and its results", () => {
    const r = validate([user("u1"), asst("a1", call("c1")), user("u2", "also check tests"), tool("t1", "c1")], "anthropic");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "TOOL_RESULT_NOT_FIRST", severity: "error", path: "messages[3].parts[0]", index: 3, key: "c1" }]);
  });

  it("tool results then user text is one valid Anthropic user turn", () => {
    const run = [user("u1"), asst("a1", call("c1")), tool("t1", "c1"), user("u2", "<reminder>"), asst("a2", text("Done."))];
    expect(validate(run, "anthropic")).toEqual({ ok: true, issues: [] });
  });

  it("FIRST_NOT_USER: an error for Anthropic, a warning for AI SDK and LangChain, nothing for OpenAI", () => {
    const run = [sys("s"), asst("a1", text("Hello, how can I help?")), user("u1")];
    expect(only(run, "anthropic", "FIRST_NOT_USER").map(pick)).toEqual([
      { code: "FIRST_NOT_USER", severity: "error", path: "messages[1]", index: 1, key: "a1" },
    ]);
    expect(validate(run, "anthropic").ok).toBe(false);
    expect(only(run, "ai-sdk", "FIRST_NOT_USER").map((i) => i.severity)).toEqual(["warning"]);
    expect(only(run, "langchain", "FIRST_NOT_USER").map((i) => i.severity)).toEqual(["warning"]);
    expect(validate(run, "openai-chat").issues).toEqual([]);
    expect(validate(run, "openai-responses").issues).toEqual([]);
  });

  it("SYSTEM_NOT_FIRST: an error for Anthropic, a warning for LangChain, nothing for OpenAI Chat", () => {
    const run = [sys("s1"), user("u1"), asst("a1", text("Ok.")), sys("s2", "Now be verbose."), user("u2")];
    const r = validate(run, "anthropic");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "SYSTEM_NOT_FIRST", severity: "error", path: "messages[3]", index: 3, key: "s2" }]);
    expect(validate(run, "langchain").issues.map(pick)).toEqual([{ code: "SYSTEM_NOT_FIRST", severity: "warning", path: "messages[3]", index: 3, key: "s2" }]);
    expect(validate(run, "openai-chat").issues).toEqual([]);
  });

  it("ROLE_ALTERNATION (anthropic): consecutive user or assistant messages are a warning", () => {
    const r = validate([user("u1"), sys("s"), user("u2"), asst("a1", text("One.")), asst("a2", text("Two."))], "anthropic");
    expect(r.issues.filter((i) => i.code === "ROLE_ALTERNATION").map(pick)).toEqual([
      { code: "ROLE_ALTERNATION", severity: "warning", path: "messages[2]", index: 2, key: "u2" },
      { code: "ROLE_ALTERNATION", severity: "warning", path: "messages[4]", index: 4, key: "a2" },
    ]);
    expect(only([user("u1"), user("u2")], "anthropic", "ROLE_ALTERNATION")[0].message).toContain("merges");
    // Tool results followed by user text render as one user message: not flagged.
    expect(only([user("u1"), asst("a1", call("c1")), tool("t1", "c1"), tool("t2"), user("u2")], "anthropic", "ROLE_ALTERNATION")).toEqual([]);
    expect(only([user("u1"), user("u2")], "openai-chat", "ROLE_ALTERNATION")).toEqual([]);
  });

  it("THINKING_DROPPED (anthropic): the open tool-use turn lost its leading thinking", () => {
    const run = [user("u1"), asst("a1", think(), text("Hi.")), user("u2"), asst("a2", text("Reading."), call("c1")), tool("t1", "c1")];
    const r = validate(run, "anthropic");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "THINKING_DROPPED", severity: "error", path: "messages[3].parts[0]", index: 3, key: "a2" }]);
  });

  it("THINKING_DROPPED: only the first assistant message of the final turn must start with thinking", () => {
    const loop = (first: Message) => [
      user("u1"),
      asst("a0", text("Earlier answer, its thinking dropped.")),
      user("u2"),
      first,
      tool("t1", "c1"),
      user("u3", "<system-reminder>"),
      asst("a2", call("c2")),
      tool("t2", "c2"),
    ];
    expect(validate(loop(asst("a1", think(), call("c1"))), "anthropic")).toEqual({ ok: true, issues: [] });
    expect(validate(loop(asst("a1", { type: "reasoning", redacted: "ENCRYPTED" }, call("c1"))), "anthropic").ok).toBe(true);
    expect(only(loop(asst("a1", call("c1"), think())), "anthropic", "THINKING_DROPPED").map((i) => i.key)).toEqual(["a1"]);
    // The turn is closed by a real user message: the thinking may go.
    expect(validate([...loop(asst("a1", call("c1"))), asst("a3", text("Fixed.")), user("u4")], "anthropic").ok).toBe(true);
    // A finished turn (ends on a plain answer) is not a loop in progress.
    expect(validate([...loop(asst("a1", call("c1"))), asst("a3", think(), text("Fixed."))], "anthropic").ok).toBe(true);
  });

  it("THINKING_DROPPED: with no reasoning left, the caller's thinking option decides", () => {
    const run = [user("u1"), asst("a1", call("c1")), tool("t1", "c1")];
    expect(validate(run, "anthropic").ok).toBe(true);
    expect(validate(run, "anthropic", { thinking: true }).issues.map(pick)).toEqual([
      { code: "THINKING_DROPPED", severity: "error", path: "messages[1].parts[0]", index: 1, key: "a1" },
    ]);
  });

  it("REASONING_SIGNATURE_MISSING (anthropic): reasoning without a signature and not redacted", () => {
    const run = [user("u1"), asst("a1", { type: "reasoning", text: "from another provider" }, text("Hi.")), user("u2")];
    const r = validate(run, "anthropic");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([{ code: "REASONING_SIGNATURE_MISSING", severity: "error", path: "messages[1].parts[0]", index: 1, key: "a1" }]);
    expect(validate(run, "openai-responses").issues).toEqual([]);
  });

  it("EMPTY_MESSAGE: an error for Anthropic (except a final assistant message), a warning elsewhere", () => {
    const run = [user("u1"), msg("e1", "user", []), asst("a1", text("Hi."))];
    expect(only(run, "anthropic", "EMPTY_MESSAGE").map(pick)).toEqual([{ code: "EMPTY_MESSAGE", severity: "error", path: "messages[1]", index: 1, key: "e1" }]);
    expect(validate(run, "anthropic").ok).toBe(false);
    const chat = validate(run, "openai-chat");
    expect(chat.ok).toBe(true);
    expect(chat.issues.map(pick)).toEqual([{ code: "EMPTY_MESSAGE", severity: "warning", path: "messages[1]", index: 1, key: "e1" }]);
    expect(validate([user("u1"), msg("a1", "assistant", [])], "anthropic")).toEqual({ ok: true, issues: [] });
  });

  it("EMPTY_TEXT (anthropic): an empty or whitespace-only text part", () => {
    const run = [user("u1"), asst("a1", text("ok"), text(" \n")), user("u2", "")];
    const r = validate(run, "anthropic");
    expect(r.ok).toBe(false);
    expect(r.issues.map(pick)).toEqual([
      { code: "EMPTY_TEXT", severity: "error", path: "messages[1].parts[1]", index: 1, key: "a1" },
      { code: "EMPTY_TEXT", severity: "error", path: "messages[2].parts[0]", index: 2, key: "u2" },
    ]);
    expect(validate(run, "openai-chat").issues).toEqual([]);
    // Empty tool output is fine.
    const empty = msg("t1", "tool", [{ type: "tool-result", callId: "c1", content: [text("")] }]);
    expect(validate([user("u1"), asst("a1", call("c1")), empty, asst("a2", text("Nothing there."))], "anthropic").ok).toBe(true);
  });

  it("COMPACTION_MISPLACED (anthropic): a signed compaction block not first, or a second one", () => {
    // Continued after on-demand compaction: the block first, as its own assistant message or the first block of the first message.
    expect(
      validate(
        claude([
          { role: "assistant", content: [signedBlock] },
          { role: "user", content: "Go on." },
        ]),
        "anthropic",
      ),
    ).toEqual({ ok: true, issues: [] });
    expect(validate(claude([{ role: "user", content: [signedBlock, { type: "text", text: "Go on." }] }]), "anthropic")).toEqual({ ok: true, issues: [] });
    const behind = claude([
      { role: "user", content: "Hi." },
      { role: "assistant", content: [signedBlock] },
      { role: "user", content: "Go on." },
    ]);
    expect(validate(behind, "anthropic").issues.map(pick)).toEqual([
      { code: "COMPACTION_MISPLACED", severity: "error", path: "messages[1].content[0]", index: 1, key: "m1" },
    ]);
    expect(only(behind, "anthropic", "COMPACTION_MISPLACED")[0].message).toContain("not the first block of the first message");
    const twice = claude([
      { role: "assistant", content: [signedBlock] },
      { role: "assistant", content: [signedBlock] },
      { role: "user", content: "Go on." },
    ]);
    expect(only(twice, "anthropic", "COMPACTION_MISPLACED").map((i) => [i.path, i.message])).toEqual([
      ["messages[1].content[0]", expect.stringContaining("a second signed compaction block")],
    ]);
    // Threshold compaction's block follows what it summarises: anywhere is fine.
    expect(
      validate(
        claude([
          { role: "user", content: "Hi." },
          { role: "assistant", content: [thresholdBlock, { type: "text", text: "Ok." }] },
          { role: "user", content: "Go on." },
        ]),
        "anthropic",
      ).ok,
    ).toBe(true);
  });

  it("COMPACTION_TRIGGER_NOT_LAST (openai-responses): a compaction_trigger item before other items", () => {
    const ask = { role: "user", content: "Go on." };
    expect(validate(responses([ask, { type: "compaction_trigger" }]), "openai-responses")).toEqual({ ok: true, issues: [] });
    const r = validate(responses([{ type: "compaction_trigger" }, ask]), "openai-responses");
    expect(r.issues.map(pick)).toEqual([{ code: "COMPACTION_TRIGGER_NOT_LAST", severity: "error", path: "messages[0]", index: 0, key: "m0" }]);
    expect(r.issues[0].message).toContain("not the last input item");
  });

  it("REASONING_WITHOUT_FOLLOWER (openai-responses): a reasoning item with nothing after it in its turn", () => {
    const ask = { role: "user", content: "Read it." };
    expect(validate(responses([ask, rsItem("rs_1"), fcItem(1), fcOut(1)]), "openai-responses")).toEqual({ ok: true, issues: [] });
    const r = validate(responses([ask, rsItem("rs_1"), ask]), "openai-responses");
    // Keyed by the item's id, which compaction does not shift (message ids follow wire indices).
    expect(r.issues.map(pick)).toEqual([{ code: "REASONING_WITHOUT_FOLLOWER", severity: "error", path: "messages[1]", index: 1, key: "rs_1" }]);
    expect(r.issues[0].message).toContain('"rs_1"');
    expect(only(responses([ask, { type: "reasoning", summary: [] }, ask]), "openai-responses", "REASONING_WITHOUT_FOLLOWER").map((i) => i.key)).toEqual(["m1"]);
    // Canonical reasoning of another format is not rendered as an item, so it is not checked.
    expect(validate([user("u1"), asst("a1", think())], "openai-responses").issues).toEqual([]);
  });

  it("compaction blocks are read through: a conversation may start with one, and the thinking of the turn may follow one", () => {
    const onDemand = claude([{ role: "assistant", content: [signedBlock] }, { role: "assistant", content: [thinkingBlock, toolUse(1)] }, toolResult(1)]);
    expect(validate(onDemand, "anthropic")).toEqual({ ok: true, issues: [] });
    const threshold = claude([
      { role: "user", content: "Fix it." },
      { role: "assistant", content: [thresholdBlock, thinkingBlock, toolUse(1)] },
      toolResult(1),
    ]);
    expect(validate(threshold, "anthropic")).toEqual({ ok: true, issues: [] });
    // The turn's thinking is still required after the block.
    const dropped = claude([{ role: "user", content: "Fix it." }, { role: "assistant", content: [thresholdBlock, toolUse(1)] }, toolResult(1)]);
    expect(validate(dropped, "anthropic", { thinking: true }).issues.map(pick)).toEqual([
      { code: "THINKING_DROPPED", severity: "error", path: "messages[1].content[0]", index: 1, key: "m1" },
    ]);
  });

  it("the turn in progress opens at its first assistant message past compaction blocks alone, unless compaction is told to open it", () => {
    const onDemand = claude([
      { role: "user", content: "Fix it." },
      { role: "assistant", content: [signedBlock] },
      { role: "assistant", content: [thinkingBlock, toolUse(1)] },
      toolResult(1),
    ]);
    expect(turnInProgressOpener(onDemand)).toBe(2);
    // Block compaction's in-memory strategy keeps the unit of the first assistant message, whatever it holds.
    expect(turnInProgressOpener(onDemand, { compactionOpens: true })).toBe(1);
    // A finished turn opens nothing, either way.
    const done = claude([
      { role: "user", content: "Fix it." },
      { role: "assistant", content: [signedBlock] },
      { role: "assistant", content: "Fixed." },
    ]);
    expect([turnInProgressOpener(done), turnInProgressOpener(done, { compactionOpens: true })]).toEqual([-1, -1]);
  });

  it("every issue code is produced by some test input above", () => {
    // Guards against a code no rule can emit: one small transcript per code.
    const seen = new Set<IssueCode>();
    const inputs: [Message[], Format, ValidateOptions?][] = [
      [[user("u"), asst("a", call("c")), tool("t", "c", "x")], "openai-chat"],
      [[user("u"), asst("a", call("c")), user("v")], "openai-chat"],
      [[user("u"), asst("a", call("c"))], "openai-chat"],
      [[user("u"), asst("a", call("c")), tool("t", "c", "c")], "openai-chat"],
      [[user("u"), asst("a", call("c"), call("c")), tool("t", "c")], "openai-chat"],
      [[user("u"), user("u")], "anthropic"],
      [[user("u"), asst("a", call("c")), user("v"), tool("t", "c")], "anthropic"],
      [[asst("a", text("x")), user("u", "")], "anthropic"],
      [[user("u"), sys("s"), msg("e", "user", [])], "anthropic"],
      [[user("u"), asst("a", { type: "reasoning", text: "t" }, call("c")), tool("t", "c")], "anthropic"],
      [
        claude([
          { role: "user", content: "u" },
          { role: "assistant", content: [signedBlock] },
        ]),
        "anthropic",
      ],
      [responses([{ type: "compaction_trigger" }, { role: "user", content: "u" }, rsItem("rs_1")]), "openai-responses"],
    ];
    for (const [m, f, o] of inputs) for (const i of validate(m, f, o).issues) seen.add(i.code);
    expect([...seen].sort()).toEqual([...kIssueCodes].sort());
  });
});

describe("newViolations", () => {
  // Starts with an assistant message (FIRST_NOT_USER on Anthropic), ends on a partly answered
  // call (TOOL_CALL_UNANSWERED c4) and a pending one (TOOL_CALL_PENDING c5).
  const run = [
    asst("a0", text("Resuming."), call("c0")),
    tool("t1", "c0"),
    asst("a2", call("c1"), call("c2")),
    tool("t3", "c1"),
    tool("t4", "c2"),
    asst("a5", call("c3"), call("c4")),
    tool("t6", "c3"),
    asst("a7", call("c5")),
  ];

  it("the starting transcript has its own issues", () => {
    expect(codes(validate(run, "anthropic").issues)).toEqual(["FIRST_NOT_USER", "TOOL_CALL_UNANSWERED", "TOOL_CALL_PENDING"]);
  });

  it("dropping a tool result in the middle reports only the newly unanswered call", () => {
    const before = validate(run, "anthropic");
    const after = validate(
      run.filter((m) => m.id !== "t3"),
      "anthropic",
    );
    expect(newViolations(before, after).map(pick)).toEqual([
      { code: "TOOL_CALL_UNANSWERED", severity: "error", path: "messages[2].parts[0]", index: 2, key: "c1" },
    ]);
  });

  it("dropping an assistant message in the middle reports only the newly orphaned results", () => {
    const before = validate(run, "openai-chat");
    const after = validate(
      run.filter((m) => m.id !== "a2"),
      "openai-chat",
    );
    expect(newViolations(before, after).map(pick)).toEqual([
      { code: "TOOL_RESULT_ORPHAN", severity: "error", path: "messages[2].parts[0]", index: 2, key: "c1" },
      { code: "TOOL_RESULT_ORPHAN", severity: "error", path: "messages[3].parts[0]", index: 3, key: "c2" },
    ]);
  });

  it("matches by code and key, never by index: shifted pre-existing issues are not new", () => {
    const before = validate(run, "anthropic");
    const after = validate([user("u0"), ...run], "anthropic");
    expect(after.issues.find((i) => i.code === "TOOL_CALL_PENDING")!.index).toBe(8);
    expect(newViolations(before, after)).toEqual([]);
  });

  it("counts repeats: a second orphan with the same key is new", () => {
    const before = validate([user("u"), asst("a", call("c")), tool("t", "c", "x")], "openai-chat");
    const after = validate([user("u"), asst("a", call("c")), tool("t", "c", "x", "x")], "openai-chat");
    expect(newViolations(before, after).map((i) => i.path)).toEqual(["messages[2].parts[2]"]);
  });
});

// ---------------------------------------------------------------------------------------------
// Property test over arbitrary canonical messages.

const idArb = fc.constantFrom("c1", "c2", "c3", "", "__proto__");
const textArb = fc.oneof(fc.constantFrom("", " ", "hi"), fc.string({ maxLength: 8 }));
const partArb: fc.Arbitrary<Part> = fc.oneof(
  textArb.map((t) => text(t)),
  idArb.map((id) => call(id)),
  fc
    .record({ callId: idArb, isError: fc.option(fc.boolean(), { nil: undefined }) })
    .map(({ callId, isError }) => ({ type: "tool-result" as const, callId, content: [text("r")], isError })),
  fc
    .record({
      text: fc.option(textArb, { nil: undefined }),
      redacted: fc.option(fc.constantFrom("", "enc"), { nil: undefined }),
      signature: fc.option(fc.constantFrom("", "sig"), { nil: undefined }),
    })
    .map((r) => ({ type: "reasoning" as const, ...r })),
  fc.constant<Part>({ type: "media", mediaType: "image/png", data: "AAAA" }),
  fc.constant<Part>({ type: "opaque", value: { x: 1 } }),
);
const messageArb: fc.Arbitrary<Message> = fc.record({
  id: fc.constantFrom("m0", "m1", "m2", "m3", "toString"),
  role: fc.constantFrom("system", "user", "assistant", "tool"),
  parts: fc.array(partArb, { maxLength: 4 }),
  meta: fc.constant({}),
});
const conversationArb = fc.array(messageArb, { maxLength: 14 });

describe("validate properties", () => {
  it("never throws, keeps ok/severity/path consistent, and newViolations(x, x) is empty", () => {
    fc.assert(
      fc.property(conversationArb, fc.constantFrom(...kFormats), fc.option(fc.boolean(), { nil: undefined }), (messages, format, thinking) => {
        const r = validate(messages, format, { thinking });
        expect(r.ok).toBe(!r.issues.some((i) => i.severity === "error"));
        for (const i of r.issues) {
          expect(kIssueCodes).toContain(i.code);
          expect(i.path.startsWith(`messages[${i.index}]`)).toBe(true);
          // Messages built by hand have no input: the path is the canonical one.
          expect(i.canonicalPath).toBe(i.path);
          expect(i.index).toBeLessThan(messages.length);
          const rule = kRules.find((x) => x.code === i.code)!;
          expect(rule.formats).toContain(format);
          expect(i.severity).toBe(severityOf(rule, format));
        }
        expect(newViolations(r, r)).toEqual([]);
        expect(newViolations(r, validate(messages, format, { thinking }))).toEqual([]);
        expect(newViolations({ ok: true, issues: [] }, r)).toEqual(r.issues);
      }),
      { numRuns: 500 },
    );
  });

  it("newViolations reports, per code + key, exactly the surplus of after over before", () => {
    const count = (issues: readonly Issue[]) => {
      const m = new Map<string, number>();
      for (const i of issues) m.set(`${i.code} ${i.key}`, (m.get(`${i.code} ${i.key}`) ?? 0) + 1);
      return m;
    };
    fc.assert(
      fc.property(conversationArb, fc.constantFrom(...kFormats), fc.nat(), (messages, format, n) => {
        fc.pre(messages.length > 0);
        const drop = n % messages.length;
        const before = validate(messages, format);
        const after = validate(
          messages.filter((_, i) => i !== drop),
          format,
        );
        const fresh = newViolations(before, after);
        for (const i of fresh) expect(after.issues).toContain(i);
        const [b, a, f] = [count(before.issues), count(after.issues), count(fresh)];
        for (const [id, k] of a) expect(f.get(id) ?? 0).toBe(Math.max(0, k - (b.get(id) ?? 0)));
      }),
      { numRuns: 300 },
    );
  });
});
