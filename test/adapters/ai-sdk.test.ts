import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aiSdkAdapter, kInventedToolName, type AiSdkWire } from "../../src/adapters/ai-sdk.js";
import { kRawArgs } from "../../src/adapters/common.js";
import { CtxfoldError } from "../../src/errors.js";
import { clone, errorOf, withoutMeta } from "./helpers.js";
import type { Message, Part, ToolCallPart, ToolResultPart } from "../../src/model/schema.js";

const { parse, render } = aiSdkAdapter;

/** Every AI SDK 5 wire feature the adapter knows, plus unknown parts, outputs and fields. */
const kV5: AiSdkWire = [
  { role: "system", content: "You are terse.", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },
  { role: "user", content: "List the files." },
  {
    role: "user",
    content: [
      { type: "text", text: "Look at this:", providerOptions: { openai: { detail: "low" } } },
      { type: "image", image: "https://example.com/a.png", mediaType: "image/png" },
      { type: "image", image: "iVBORw0KGgo=" },
      { type: "file", data: "JVBERi0xLjQ=", mediaType: "application/pdf", filename: "spec.pdf" },
      { type: "file", data: "iVBORw0KGgo=", mediaType: "image/png" },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "I should list.", providerOptions: { anthropic: { signature: "sig-1" } } },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "blob" } } },
      { type: "text", text: "Listing." },
      { type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "ls" } },
      { type: "tool-call", toolCallId: "c2", toolName: "read", input: { path: "a.txt" }, providerOptions: { openai: { itemId: "fc_1" } } },
      { type: "tool-call", toolCallId: "c3", toolName: "web_search", input: { query: "x" }, providerExecuted: true },
      { type: "tool-result", toolCallId: "c3", toolName: "web_search", output: { type: "json", value: [{ url: "https://x", title: "X" }] } },
    ],
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c1", toolName: "bash", output: { type: "text", value: "a.txt\nb.txt" } },
      { type: "tool-result", toolCallId: "c2", toolName: "read", output: { type: "error-text", value: "ENOENT" } },
    ],
    providerOptions: { x: { y: 1 } },
  },
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "c4", toolName: "get", input: "a raw string" },
      { type: "tool-call", toolCallId: "c5", toolName: "noop", input: null },
      { type: "tool-call", toolCallId: "c6", toolName: "shot", input: [1, 2] },
    ],
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c4", toolName: "get", output: { type: "json", value: { ok: true, n: 1.5 } } },
      { type: "tool-result", toolCallId: "c5", toolName: "noop", output: { type: "error-json", value: { code: 42 }, providerOptions: { a: { b: 1 } } } },
      {
        type: "tool-result",
        toolCallId: "c6",
        toolName: "shot",
        output: {
          type: "content",
          value: [
            { type: "text", text: "shot:" },
            { type: "media", data: "iVBORw0KGgo=", mediaType: "image/png" },
            { type: "image-url", url: "https://x/y.png" },
          ],
        },
      },
    ],
  },
  { role: "assistant", content: [{ type: "tool-approval-request", approvalId: "a1", toolCallId: "c7" }] },
  {
    role: "tool",
    content: [
      { type: "tool-approval-response", approvalId: "a1", approved: false },
      { type: "tool-result", toolCallId: "c7", toolName: "rm", output: { type: "execution-denied", reason: "user said no" } },
    ],
  },
  { role: "assistant", content: "Done.", somethingNew: { keep: true } },
  { role: "assistant", content: [{ type: "text", text: "one text part, as an array" }] },
  { role: "assistant", content: [] },
  { role: "tool", content: [] },
];

/** AI SDK 4 (CoreMessage) field names. */
const kV4: AiSdkWire = [
  {
    role: "user",
    content: [
      { type: "image", image: "https://e/x.png", mimeType: "image/png" },
      { type: "file", data: "JVBERi0=", mimeType: "application/pdf" },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "think", signature: "sig-v4" },
      { type: "redacted-reasoning", data: "blob-v4" },
      { type: "tool-call", toolCallId: "t1", toolName: "bash", args: { command: "ls" } },
      { type: "tool-call", toolCallId: "t2", toolName: "shot", args: {} },
      { type: "tool-call", toolCallId: "t3", toolName: "query", args: {}, experimental_providerMetadata: { a: { b: 1 } } },
    ],
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "t1", toolName: "bash", result: "a.txt" },
      {
        type: "tool-result",
        toolCallId: "t2",
        toolName: "shot",
        result: { ok: true },
        experimental_content: [
          { type: "text", text: "screenshot" },
          { type: "image", data: "iVBOR=", mimeType: "image/png" },
        ],
      },
      { type: "tool-result", toolCallId: "t3", toolName: "query", result: { rows: [1, 2] }, isError: true },
      { type: "tool-result", toolCallId: "t3", toolName: "query", result: null, isError: false },
    ],
  },
];

