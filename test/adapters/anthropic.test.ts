/**
 * The Anthropic Messages adapter: hand fixtures for every block type, the round-trip properties
 * (rebuilt deep-equal, reused byte-identical), the split of user messages holding tool
 * results, rendering of canonical messages from other formats, and errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anthropicAdapter, type AnthropicMessage, type AnthropicWire } from "../../src/adapters/anthropic.js";
import { attachRawArgs, kRawArgs } from "../../src/adapters/common.js";
import { CtxfoldError } from "../../src/errors.js";
import { errorOf } from "./helpers.js";
import type { Message, Part, TextPart } from "../../src/model/schema.js";

const A = anthropicAdapter;

/** Both round-trip properties for one wire value. */
function expectRoundTrips(x: unknown): void {
  expect(A.render(A.parse(x), { reuse: false })).toEqual(x);
  const json = JSON.stringify(x);
  expect(JSON.stringify(A.render(A.parse(JSON.parse(json))))).toBe(json);
}

const cache = { type: "ephemeral" } as const;
const b64 = { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" };
const sig = "EqQBCkYIARgCKkD";

const fixtures: Record<string, AnthropicWire> = {
  "plain strings with a string system": {
    system: "You are terse.",
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "" },
    ],
  },
  "system as text blocks with cache_control": {
    system: [
      { type: "text", text: "rules" },
      { type: "text", text: "long context", cache_control: cache },
    ],
    messages: [{ role: "user", content: "go" }],
  },
  "system as one plain text block": { system: [{ type: "text", text: "only" }], messages: [] },
  "system after messages in the request object": { messages: [{ role: "user", content: "x" }], system: "s" } as AnthropicWire,
  "text blocks: citations, cache_control, one plain block, empty content": {
    messages: [
      { role: "user", content: [{ type: "text", text: "one block" }] },
      {
        role: "assistant",
        content: [
          {
            type: "text",
            text: "The sky is blue",
            citations: [{ type: "char_location", cited_text: "blue", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 4 }],
          },
          { type: "text", text: " and grass green.", citations: null },
        ],
      },
      { role: "user", content: [{ type: "text", text: "cached", cache_control: { type: "ephemeral", ttl: "1h" } }] },
      { role: "assistant", content: [] },
    ],
  },
  "image and document blocks": {
    messages: [
      {
        role: "user",
        content: [
          { type: "image", source: b64, cache_control: cache },
          { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
          { type: "image", source: { type: "file", file_id: "file_011" } },
          {
            type: "document",
            source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
            title: "Spec",
            context: "v2",
            citations: { enabled: true },
          },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "plain words" } },
          { type: "text", text: "describe these" },
        ],
      },
    ],
  },
  "tool_use and tool_result: string, blocks, absent, is_error, cache_control": {
    messages: [
      { role: "user", content: "list files" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "tool_use", id: "toolu_1", name: "bash", input: { cmd: "ls", flags: ["-l"] } },
          { type: "tool_use", id: "toolu_2", name: "read", input: {}, cache_control: cache },
          { type: "tool_use", id: "toolu_3", name: "shot", input: { z: 1, a: { nested: [null, true] } } },
          { type: "tool_use", id: "toolu_4", name: "noop", input: {} },
          { type: "tool_use", id: "toolu_5", name: "noop", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "a.txt\nb.txt" },
          { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "only block" }], is_error: false, cache_control: cache },
          {
            type: "tool_result",
            tool_use_id: "toolu_3",
            content: [
              { type: "text", text: "see:" },
              { type: "image", source: b64 },
              { type: "tool_reference", tool_name: "x" },
            ],
          },
          { type: "tool_result", tool_use_id: "toolu_4", is_error: true, content: "boom" },
          { type: "tool_result", tool_use_id: "toolu_5" },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_9", content: [] },
          { type: "tool_result", tool_use_id: "toolu_8", content: "" },
        ],
      },
    ],
  },
  "thinking and redacted_thinking with tool_use": {
    messages: [
      { role: "user", content: "weather?" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I should call the tool.", signature: sig },
          { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
          { type: "tool_use", id: "toolu_w", name: "get_weather", input: { city: "Paris" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_w", content: "18C" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "", signature: "" },
          { type: "text", text: "18C in Paris." },
        ],
      },
    ],
  },
  "server tool blocks and unknown types are carried": {
    messages: [
      {
        role: "user",
        content: [
          { type: "search_result", source: "https://x", title: "X", content: [{ type: "text", text: "r" }] },
          { type: "container_upload", file_id: "f1" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
          {
            type: "web_search_tool_result",
            tool_use_id: "srvtoolu_1",
            content: [{ type: "web_search_result", url: "https://x", title: "X", encrypted_content: "abc", page_age: null }],
          },
          { type: "mcp_tool_use", id: "mcptoolu_1", name: "f", server_name: "s", input: {} },
          { type: "text", text: "Found it." },
        ],
      },
    ],
  },
  "user messages mixing text and tool results": {
    messages: [
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "t1", name: "a", input: {} },
          { type: "tool_use", id: "t2", name: "b", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "1" },
          { type: "tool_result", tool_use_id: "t2", content: "2" },
          { type: "text", text: "now summarise" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "t3", name: "a", input: {} },
          { type: "tool_use", id: "t4", name: "b", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "text", text: "before" },
          { type: "tool_result", tool_use_id: "t3", content: "3" },
          { type: "image", source: b64 },
          { type: "tool_result", tool_use_id: "t4", content: "4" },
          { type: "text", text: "after" },
        ],
      },
    ],
  },
  "unknown fields on messages and blocks": {
    messages: [
      { role: "user", content: "q", x_trace: { span: 3 } },
      {
        id: "msg_01",
        type: "message",
        role: "assistant",
        model: "claude-x",
        content: [{ type: "text", text: "a", x_note: 1 }],
        stop_reason: "end_turn",
        usage: { input_tokens: 3 },
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "r", x_inner: true }], x_outer: [] }], x_msg: null },
    ],
  },
};

