/**
 * validate's paths name the field in the input's own shape (src/adapters/input-paths.ts), one
 * describe per format: a call is OpenAI Chat's `tool_calls[k]`, an Anthropic block its
 * `content[k]`, a Responses item the item. The canonical path stays in canonicalPath, and
 * messages that are not one parse's as it returned them keep canonical paths.
 */
import { describe, expect, it } from "vitest";
import { WireCache } from "../../src/adapters/wire-cache.js";
import { aiSdkAdapter, anthropicAdapter, langchainAdapter, openaiChatAdapter, openaiResponsesAdapter } from "../../src/adapters/index.js";
import type { Format } from "../../src/adapters/common.js";
import type { Message } from "../../src/model/schema.js";
import { validate, type Issue, type IssueCode } from "../../src/validate/index.js";

/** [path, canonicalPath] of each issue of `code`. */
function where(messages: Message[], format: Format, code: IssueCode): [string, string][] {
  return validate(messages, format)
    .issues.filter((i) => i.code === code)
    .map((i: Issue) => [i.path, i.canonicalPath]);
}

const chatCall = (id: string) => ({ id, type: "function", function: { name: "bash", arguments: "{}" } });

describe("openai-chat", () => {
  const wire = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Fix it." },
    { role: "assistant", content: "Looking.", tool_calls: [chatCall("c1"), chatCall("c2")] },
    { role: "tool", tool_call_id: "c1", content: "ok" },
    { role: "tool", tool_call_id: "c9", content: "stray" },
    { role: "user", content: "Go on." },
  ];
  const messages = openaiChatAdapter.parse(wire);

  it("names a call by tool_calls[k], after the content", () => {
    expect(where(messages, "openai-chat", "TOOL_CALL_UNANSWERED")).toEqual([["messages[2].tool_calls[1]", "messages[2].parts[2]"]]);
  });

  it("names a tool result by its tool message", () => {
    expect(where(messages, "openai-chat", "TOOL_RESULT_ORPHAN")).toEqual([["messages[4]", "messages[4].parts[0]"]]);
  });

  it("names a legacy function_call, and the place a message text points to", () => {
    const legacy = openaiChatAdapter.parse([
      { role: "user", content: "Go." },
      { role: "assistant", content: null, function_call: { name: "bash", arguments: "{}" } },
      { role: "user", content: "And?" },
    ]);
    expect(where(legacy, "openai-chat", "TOOL_CALL_UNANSWERED")).toEqual([["messages[1].function_call", "messages[1].parts[0]"]]);
    const twice = openaiChatAdapter.parse([
      { role: "user", content: "Go." },
      { role: "assistant", content: null, tool_calls: [chatCall("c1")] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "assistant", content: null, tool_calls: [chatCall("c1")] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ]);
    const [dup] = validate(twice, "openai-chat").issues.filter((i) => i.code === "DUPLICATE_CALL_ID");
    expect(dup).toMatchObject({ path: "messages[3].tool_calls[0]", canonicalPath: "messages[3].parts[0]" });
    expect(dup.message).toContain("already used at messages[1].tool_calls[0]");
  });

  it("names content parts, whatever format the messages are validated for", () => {
    const parts = openaiChatAdapter.parse([
      {
        role: "user",
        content: [
          { type: "text", text: "Hi." },
          { type: "text", text: " " },
        ],
      },
    ]);
    expect(where(parts, "anthropic", "EMPTY_TEXT")).toEqual([["messages[0].content[1]", "messages[0].parts[1]"]]);
  });
});

describe("anthropic", () => {
  const wire = {
    system: [
      { type: "text", text: "Be brief." },
      { type: "text", text: "" },
    ],
    messages: [
      { role: "user", content: "Fix it." },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "tool_use", id: "t1", name: "bash", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "text", text: "  " },
          { type: "tool_result", tool_use_id: "t9", content: "stray" },
        ],
      },
    ],
  };
  const messages = anthropicAdapter.parse(wire);

  it("names a block by content[k] of its wire message, also when a user message became two canonical ones", () => {
    // Canonical: system, user, assistant, tool (the tool_result), user (the text).
    expect(where(messages, "anthropic", "TOOL_RESULT_ORPHAN")).toEqual([["messages[2].content[1]", "messages[3].parts[0]"]]);
    expect(where(messages, "anthropic", "TOOL_CALL_UNANSWERED")).toEqual([["messages[1].content[1]", "messages[2].parts[1]"]]);
    expect(where(messages, "anthropic", "EMPTY_TEXT")).toEqual([
      ["system[1]", "messages[0].parts[1]"],
      ["messages[2].content[0]", "messages[4].parts[0]"],
    ]);
  });

  it("names a string content and a string system by the field", () => {
    const plain = anthropicAdapter.parse({ system: " ", messages: [{ role: "user", content: "" }] });
    expect(where(plain, "anthropic", "EMPTY_TEXT")).toEqual([
      ["system", "messages[0].parts[0]"],
      ["messages[0].content", "messages[1].parts[0]"],
    ]);
  });
});