const call = (id: string, name: string, args: string): ToolCallPart => ({ type: "tool-call", id, name, args });
const result = (callId: string, content: ToolResultPart["content"], extra: Partial<ToolResultPart> = {}): ToolResultPart => ({
  type: "tool-result",
  callId,
  content,
  ...extra,
});
const msg = (id: string, role: Message["role"], parts: Part[]): Message => ({ id, role, parts, meta: {} });
const text = (t: string) => ({ type: "text" as const, text: t });

function expectRoundTrips(x: unknown): void {
  const again = render(parse(x), { reuse: false });
  if (!isDeepStrictEqual(again, x)) expect(again).toEqual(x);
  const json = JSON.stringify(x);
  const fresh = JSON.parse(json) as unknown;
  expect(JSON.stringify(render(parse(fresh)))).toBe(json);
}

describe("ai-sdk: hand-written conversations round-trip", () => {
  it.each([
    ["AI SDK 5", kV5],
    ["AI SDK 4", kV4],
  ])("%s: rebuilt deep-equals the input, reused is byte-identical", (_, wire) => {
    expectRoundTrips(clone(wire));
  });

  it("reuse hands back the very parsed objects; reuse: false rebuilds every one", () => {
    const wire = clone(kV5);
    const out = render(parse(wire));
    out.forEach((m, i) => expect(m).toBe(wire[i]));
    const rebuilt = render(parse(wire), { reuse: false });
    rebuilt.forEach((m, i) => expect(m).not.toBe(wire[i]));
  });

  it("a touched message is rebuilt, its untouched neighbours reused", () => {
    const wire = clone(kV5);
    const messages = parse(wire);
    const k = messages.findIndex((m) => m.id === "m1");
    messages[k] = { ...messages[k]!, parts: [text("List the files, please.")] };
    const out = render(messages);
    expect(out[1]).toEqual({ role: "user", content: "List the files, please." });
    expect(out[0]).toBe(wire[0]);
    expect(out[2]).toBe(wire[2]);
  });

  it("a wire tool message split into several canonical messages merges back when one of them changes", () => {
    const wire = clone(kV5);
    const messages = parse(wire);
    const k = messages.findIndex((m) => m.id === "m4.1");
    const r = messages[k]!.parts[0] as ToolResultPart;
    messages[k] = { ...messages[k]!, parts: [{ ...r, content: [text("[compacted]")] }] };
    const out = render(messages);
    expect(out.length).toBe(wire.length);
    expect(out[4]).not.toBe(wire[4]);
    expect(out[4]).toEqual({
      ...wire[4],
      content: [wire[4]!.content[0], { ...(wire[4]!.content[1] as object), output: { type: "error-text", value: "[compacted]" } }],
    });
  });
});