describe("anthropic hand fixtures", () => {
  it.each(Object.entries(fixtures))("%s: rebuilt deep-equal, reused byte-identical", (_, x) => {
    expectRoundTrips(x);
  });

  it("maps every block type to the canonical part it stands for", () => {
    const parts = (x: AnthropicWire) => A.parse(x).flatMap((m) => m.parts);
    const [img, url, file, pdf, txt] = parts(fixtures["image and document blocks"]!);
    expect(img).toEqual({ type: "media", mediaType: "image/png", data: b64, meta: { anthropic: { type: "image", fields: { cache_control: cache } } } });
    expect(url).toEqual({ type: "media", data: { type: "url", url: "https://example.com/a.jpg" }, meta: { anthropic: { type: "image" } } });
    expect(file?.type).toBe("media");
    expect(pdf).toMatchObject({
      type: "media",
      mediaType: "application/pdf",
      meta: { anthropic: { type: "document", fields: { title: "Spec", context: "v2", citations: { enabled: true } } } },
    });
    expect(txt).toMatchObject({ type: "media", mediaType: "text/plain" });

    const msgs = A.parse(fixtures["tool_use and tool_result: string, blocks, absent, is_error, cache_control"]!);
    expect(msgs.map((m) => [m.id, m.role])).toEqual([
      ["m0", "user"],
      ["m1", "assistant"],
      ["m2", "tool"],
      ["m3", "tool"],
    ]);
    expect(msgs[1]!.parts[1]).toEqual({ type: "tool-call", id: "toolu_1", name: "bash", args: '{"cmd":"ls","flags":["-l"]}' });
    expect(msgs[1]!.parts[2]).toEqual({
      type: "tool-call",
      id: "toolu_2",
      name: "read",
      args: "{}",
      meta: { anthropic: { fields: { cache_control: cache } } },
    });
    const [r1, r2, r3, r4, r5] = msgs[2]!.parts;
    expect(r1).toEqual({ type: "tool-result", callId: "toolu_1", name: "bash", content: [{ type: "text", text: "a.txt\nb.txt" }] });
    expect(r2).toEqual({
      type: "tool-result",
      callId: "toolu_2",
      name: "read",
      content: [{ type: "text", text: "only block" }],
      isError: false,
      meta: { anthropic: { content: "array", fields: { cache_control: cache } } },
    });
    expect(r3).toMatchObject({
      content: [
        { type: "text", text: "see:" },
        { type: "media", mediaType: "image/png" },
        { type: "opaque", value: { type: "tool_reference", tool_name: "x" } },
      ],
    });
    expect(r4).toMatchObject({ callId: "toolu_4", isError: true, content: [{ type: "text", text: "boom" }] });
    expect(r5).toEqual({ type: "tool-result", callId: "toolu_5", name: "noop", content: [] });
    expect(msgs[3]!.parts).toEqual([
      { type: "tool-result", callId: "toolu_9", content: [], meta: { anthropic: { content: "array" } } },
      { type: "tool-result", callId: "toolu_8", content: [{ type: "text", text: "" }] },
    ]);

    const [, assistant] = A.parse(fixtures["thinking and redacted_thinking with tool_use"]!);
    expect(
      assistant!.parts.map((p) => [
        p.type,
        "text" in p ? p.text : undefined,
        "redacted" in p ? p.redacted : undefined,
        "signature" in p ? p.signature : undefined,
      ]),
    ).toEqual([
      ["reasoning", "I should call the tool.", undefined, sig],
      ["reasoning", undefined, "EmwKAhgBEgy3va3pzix", undefined],
      ["tool-call", undefined, undefined, undefined],
    ]);

    const server = A.parse(fixtures["server tool blocks and unknown types are carried"]!);
    expect(server.flatMap((m) => m.parts.map((p) => p.type))).toEqual(["opaque", "opaque", "opaque", "opaque", "opaque", "text"]);
    const carried = fixtures["server tool blocks and unknown types are carried"]!.messages[1]!.content[0];
    expect((server[1]!.parts[0] as { value: unknown }).value).toBe(carried);
  });

  it("gives the system parameter id `system` and keeps cache_control in part meta", () => {
    const [sys, user] = A.parse(fixtures["system as text blocks with cache_control"]!);
    expect(sys).toEqual({
      id: "system",
      role: "system",
      parts: [
        { type: "text", text: "rules" },
        { type: "text", text: "long context", meta: { anthropic: { fields: { cache_control: cache } } } },
      ],
      meta: {},
    });
    expect(user!.id).toBe("m0");
    expect(A.parse({ system: "s", messages: [] })).toEqual([{ id: "system", role: "system", parts: [{ type: "text", text: "s" }], meta: {} }]);
  });

  it("accepts a bare messages array and renders the object form", () => {
    const bare: AnthropicMessage[] = [{ role: "user", content: "hi" }];
    const back = A.render(A.parse(bare));
    expect(back).toEqual({ messages: bare });
    expect(back.messages[0]).toBe(bare[0]);
    expect("system" in back).toBe(false);
  });
});