describe("openai-responses", () => {
  const ask = (text: string) => ({ role: "user", content: text });
  const call = (n: number) => ({ type: "function_call", call_id: `call_${n}`, name: "bash", arguments: "{}" });
  const wire = [
    ask("Fix it."),
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "enc" },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Looking." }] },
    call(1),
    call(2),
    { type: "function_call_output", call_id: "call_1", output: "ok" },
    { type: "function_call_output", call_id: "call_9", output: "stray" },
    ask("Go on."),
  ];
  const messages = openaiResponsesAdapter.parse(wire);

  it("names an item by its own index: items are flat, a run of them is one canonical message", () => {
    expect(where(messages, "openai-responses", "TOOL_CALL_UNANSWERED")).toEqual([["messages[4]", "messages[1].parts[3]"]]);
    expect(where(messages, "openai-responses", "TOOL_RESULT_ORPHAN")).toEqual([["messages[6]", "messages[3].parts[0]"]]);
    const lone = openaiResponsesAdapter.parse([ask("Read it."), { type: "reasoning", id: "rs_2", summary: [] }, ask("And?")]);
    expect(where(lone, "openai-responses", "REASONING_WITHOUT_FOLLOWER")).toEqual([["messages[1]", "messages[1].parts[0]"]]);
  });

  it("names a message item's content part", () => {
    const items = openaiResponsesAdapter.parse([
      ask("Go."),
      { type: "reasoning", id: "rs_1", summary: [] },
      {
        type: "message",
        role: "assistant",
        content: [
          { type: "output_text", text: "Done." },
          { type: "output_text", text: " " },
        ],
      },
    ]);
    expect(where(items, "anthropic", "EMPTY_TEXT")).toEqual([["messages[2].content[1]", "messages[1].parts[2]"]]);
  });
});

describe("ai-sdk", () => {
  const wire = [
    { role: "user", content: "Fix it." },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool-call", toolCallId: "c1", toolName: "bash", input: {} },
        { type: "tool-call", toolCallId: "c2", toolName: "bash", input: {} },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "bash", output: { type: "text", value: "ok" } },
        { type: "tool-result", toolCallId: "c9", toolName: "bash", output: { type: "text", value: "stray" } },
      ],
    },
    { role: "user", content: "Go on." },
  ];
  const messages = aiSdkAdapter.parse(wire);

  it("names a part by content[k], a result of a tool message split in two by its own element", () => {
    expect(where(messages, "ai-sdk", "TOOL_CALL_UNANSWERED")).toEqual([["messages[1].content[2]", "messages[1].parts[2]"]]);
    expect(where(messages, "ai-sdk", "TOOL_RESULT_ORPHAN")).toEqual([["messages[2].content[1]", "messages[3].parts[0]"]]);
  });
});

describe("langchain", () => {
  const wire = [
    { type: "human", content: "Fix it." },
    {
      type: "ai",
      content: "Looking.",
      tool_calls: [
        { name: "bash", args: {}, id: "c1", type: "tool_call" },
        { name: "bash", args: {}, id: "c2", type: "tool_call" },
      ],
    },
    { type: "tool", tool_call_id: "c1", content: "ok" },
    { type: "tool", tool_call_id: "c9", content: "stray" },
    { type: "human", content: "Go on." },
  ];
  const messages = langchainAdapter.parse(wire);

  it("names a call by tool_calls[k] and a result by its tool message", () => {
    expect(where(messages, "langchain", "TOOL_CALL_UNANSWERED")).toEqual([["messages[1].tool_calls[1]", "messages[1].parts[2]"]]);
    expect(where(messages, "langchain", "TOOL_RESULT_ORPHAN")).toEqual([["messages[3]", "messages[3].parts[0]"]]);
  });
});

describe("messages that are not one parse's as returned", () => {
  const wire = [
    { role: "user", content: "Fix it." },
    { role: "assistant", content: null, tool_calls: [chatCall("c1"), chatCall("c2")] },
    { role: "tool", tool_call_id: "c1", content: "ok" },
    { role: "user", content: "Go on." },
  ];
  const messages = openaiChatAdapter.parse(wire);

  it("keep the input's paths for the first n messages", () => {
    expect(where(messages.slice(0, 3), "openai-chat", "TOOL_CALL_PENDING")).toEqual([]);
    expect(where(messages.slice(0, 2), "openai-chat", "TOOL_CALL_PENDING").map(([p]) => p)).toEqual(["messages[1].tool_calls[0]", "messages[1].tool_calls[1]"]);
  });

  it("get canonical paths once a message is left out, added or changed: there is no input to point into", () => {
    const dropped = messages.filter((_, i) => i !== 0);
    expect(where(dropped, "openai-chat", "TOOL_CALL_UNANSWERED")).toEqual([["messages[0].parts[1]", "messages[0].parts[1]"]]);
    const changed = [messages[0], { ...messages[1] }, ...messages.slice(2)];
    expect(where(changed, "openai-chat", "TOOL_CALL_UNANSWERED")).toEqual([["messages[1].parts[1]", "messages[1].parts[1]"]]);
  });

  it("a wire cache's suffix parse records where its messages sit in the whole input", () => {
    const cache = new WireCache("openai-chat");
    cache.parse(wire.slice(0, 3));
    const grown = cache.parse([...wire, { role: "assistant", content: null, tool_calls: [chatCall("c3")] }, { role: "user", content: "Stop." }]);
    expect(cache.stats.wholeParses).toBe(1);
    expect(where(grown, "openai-chat", "TOOL_CALL_UNANSWERED").map(([p]) => p)).toEqual(["messages[1].tool_calls[1]", "messages[4].tool_calls[0]"]);
  });
});