describe("ai-sdk: what parse makes", () => {
  const messages = parse(clone(kV5));
  const byId = (id: string) => messages.find((m) => m.id === id)!;

  it("ids m<i>, and m<i>.<k> for each part of a tool message holding several", () => {
    expect(messages.map((m) => m.id)).toEqual([
      "m0",
      "m1",
      "m2",
      "m3",
      "m4.0",
      "m4.1",
      "m5",
      "m6.0",
      "m6.1",
      "m6.2",
      "m7",
      "m8.0",
      "m8.1",
      "m9",
      "m10",
      "m11",
      "m12",
    ]);
    expect(byId("m4.0").meta).toEqual({ "ai-sdk": { fields: { providerOptions: { x: { y: 1 } } } } });
    expect(byId("m4.1").meta).toEqual({ "ai-sdk": { joinPrev: true } });
    expect(byId("m12")).toMatchObject({ role: "tool", parts: [] });
  });

  it("text, media and reasoning parts; providerOptions kept in meta", () => {
    expect(byId("m0").parts).toEqual([text("You are terse.")]);
    expect(byId("m0").meta).toEqual({ "ai-sdk": { fields: { providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } } } });
    const [t, img, img2, pdf, pngFile] = byId("m2").parts;
    expect(t).toEqual({ type: "text", text: "Look at this:", meta: { "ai-sdk": { fields: { providerOptions: { openai: { detail: "low" } } } } } });
    expect(img).toMatchObject({ type: "media", mediaType: "image/png", data: "https://example.com/a.png" });
    expect(img2).toEqual({ type: "media", data: "iVBORw0KGgo=", meta: { "ai-sdk": { kind: "image" } } });
    expect(pdf).toMatchObject({
      type: "media",
      mediaType: "application/pdf",
      data: "JVBERi0xLjQ=",
      meta: { "ai-sdk": { kind: "file", fields: { filename: "spec.pdf" } } },
    });
    expect(pngFile).toMatchObject({ type: "media", mediaType: "image/png", meta: { "ai-sdk": { kind: "file" } } });
    const [r1, r2] = byId("m3").parts;
    expect(r1).toMatchObject({ type: "reasoning", text: "I should list.", signature: "sig-1" });
    expect(r2).toMatchObject({ type: "reasoning", redacted: "blob" });
    expect(r2).not.toHaveProperty("text");
  });

  it("tool calls keep their input as raw JSON text, any JSON value", () => {
    const calls = [...byId("m3").parts, ...byId("m5").parts].filter((p): p is ToolCallPart => p.type === "tool-call");
    expect(calls.map((c) => [c.id, c.name, c.args])).toEqual([
      ["c1", "bash", '{"command":"ls"}'],
      ["c2", "read", '{"path":"a.txt"}'],
      ["c3", "web_search", '{"query":"x"}'],
      ["c4", "get", '"a raw string"'],
      ["c5", "noop", "null"],
      ["c6", "shot", "[1,2]"],
    ]);
    expect(calls[2]!.meta).toEqual({ "ai-sdk": { fields: { providerExecuted: true } } });
  });

  it("tool results: text, error-text, json as its JSON text, content items, unknown outputs as opaque", () => {
    const r = (id: string, k = 0) => byId(id).parts[k] as ToolResultPart;
    expect(r("m3", 6)).toMatchObject({ callId: "c3", name: "web_search", content: [text('[{"url":"https://x","title":"X"}]')] });
    expect(r("m4.0")).toEqual({ type: "tool-result", callId: "c1", name: "bash", content: [text("a.txt\nb.txt")] });
    expect(r("m4.1")).toEqual({ type: "tool-result", callId: "c2", name: "read", content: [text("ENOENT")], isError: true });
    expect(r("m6.0")).toMatchObject({ content: [text('{"ok":true,"n":1.5}')], meta: { "ai-sdk": { output: "json" } } });
    expect(r("m6.0").isError).toBeUndefined();
    expect(r("m6.1")).toMatchObject({
      isError: true,
      content: [text('{"code":42}')],
      meta: { "ai-sdk": { output: "json", outputFields: { providerOptions: { a: { b: 1 } } } } },
    });
    expect(r("m6.2").content).toEqual([
      text("shot:"),
      { type: "media", data: "iVBORw0KGgo=", mediaType: "image/png" },
      { type: "opaque", value: { type: "image-url", url: "https://x/y.png" }, meta: { "ai-sdk": { wire: true } } },
    ]);
    expect(byId("m7").parts).toEqual([
      { type: "opaque", value: { type: "tool-approval-request", approvalId: "a1", toolCallId: "c7" }, meta: { "ai-sdk": { wire: true } } },
    ]);
    expect(byId("m8.0").parts[0]).toMatchObject({ type: "opaque" });
    expect(r("m8.1").content).toEqual([{ type: "opaque", value: { type: "execution-denied", reason: "user said no" }, meta: { "ai-sdk": { wire: true } } }]);
  });

  it("a string content is one text part; unknown message fields stay in meta", () => {
    expect(byId("m9")).toEqual({ id: "m9", role: "assistant", parts: [text("Done.")], meta: { "ai-sdk": { fields: { somethingNew: { keep: true } } } } });
    expect(byId("m10").meta).toEqual({ "ai-sdk": { content: "array" } });
  });

  it("AI SDK 4: args, result, isError, experimental_content, mimeType, signature, redacted-reasoning", () => {
    const v4 = parse(clone(kV4));
    expect(v4[0]!.parts).toEqual([
      { type: "media", data: "https://e/x.png", mediaType: "image/png", meta: { "ai-sdk": { kind: "image", mimeKey: "mimeType" } } },
      { type: "media", data: "JVBERi0=", mediaType: "application/pdf", meta: { "ai-sdk": { kind: "file", mimeKey: "mimeType" } } },
    ]);
    const [reasoning, redacted, c1] = v4[1]!.parts;
    expect(reasoning).toMatchObject({ type: "reasoning", text: "think", signature: "sig-v4" });
    expect(redacted).toMatchObject({ type: "reasoning", redacted: "blob-v4", meta: { "ai-sdk": { kind: "redacted-reasoning" } } });
    expect(c1).toEqual({ type: "tool-call", id: "t1", name: "bash", args: '{"command":"ls"}', meta: { "ai-sdk": { v: 4 } } });
    const results = v4.slice(2).map((m) => m.parts[0] as ToolResultPart);
    expect(results[0]).toMatchObject({ callId: "t1", content: [text("a.txt")] });
    expect(results[1]).toMatchObject({
      content: [text("screenshot"), { type: "media", data: "iVBOR=", mediaType: "image/png" }],
      meta: { "ai-sdk": { v: 4, result: { ok: true } } },
    });
    expect(results[2]).toMatchObject({ isError: true, content: [text('{"rows":[1,2]}')], meta: { "ai-sdk": { v: 4, output: "json" } } });
    expect(results[3]).toMatchObject({ isError: false, content: [text("null")] });
  });
});