describe("a user message holding tool results", () => {
  const x = fixtures["user messages mixing text and tool results"]!;

  it("becomes one tool message of every result, then a user message of the other blocks", () => {
    const msgs = A.parse(x);
    expect(msgs.map((m) => `${m.id}:${m.role}:${m.parts.map((p) => p.type).join(",")}`)).toEqual([
      "m0:assistant:tool-call,tool-call",
      "m1.0:tool:tool-result,tool-result",
      "m1.1:user:text",
      "m2:assistant:tool-call,tool-call",
      "m3.0:tool:tool-result,tool-result",
      "m3.1:user:text,media,text",
    ]);
    expect(msgs[4]!.meta).toEqual({ anthropic: { blocks: "ororo" } });
    expect(msgs[5]!.meta).toEqual({ anthropic: { tail: true } });
  });

  it("renders the pair back as the one wire message, untouched or rebuilt", () => {
    const msgs = A.parse(x);
    const wire = A.render(msgs);
    expect(wire.messages).toHaveLength(4);
    expect(wire.messages[3]).toBe(x.messages[3]);
    // Edit the tail: the pair is rebuilt from the hint, blocks in their wire order.
    const edited = msgs.slice();
    edited[5] = { ...msgs[5]!, parts: [{ type: "text", text: "BEFORE" }, ...msgs[5]!.parts.slice(1)] };
    const rebuilt = A.render(edited).messages[3]!;
    expect(rebuilt).not.toBe(x.messages[3]);
    expect((rebuilt.content as { type: string }[]).map((b) => b.type)).toEqual(["text", "tool_result", "image", "tool_result", "text"]);
    expect((rebuilt.content as { text?: string }[])[0]!.text).toBe("BEFORE");
    // Drop the tail: the results render alone.
    const dropped = [...msgs.slice(0, 5)];
    expect(A.render(dropped).messages[3]).toEqual({ role: "user", content: [x.messages[3]!.content[1], x.messages[3]!.content[3]] });
  });

  it("keeps two consecutive wire tool-result messages apart on a rebuild", () => {
    const two: AnthropicWire = {
      messages: [
        { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "1" }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "b", content: "2" }] },
      ],
    };
    expectRoundTrips(two);
  });
});

