import { describe, expect, it } from "vitest";
import { detectFormat } from "../../src/adapters/detect.js";
import { CtxfoldError } from "../../src/errors.js";

describe("detectFormat", () => {
  const call = { id: "c1", type: "function", function: { name: "bash", arguments: "{}" } };
  it.each([
    [
      "openai-chat: tool_calls",
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [call] },
      ],
    ],
    ["openai-chat: developer role", [{ role: "developer", content: "x" }]],
    ["openai-chat: image_url part", [{ role: "user", content: [{ type: "image_url", image_url: { url: "u" } }] }]],
    [
      "openai-chat: plain role/content only",
      [
        { role: "system", content: "s" },
        { role: "user", content: "hi" },
      ],
    ],
    [
      "openai-responses: function_call item",
      [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      ],
    ],
    ["openai-responses: input_text part", [{ role: "user", content: [{ type: "input_text", text: "hi" }] }]],
    ["anthropic: system parameter", { system: "s", messages: [{ role: "user", content: "hi" }] }],
    ["anthropic: tool_use block", [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }]],
    ["anthropic: cache_control", [{ role: "user", content: [{ type: "text", text: "x", cache_control: { type: "ephemeral" } }] }]],
    ["ai-sdk: tool-call part", [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "t", toolName: "f", input: {} }] }]],
    [
      "ai-sdk: tool role with tool-result",
      [{ role: "tool", content: [{ type: "tool-result", toolCallId: "t", toolName: "f", output: { type: "text", value: "" } }] }],
    ],
    [
      "langchain: human/ai types",
      [
        { type: "human", content: "hi" },
        { type: "ai", content: "", tool_calls: [{ name: "f", args: {}, id: "t", type: "tool_call" }] },
      ],
    ],
  ])("%s", (label, data) => {
    expect(detectFormat(data)).toBe(label.slice(0, label.indexOf(":")));
  });

  it("an override wins, and must name a format", () => {
    expect(detectFormat([{ role: "user", content: "hi" }], "anthropic")).toBe("anthropic");
    expect(() => detectFormat([], "gemini" as never)).toThrow(expect.objectContaining({ code: "E_UNKNOWN_FORMAT", path: "format" }));
  });

  it("rejects what is not a conversation with E_UNKNOWN_FORMAT naming where", () => {
    for (const bad of [42, "x", null, { foo: 1 }]) {
      const err = (() => {
        try {
          detectFormat(bad);
        } catch (e) {
          return e;
        }
      })();
      expect(CtxfoldError.isInstance(err) && err.code).toBe("E_UNKNOWN_FORMAT");
    }
    expect(() => detectFormat([{ role: "user", content: "a" }, { content: "b" }])).toThrow(
      expect.objectContaining({ code: "E_UNKNOWN_FORMAT", path: "messages[1]" }),
    );
  });
});