describe("ai-sdk: rendering canonical messages from other formats", () => {
  it("a lone text part renders as a string, an empty part list as []", () => {
    expect(render([msg("a", "user", [text("hi")]), msg("b", "assistant", []), msg("c", "assistant", [text("x"), text("y")])])).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: [] },
      { role: "assistant", content: [text("x"), text("y")] },
    ]);
  });

  it("tool calls render their args as the parsed input, raw text attached (text that is not JSON as {})", () => {
    const [out] = render([msg("a", "assistant", [call("c1", "bash", '{"command": "ls"}'), call("c2", "f", "not json")])]);
    const [c1, c2] = out!.content as Array<{ input: object }>;
    expect(c1).toEqual({ type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "ls" } });
    expect((c1!.input as Record<symbol, unknown>)[kRawArgs]).toBe('{"command": "ls"}');
    expect(c2!.input).toEqual({});
  });

  it("consecutive tool messages stay separate wire messages; a missing name is the call's, else 'unknown', and is dropped again on parse", () => {
    const canonical = [
      msg("m0", "assistant", [call("c1", "bash", "{}"), call("c2", "read", "{}")]),
      msg("m1", "tool", [result("c1", [text("a")])]),
      msg("m2", "tool", [result("c2", [text("b")])]),
      msg("m3", "tool", [result("zz", [text("orphan")])]),
    ];
    const wire = render(canonical);
    expect(wire.map((m) => m.role)).toEqual(["assistant", "tool", "tool", "tool"]);
    const names = wire.slice(1).map((m) => (m.content as Array<{ toolName: string }>)[0]!.toolName);
    expect(names).toEqual(["bash", "read", "unknown"]);
    expect((wire[3]!.content[0] as unknown as Record<symbol, unknown>)[kInventedToolName]).toBe("unknown");
    const back = parse(wire);
    expect(back.slice(1).map((m) => (m.parts[0] as ToolResultPart).name)).toEqual([undefined, undefined, undefined]);
    // A JSON round trip loses the mark: the name stays.
    expect((parse(clone(wire))[1]!.parts[0] as ToolResultPart).name).toBe("bash");
  });

  it("a named result keeps its name; renaming the wire part keeps the new name", () => {
    const wire = render([msg("m0", "tool", [result("c1", [text("a")], { name: "grep" })])]);
    expect((wire[0]!.content[0] as { toolName: string }).toolName).toBe("grep");
    const invented = render([msg("m0", "tool", [result("c1", [text("a")])])]);
    (invented[0]!.content[0] as { toolName: string }).toolName = "ls";
    expect((parse(invented)[0]!.parts[0] as ToolResultPart).name).toBe("ls");
  });

  it("tool outputs: error flag, several texts, rich content", () => {
    const media = { type: "media" as const, data: "iVBOR=", mediaType: "image/png" };
    const outputs = render([
      msg("a", "tool", [result("c", [text("boom")], { isError: true })]),
      msg("b", "tool", [result("c", [text("x"), text("y")], { isError: true })]),
      msg("c", "tool", [result("c", [text("x"), media])]),
      msg("d", "tool", [result("c", [])]),
      msg("e", "tool", [result("c", [text("ok")], { isError: false })]),
    ]).map((m) => (m.content[0] as { output: unknown }).output);
    expect(outputs).toEqual([
      { type: "error-text", value: "boom" },
      { type: "error-text", value: "x\ny" },
      { type: "content", value: [{ type: "text", text: "x" }, media] },
      { type: "content", value: [] },
      { type: "text", value: "ok" },
    ]);
  });

  it("reasoning: signature and redacted data go to providerOptions.anthropic, nothing invented without them", () => {
    const out = render([
      msg("a", "assistant", [
        { type: "reasoning", text: "t", signature: "s" },
        { type: "reasoning", redacted: "r" },
        { type: "reasoning", text: "plain" },
      ]),
    ]);
    expect(out[0]!.content).toEqual([
      { type: "reasoning", text: "t", providerOptions: { anthropic: { signature: "s" } } },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "r" } } },
      { type: "reasoning", text: "plain" },
    ]);
    expect(parse(out)[0]!.parts.map(({ meta: _, ...p }) => p)).toEqual([
      { type: "reasoning", text: "t", signature: "s" },
      { type: "reasoning", redacted: "r" },
      { type: "reasoning", text: "plain" },
    ]);
  });

  it("system messages: texts joined; a non-text part is E_UNKNOWN_PART; foreign opaque parts are dropped", () => {
    expect(render([msg("s", "system", [text("a"), text("b")])])).toEqual([{ role: "system", content: "a\nb" }]);
    const err = errorOf(() => render([msg("s", "system", [text("a"), { type: "media", data: "x", mediaType: "image/png" }])]));
    expect(err.code).toBe("E_UNKNOWN_PART");
    expect(err.path).toBe("messages[0].parts[1]");
    const foreign = { type: "opaque" as const, value: { type: "server_tool_use", id: "x" }, meta: { anthropic: { wire: true } } };
    expect(render([msg("a", "assistant", [text("x"), foreign])])).toEqual([{ role: "assistant", content: [text("x")] }]);
  });

  it("media from other formats: base64 or URL out of the data, a file part for non-image types", () => {
    const out = render([
      msg("a", "user", [
        { type: "media", mediaType: "image/*", data: { type: "image_url", image_url: { url: "https://e/p.png" } } },
        { type: "media", mediaType: "application/pdf", data: { type: "base64", media_type: "application/pdf", data: "JVBER" } },
        { type: "media", data: "data:image/png;base64,iVBOR" },
      ]),
    ]);
    expect(out[0]!.content).toEqual([
      { type: "image", image: "https://e/p.png" },
      { type: "file", data: "JVBER", mediaType: "application/pdf" },
      { type: "image", image: "iVBOR", mediaType: "image/png" },
    ]);
  });
});