describe("reuse", () => {
  it("hands back the parsed wire objects for untouched messages and rebuilds edited ones", () => {
    const x = fixtures["tool_use and tool_result: string, blocks, absent, is_error, cache_control"]!;
    const msgs = A.parse(x);
    const out = A.render(msgs);
    out.messages.forEach((m, i) => expect(m).toBe(x.messages[i]));
    const edited = msgs.slice();
    edited[0] = { ...msgs[0]!, parts: [{ type: "text", text: "list all files" }] };
    const again = A.render(edited);
    expect(again.messages[0]).toEqual({ role: "user", content: "list all files" });
    expect(again.messages[1]).toBe(x.messages[1]);
    expect(again.messages[2]).toBe(x.messages[2]);
  });

  it("reuses the system value", () => {
    const x = fixtures["system as text blocks with cache_control"]!;
    expect(A.render(A.parse(x)).system).toBe(x.system);
  });
});

describe("canonical messages from other formats", () => {
  const text = (t: string): TextPart => ({ type: "text", text: t });
  const call = (id: string, name: string, args: string): Part => ({ type: "tool-call", id, name, args });
  const result = (callId: string, out: string): Part => ({ type: "tool-result", callId, content: [text(out)] });
  const msg = (id: string, role: Message["role"], parts: Part[]): Message => ({ id, role, parts, meta: {} });

  /** An OpenAI Chat conversation as its adapter would parse it. */
  const openaiShaped: Message[] = [
    msg("m0", "system", [text("You are an agent.")]),
    msg("m1", "user", [text("Fix the bug.")]),
    msg("m2", "assistant", [text("Two looks first."), call("call_a", "bash", '{"cmd": "ls"}'), call("call_b", "read", '{"path":"x.py"}')]),
    msg("m3", "tool", [result("call_a", "x.py")]),
    msg("m4", "tool", [result("call_b", "print(1)")]),
    msg("m5", "assistant", [call("call_c", "bash", '{"cmd":"true"}')]),
    msg("m6", "tool", [result("call_c", "")]),
    msg("m7", "assistant", [text("Done.")]),
  ];

  it("renders the Anthropic shapes the API wants", () => {
    const wire = A.render(openaiShaped);
    expect(wire).toEqual({
      system: "You are an agent.",
      messages: [
        { role: "user", content: "Fix the bug." },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Two looks first." },
            { type: "tool_use", id: "call_a", name: "bash", input: { cmd: "ls" } },
            { type: "tool_use", id: "call_b", name: "read", input: { path: "x.py" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_a", content: "x.py" },
            { type: "tool_result", tool_use_id: "call_b", content: "print(1)" },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "call_c", name: "bash", input: { cmd: "true" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_c", content: "" }] },
        { role: "assistant", content: "Done." },
      ],
    });
    expect(Object.keys(wire)).toEqual(["system", "messages"]);
  });

  it("parses back to the same roles and parts, tool messages merged per turn", () => {
    const back = A.parse(A.render(openaiShaped));
    /** One entry per part: role, and the part without meta or result names; tool messages split to one result each. */
    const normalise = (ms: readonly Message[]) =>
      ms.flatMap((m) =>
        (m.role === "tool" ? m.parts.map((p) => [p]) : [m.parts]).map((ps) => ({
          role: m.role,
          parts: ps.map(({ meta: _meta, ...p }) => ("name" in p && p.type === "tool-result" ? { ...p, name: undefined } : p)),
        })),
      );
    expect(normalise(back)).toEqual(normalise(openaiShaped));
    expect(back.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]);
    // The raw argument text survives the in-memory trip (the wire holds objects).
    expect(back[2]!.parts[1]).toMatchObject({ args: '{"cmd": "ls"}' });
  });

  it("keeps raw argument text on the rendered input, invisibly", () => {
    const wire = A.render([msg("a", "assistant", [call("c", "f", '{ "b":2, "a":1 }'), call("d", "f", "not json")])]);
    const blocks = wire.messages[0]!.content as { input: Record<PropertyKey, unknown> }[];
    expect(blocks[0]!.input).toEqual({ b: 2, a: 1 });
    expect(blocks[0]!.input[kRawArgs]).toBe('{ "b":2, "a":1 }');
    expect(blocks[1]!.input).toEqual({});
    expect(JSON.stringify(blocks[1]!.input)).toBe("{}");
    const back = A.parse(wire)[0]!.parts;
    expect(back.map((p) => (p as { args: string }).args)).toEqual(['{ "b":2, "a":1 }', "not json"]); // in memory, even text that is not JSON survives
    // An edit to the object wins over the attached text.
    const input = attachRawArgs({ a: 2 }, '{"a": 1}');
    expect((A.parse([{ role: "assistant", content: [{ type: "tool_use", id: "x", name: "f", input }] }])[0]!.parts[0] as { args: string }).args).toBe(
      '{"a":2}',
    );
  });

  it("writes isError only when set, and several leading system messages as blocks", () => {
    const wire = A.render([
      msg("s1", "system", [text("a")]),
      msg("s2", "system", [text("b"), text("c")]),
      msg("t", "tool", [
        { type: "tool-result", callId: "x", content: [text("bad")], isError: true },
        { type: "tool-result", callId: "y", content: [] },
      ]),
    ]);
    expect(wire).toEqual({
      system: [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
        { type: "text", text: "c" },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "x", content: "bad", is_error: true },
            { type: "tool_result", tool_use_id: "y" },
          ],
        },
      ],
    });
  });

  it("drops what Anthropic cannot take back: unsigned foreign reasoning, foreign opaque parts", () => {
    const wire = A.render([
      msg("a", "assistant", [
        { type: "reasoning", text: "summary from elsewhere" },
        { type: "reasoning", redacted: "openai-encrypted" },
        { type: "reasoning", text: "signed", signature: "s" },
        { type: "opaque", value: { type: "refusal", refusal: "no" } },
        text("ok"),
      ]),
    ]);
    expect(wire.messages[0]!.content).toEqual([
      { type: "thinking", thinking: "signed", signature: "s" },
      { type: "text", text: "ok" },
    ]);
  });

  it("converts media parts of other formats to image and document sources", () => {
    const media = (data: unknown, mediaType?: string): Part => ({ type: "media", data, ...(mediaType ? { mediaType } : {}) });
    const wire = A.render([
      msg("u", "user", [
        media({ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, "image/png"),
        media({ type: "image_url", image_url: { url: "https://x/y.jpg" } }, "image/*"),
        media({ type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } }, "application/pdf"),
        media({ type: "file", file: { file_id: "file-1" } }),
      ]),
    ]);
    expect(wire.messages[0]!.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      { type: "image", source: { type: "url", url: "https://x/y.jpg" } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" } },
      { type: "image", source: { type: "file", file_id: "file-1" } },
    ]);
    const audio = errorOf(() => A.render([msg("u", "user", [media({ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }, "audio/wav")])]));
    expect([audio.code, audio.path]).toEqual(["E_UNKNOWN_PART", "messages[0].parts[0]"]);
  });

  it("rejects a system message after the conversation started, and non-text system parts", () => {
    const late = errorOf(() => A.render([msg("u", "user", [text("hi")]), msg("s", "system", [text("late")])]));
    expect([late.code, late.path]).toEqual(["E_BAD_INPUT", "messages[1]"]);
    const media = errorOf(() => A.render([msg("s", "system", [{ type: "media", data: "https://x/y.png" }])]));
    expect([media.code, media.path]).toEqual(["E_UNKNOWN_PART", "messages[0].parts[0]"]);
  });
});

describe("bad input", () => {
  const cases: [string, unknown, string, RegExp][] = [
    ["content of the wrong type", [{ role: "user", content: 5 }], "messages[0]", /expected string or array, received number\n.*at content/],
    [
      "text not a string",
      [
        { role: "user", content: "ok" },
        { role: "user", content: [{ type: "text", text: 5 }] },
      ],
      "messages[1]",
      /content\[0\]\.text/,
    ],
    ["tool_use name not a string", [{ role: "assistant", content: [{ type: "tool_use", id: "a", name: 1, input: {} }] }], "messages[0]", /content\[0\]\.name/],
    ["tool_use without input", [{ role: "assistant", content: [{ type: "tool_use", id: "a", name: "f" }] }], "messages[0]", /content\[0\]\.input/],
    [
      "is_error not a boolean",
      [{ role: "user", content: [{ type: "tool_result", tool_use_id: "a", is_error: "yes" }] }],
      "messages[0]",
      /content\[0\]\.is_error/,
    ],
    [
      "text in a tool result not a string",
      [{ role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: [{ type: "text", text: null }] }] }],
      "messages[0]",
      /content\[0\]\.content\[0\]\.text/,
    ],
    ["thinking without text", [{ role: "assistant", content: [{ type: "thinking", signature: "s" }] }], "messages[0]", /content\[0\]\.thinking/],
    ["image source not an object", [{ role: "user", content: [{ type: "image", source: "x" }] }], "messages[0]", /content\[0\]\.source/],
    ["a block type not a string", [{ role: "user", content: [{ type: 7 }] }], "messages[0]", /expected string, received number\n.*at content\[0\]\.type/],
    ["a message that is not an object", [null], "messages[0]", /expected object/],
    ["role missing", [{ content: "x" }], "messages[0]", /role/],
    ["system of the wrong type", { system: 3, messages: [] }, "system", /expected string or array, received number/],
    ["system block text not a string", { system: [{ type: "text", text: 1 }], messages: [] }, "system", /\[0\]\.text/],
    ["messages not an array", { messages: "x" }, "messages", /expected array/],
    ["not a request at all", 42, "messages", /messages/],
  ];

  it.each(cases)("%s: E_SCHEMA naming where and the field", (_, input, path, field) => {
    const err = errorOf(() => A.parse(input, { source: "run-7" }));
    expect(err.code).toBe("E_SCHEMA");
    expect(err.path).toBe(`run-7: ${path}`);
    expect(err.message).toMatch(field);
  });

  it("rejects roles Anthropic does not have with E_UNKNOWN_ROLE", () => {
    for (const role of ["system", "tool", "developer"]) {
      const err = errorOf(() =>
        A.parse([
          { role: "user", content: "a" },
          { role, content: "b" },
        ]),
      );
      expect([err.code, err.path]).toEqual(["E_UNKNOWN_ROLE", "messages[1].role"]);
    }
  });

  it("never throws anything but a CtxfoldError on arbitrary input", () => {
    const blockish = fc.oneof(
      fc.anything(),
      fc.record(
        {
          type: fc.constantFrom("text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", "document"),
          text: fc.anything(),
          id: fc.anything(),
          content: fc.anything(),
          source: fc.anything(),
        },
        { requiredKeys: ["type"] },
      ),
    );
    const messageish = fc.record(
      {
        role: fc.oneof(fc.constantFrom("user", "assistant"), fc.anything()),
        content: fc.oneof(fc.string(), fc.array(blockish, { maxLength: 4 }), fc.anything()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.oneof(fc.array(messageish, { maxLength: 4 }), fc.record({ system: fc.anything(), messages: fc.array(messageish, { maxLength: 3 }) }), fc.anything()),
        (input) => {
          try {
            const msgs = A.parse(input);
            A.render(msgs, { reuse: false });
          } catch (e) {
            if (!CtxfoldError.isInstance(e)) throw e;
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Generated conversations.

const str = fc.string({ maxLength: 12, unit: "binary" });
const id = fc.stringMatching(/^[a-z]{1,3}_[0-9a-f]{1,6}$/);
const key = fc.string({ maxLength: 6 }).filter((k) => k !== "__proto__");
// Values as they arrive on the wire, through JSON (which has no -0: fast-check's does).
const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
/** An object without undefined-valued keys (JSON has none). */
const clean = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
const withExtras = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc.tuple(arb, maybe(fc.dictionary(fc.constantFrom("x_a", "x_b", "cache_control"), json, { maxKeys: 2 }))).map(([o, x]) => clean({ ...o, ...x }));

const textBlock = withExtras(
  fc.record({
    type: fc.constant("text"),
    text: str,
    citations: maybe(
      fc.constant([{ type: "char_location", cited_text: "c", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 1 }]),
    ),
  }),
);
const source = fc.oneof(
  fc.record({ type: fc.constant("base64"), media_type: fc.constantFrom("image/png", "image/jpeg"), data: str }),
  fc.record({ type: fc.constant("url"), url: str }),
  fc.record({ type: fc.constant("file"), file_id: id }),
);
const imageBlock = withExtras(fc.record({ type: fc.constant("image"), source }));
const documentBlock = withExtras(
  fc.record({
    type: fc.constant("document"),
    source: fc.oneof(
      fc.record({ type: fc.constant("base64"), media_type: fc.constant("application/pdf"), data: str }),
      fc.record({ type: fc.constant("text"), media_type: fc.constant("text/plain"), data: str }),
    ),
    title: maybe(fc.option(str, { nil: null })),
  }),
);
const otherBlock = fc.record({ type: fc.constantFrom("search_result", "tool_reference", "future_block"), v: json });
const toolUse = withExtras(fc.record({ type: fc.constant("tool_use"), id, name: str, input: fc.dictionary(key, json, { maxKeys: 3 }) }));
const toolResult = withExtras(
  fc.record({
    type: fc.constant("tool_result"),
    tool_use_id: id,
    content: maybe(fc.oneof(str, fc.array(fc.oneof(textBlock, imageBlock, otherBlock), { maxLength: 3 }))),
    is_error: maybe(fc.boolean()),
  }),
);
const thinking = withExtras(fc.record({ type: fc.constant("thinking"), thinking: str, signature: maybe(str) }));
const redacted = fc.record({ type: fc.constant("redacted_thinking"), data: str });
const serverBlocks = fc.oneof(
  fc.record({ type: fc.constant("server_tool_use"), id, name: fc.constant("web_search"), input: fc.dictionary(key, json, { maxKeys: 2 }) }),
  fc.record({
    type: fc.constant("web_search_tool_result"),
    tool_use_id: id,
    content: fc.array(fc.record({ type: fc.constant("web_search_result"), url: str, encrypted_content: str }), { maxLength: 2 }),
  }),
);
const msgExtras = maybe(fc.dictionary(fc.constantFrom("id", "x_meta", "usage"), json, { maxKeys: 2 }));
const userMessage = fc
  .tuple(fc.oneof(str, fc.array(fc.oneof({ weight: 3, arbitrary: toolResult }, textBlock, imageBlock, documentBlock, otherBlock), { maxLength: 5 })), msgExtras)
  .map(([content, x]) => clean({ role: "user", content, ...x }));
const assistantMessage = fc
  .tuple(fc.oneof(str, fc.array(fc.oneof(textBlock, { weight: 2, arbitrary: toolUse }, thinking, redacted, serverBlocks), { maxLength: 5 })), msgExtras)
  .map(([content, x]) => clean({ role: "assistant", content, ...x }));
const systemValue = fc.oneof(str, fc.array(fc.oneof({ weight: 4, arbitrary: textBlock }, otherBlock), { maxLength: 3 }));
const conversation = fc
  .tuple(maybe(systemValue), fc.boolean(), fc.array(fc.oneof(userMessage, assistantMessage), { maxLength: 8 }))
  .map(([system, after, messages]) => (system === undefined ? { messages } : after ? { messages, system } : { system, messages }));

describe("generated Anthropic conversations", () => {
  it("rebuild deep-equal and reuse byte-identical", () => {
    fc.assert(
      fc.property(conversation, (x) => expectRoundTrips(x)),
      { numRuns: 400 },
    );
  });

  it("survive a rebuild after every message was touched", () => {
    fc.assert(
      fc.property(conversation, (x) => {
        const touched = A.parse(x).map((m) => ({ ...m, parts: m.parts.slice() }));
        expect(A.render(touched)).toEqual(x);
      }),
      { numRuns: 200 },
    );
  });
});