describe("ai-sdk: canonical messages from OpenAI Chat Completions survive a trip through the AI SDK", () => {
  /** As the openai-chat adapter parses: content null → no part, tool content string → one text part. */
  const kOpenAIShaped: Message[] = [
    msg("m0", "system", [text("You are an agent.")]),
    msg("m1", "user", [text("Fix the bug.")]),
    msg("m2", "assistant", [text("Two things at once."), call("call_1", "bash", '{"command": "ls"}'), call("call_2", "read_file", '{"path":"src/a.ts"}')]),
    msg("m3", "tool", [result("call_1", [text("a.ts\nb.ts")])]),
    msg("m4", "tool", [result("call_2", [text("")])]),
    msg("m5", "assistant", [call("call_3", "bash", '{ "command" : "pytest -x" ,"timeout": 30 }')]),
    msg("m6", "tool", [result("call_3", [])]),
    msg("m7", "assistant", [text("")]),
    msg("m8", "assistant", []),
    msg("m9", "user", [text("Thanks.")]),
  ];

  it("parse(render(canonical)) gives back the same ids, roles and parts, raw args byte for byte", () => {
    const back = parse(render(kOpenAIShaped));
    expect(withoutMeta(back)).toEqual(withoutMeta(kOpenAIShaped));
    expect((back[5]!.parts[0] as ToolCallPart).args).toBe('{ "command" : "pytest -x" ,"timeout": 30 }');
  });

  it("the same after a rebuild of the AI SDK side", () => {
    const back = parse(render(parse(render(kOpenAIShaped)), { reuse: false }));
    expect(withoutMeta(back)).toEqual(withoutMeta(kOpenAIShaped));
  });

  it("through JSON the args are normalised and the filled-in tool names stay (documented)", () => {
    const back = parse(clone(render(kOpenAIShaped)));
    expect((back[2]!.parts[1] as ToolCallPart).args).toBe('{"command":"ls"}');
    expect((back[3]!.parts[0] as ToolResultPart).name).toBe("bash");
  });
});

describe("ai-sdk: bad input", () => {
  it.each([
    ["content is a number", [{ role: "user", content: 5 }], "content"],
    ["system content is an array", [{ role: "system", content: [{ type: "text", text: "x" }] }], "content"],
    ["tool content is a string", [{ role: "tool", content: "x" }], "content"],
    ["text part text", [{ role: "user", content: [{ type: "text", text: 5 }] }], "content[0].text"],
    ["tool-call id", [{ role: "assistant", content: [{ type: "tool-call", toolCallId: 1, toolName: "f", input: {} }] }], "content[0].toolCallId"],
    ["tool-call without input or args", [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "f" }] }], "content[0].input"],
    [
      "tool-result output value",
      [{ role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "f", output: { type: "text", value: 1 } }] }],
      "content[0].output.value",
    ],
    ["tool-result without output or result", [{ role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "f" }] }], "content[0].output"],
    ["providerOptions", [{ role: "user", content: "x", providerOptions: "fast" }], "providerOptions"],
    ["image mediaType", [{ role: "user", content: [{ type: "image", image: "x", mediaType: 5 }] }], "content[0].mediaType"],
    ["role missing", [{ content: "x" }], "role"],
  ])("%s: E_SCHEMA naming messages[i] and the field", (_, input, field) => {
    const err = errorOf(() => parse([{ role: "user", content: "ok" }, ...input]));
    expect(err.code).toBe("E_SCHEMA");
    expect(err.path).toBe("messages[1]");
    expect(err.message).toContain("messages[1]");
    expect(err.message).toContain(field);
  });

  it("an unknown role is E_UNKNOWN_ROLE; a non-array is E_SCHEMA; the source names the input", () => {
    expect(errorOf(() => parse([{ role: "function", content: "x" }])).code).toBe("E_UNKNOWN_ROLE");
    expect(errorOf(() => parse({ messages: [] })).code).toBe("E_SCHEMA");
    expect(errorOf(() => parse([{ role: "user", content: 1 }], { source: "runs.jsonl:3" })).message).toMatch(/^runs\.jsonl:3: messages\[0\]/);
  });

  it("a JSON value that cannot be written as JSON is E_SCHEMA, not a TypeError", () => {
    const err = errorOf(() =>
      parse([{ role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "f", output: { type: "json", value: 10n } }] }]),
    );
    expect(err.code).toBe("E_SCHEMA");
    expect(err.path).toBe("messages[0].content[0].output.value");
  });

  it("random corruption of valid messages throws only CtxfoldErrors", () => {
    const paths = (v: unknown, at: (string | number)[] = []): (string | number)[][] => {
      if (typeof v !== "object" || v === null) return [at];
      const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
      return [at, ...keys.flatMap((k) => paths((v as Record<string | number, unknown>)[k], [...at, k]))];
    };
    const base = [...kV5, ...kV4];
    const all = paths(base).filter((p) => p.length > 1);
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.constant(undefined)), (path, value) => {
        const wire = clone(base);
        let at: Record<string | number, unknown> = wire as unknown as Record<string | number, unknown>;
        for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
        at[path[path.length - 1]!] = value;
        try {
          render(parse(wire), { reuse: false });
        } catch (e) {
          if (!CtxfoldError.isInstance(e)) throw e;
        }
      }),
      { numRuns: 500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Generated conversations.

const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const word = fc.string({ maxLength: 12, unit: "grapheme" });
const optionKey = fc.constantFrom("signature", "redactedData", "cacheControl", "itemId", "x");
const providerOptions = fc.dictionary(fc.constantFrom("anthropic", "openai", "google"), fc.dictionary(optionKey, fc.oneof(word, json), { maxKeys: 2 }), {
  maxKeys: 2,
});
const extra = { providerOptions, x_unknown: json };
const opt = <T extends Record<string, fc.Arbitrary<unknown>>>(required: T, optional: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record({ ...required, ...optional }, { requiredKeys: Object.keys(required) as (keyof T & string)[] });

const textPart = opt({ type: fc.constant("text"), text: word }, extra);
const imagePart = opt({ type: fc.constant("image"), image: word }, { mediaType: fc.constantFrom("image/png", "application/pdf"), ...extra });
const imagePartV4 = opt({ type: fc.constant("image"), image: word, mimeType: fc.constant("image/jpeg") }, {});
const filePart = opt({ type: fc.constant("file"), data: word, mediaType: fc.constantFrom("application/pdf", "image/png") }, { filename: word, ...extra });
const filePartV4 = opt({ type: fc.constant("file"), data: word, mimeType: fc.constant("text/plain") }, { filename: word });
const reasoningPart = opt({ type: fc.constant("reasoning"), text: fc.oneof(word, fc.constant("")) }, { signature: word, ...extra });
const redactedPart = opt({ type: fc.constant("redacted-reasoning"), data: word }, extra);
const toolCall5 = opt({ type: fc.constant("tool-call"), toolCallId: word, toolName: word, input: json }, { providerExecuted: fc.boolean(), ...extra });
const toolCall4 = opt({ type: fc.constant("tool-call"), toolCallId: word, toolName: word, args: json }, extra);
const item = fc.oneof(
  opt({ type: fc.constant("text"), text: word }, { x_unknown: json }),
  opt({ type: fc.constant("media"), data: word, mediaType: fc.constant("image/png") }, {}),
  fc.record({ type: fc.constant("image-url"), url: word }),
);
const itemV4 = fc.oneof(
  opt({ type: fc.constant("text"), text: word }, {}),
  opt({ type: fc.constant("image"), data: word }, { mimeType: fc.constant("image/png") }),
);
const output = fc.oneof(
  opt({ type: fc.constantFrom("text", "error-text"), value: word }, { providerOptions }),
  opt({ type: fc.constantFrom("json", "error-json"), value: json }, { providerOptions }),
  fc.record({ type: fc.constant("content"), value: fc.array(item, { maxLength: 3 }) }),
  opt({ type: fc.constant("execution-denied") }, { reason: word }),
);
const toolResult5 = opt({ type: fc.constant("tool-result"), toolCallId: word, toolName: word, output }, extra);
const toolResult4 = opt(
  { type: fc.constant("tool-result"), toolCallId: word, toolName: word, result: json },
  { isError: fc.boolean(), experimental_content: fc.array(itemV4, { maxLength: 2 }), ...extra },
);
const unknownPart = fc.record({ type: fc.constantFrom("tool-approval-request", "source"), approvalId: word });

const userPart = fc.oneof(textPart, imagePart, imagePartV4, filePart, filePartV4, unknownPart);
const assistantPart = fc.oneof(textPart, filePart, reasoningPart, redactedPart, toolCall5, toolCall4, toolResult5, unknownPart);
const toolPart = fc.oneof({ weight: 4, arbitrary: toolResult5 }, { weight: 2, arbitrary: toolResult4 }, { weight: 1, arbitrary: unknownPart });
const messageExtra = { providerOptions, x_unknown: json };
const message = fc.oneof(
  opt({ role: fc.constant("system"), content: word }, messageExtra),
  opt({ role: fc.constant("user"), content: fc.oneof(word, fc.array(userPart, { maxLength: 4 })) }, messageExtra),
  opt({ role: fc.constant("assistant"), content: fc.oneof(word, fc.array(assistantPart, { maxLength: 5 })) }, messageExtra),
  opt({ role: fc.constant("tool"), content: fc.array(toolPart, { maxLength: 4 }) }, messageExtra),
);
const conversation = fc.array(message, { maxLength: 12 });

describe("ai-sdk: generated conversations", () => {
  it("render(parse(x), { reuse: false }) deep-equals x and reuse is byte-identical", () => {
    fc.assert(
      fc.property(conversation, (x) => {
        expectRoundTrips(x);
      }),
      { numRuns: 300 },
    );
  });

  it("the canonical form is stable: parse(render(parse(x))) equals parse(x)", () => {
    fc.assert(
      fc.property(conversation, (x) => {
        const once = parse(x);
        expect(parse(render(once, { reuse: false }))).toEqual(once);
      }),
      { numRuns: 200 },
    );
  });
});
