import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kRawArgs } from "../../src/adapters/common.js";
import { langchainAdapter, type LangchainWire } from "../../src/adapters/langchain.js";
import { CtxfoldError } from "../../src/errors.js";
import { clone, errorOf, withoutMeta } from "./helpers.js";
import type { Message, Part, ToolCallPart, ToolResultPart } from "../../src/model/schema.js";

const { parse, render } = langchainAdapter;

/** Messages as Python's model_dump() writes them (every field, nulls included) and sparser JS-style dicts. */
const kDicts: LangchainWire = [
  { content: "You are terse.", additional_kwargs: {}, response_metadata: {}, type: "system", name: null, id: null },
  { content: "List the files.", additional_kwargs: {}, response_metadata: {}, type: "human", name: null, id: "h-1", example: false },
  {
    content: "",
    additional_kwargs: { tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: '{"command": "ls"}' } }], refusal: null },
    response_metadata: { finish_reason: "tool_calls", model_name: "gpt-4o" },
    type: "ai",
    name: null,
    id: "run-1",
    example: false,
    tool_calls: [{ name: "bash", args: { command: "ls" }, id: "call_1", type: "tool_call" }],
    invalid_tool_calls: [],
    usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  },
  {
    content: "a.txt\nb.txt",
    additional_kwargs: {},
    response_metadata: {},
    type: "tool",
    name: "bash",
    id: null,
    tool_call_id: "call_1",
    artifact: null,
    status: "success",
  },
  {
    content: [
      { type: "text", text: "Reading." },
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } },
    ],
    type: "ai",
    id: "run-2",
    tool_calls: [{ name: "read", args: { path: "a" }, id: "toolu_1", type: "tool_call" }],
  },
  { content: "ENOENT", type: "tool", tool_call_id: "toolu_1", status: "error", name: "read" },
  {
    content: [
      { type: "thinking", thinking: "hmm", signature: "s" },
      { type: "reasoning", reasoning: "standard", extras: { signature: "sig" } },
      "a bare string",
      { type: "text", text: "x", annotations: [] },
    ],
    type: "ai",
    tool_calls: [],
  },
  {
    content: [
      { type: "text", text: "see" },
      { type: "image_url", image_url: { url: "https://e/a.png", detail: "low" } },
      { type: "image", source_type: "base64", data: "iVBOR", mime_type: "image/png" },
    ],
    type: "human",
  },
  { content: [{ type: "text", text: "one block" }], type: "human" },
  { content: "no tool_calls field", type: "ai" },
  {
    content: "",
    type: "ai",
    tool_calls: [{ name: "f", args: {}, id: null }],
    invalid_tool_calls: [{ name: "g", args: "{bad", id: "x", error: "bad json", type: "invalid_tool_call" }],
  },
  {
    content: [
      { type: "text", text: "tool blocks" },
      { type: "reasoning", reasoning: "r" },
    ],
    type: "tool",
    tool_call_id: "c9",
    artifact: { rows: 3 },
  },
  { type: "AIMessageChunk", content: "streamed", tool_call_chunks: [], tool_calls: [] },
  { content: [], type: "ai", tool_calls: [{ name: "g", args: { n: 1 }, id: "c10" }] },
];

/** OpenAI-style role keys, as convert_to_messages accepts them. */
const kRoleDicts: LangchainWire = [
  { role: "system", content: "s" },
  { role: "developer", content: "d" },
  { role: "user", content: "u" },
  { role: "assistant", content: "", tool_calls: [{ name: "f", args: { a: 1 }, id: "c1" }] },
  { role: "tool", content: "r", tool_call_id: "c1" },
  { role: "human", content: "h", type: "chat" },
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
  expect(JSON.stringify(render(parse(JSON.parse(json))))).toBe(json);
}

describe("langchain: hand-written conversations round-trip", () => {
  it.each([
    ["type-keyed dicts", kDicts],
    ["role-keyed dicts", kRoleDicts],
  ])("%s: rebuilt deep-equals the input, reused is byte-identical", (_, wire) => {
    expectRoundTrips(clone(wire));
  });

  it("reuse hands back the very parsed objects; a touched message is rebuilt", () => {
    const wire = clone(kDicts);
    const messages = parse(wire);
    render(messages).forEach((m, i) => expect(m).toBe(wire[i]));
    messages[3] = { ...messages[3]!, parts: [{ ...(messages[3]!.parts[0] as ToolResultPart), content: [text("[compacted]")] }] };
    const out = render(messages);
    expect(out[3]).not.toBe(wire[3]);
    expect(out[3]).toEqual({ ...wire[3], content: "[compacted]" });
    expect(out[2]).toBe(wire[2]);
  });
});

describe("langchain: what parse makes", () => {
  const messages = parse(clone(kDicts));

  it("a string id is the canonical id; otherwise m<i>", () => {
    expect(messages.map((m) => m.id)).toEqual(["m0", "h-1", "run-1", "m3", "run-2", "m5", "m6", "m7", "m8", "m9", "m10", "m11", "m12", "m13"]);
    expect(messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "user",
      "user",
      "assistant",
      "assistant",
      "tool",
      "assistant",
      "assistant",
    ]);
  });

  it("AI messages: content parts, then tool calls; raw args from additional_kwargs when they match", () => {
    expect(messages[2]!.parts).toEqual([text(""), call("call_1", "bash", '{"command": "ls"}')]);
    expect(messages[2]!.meta.langchain).toMatchObject({
      id: true,
      fields: { name: null, example: false, invalid_tool_calls: [], usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } },
    });
    expect(messages[4]!.parts).toEqual([
      text("Reading."),
      { type: "opaque", value: { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } }, meta: { langchain: { wire: true } } },
      call("toolu_1", "read", '{"path":"a"}'),
    ]);
    expect(messages[9]!.meta.langchain).toMatchObject({ noCalls: true });
    expect(messages[10]!.parts[1]).toEqual({
      type: "tool-call",
      id: "",
      name: "f",
      args: "{}",
      meta: { langchain: { noId: true, noType: true, fields: { id: null } } },
    });
    expect(messages[13]!.parts).toEqual([{ ...call("c10", "g", '{"n":1}'), meta: { langchain: { noType: true } } }]);
  });

  it("tool messages: one result, name, status as isError", () => {
    expect(messages[3]!.parts).toEqual([result("call_1", [text("a.txt\nb.txt")], { name: "bash", isError: false })]);
    expect(messages[3]!.meta.langchain).toMatchObject({ fields: { additional_kwargs: {}, response_metadata: {}, id: null, artifact: null } });
    expect(messages[5]!.parts).toEqual([result("toolu_1", [text("ENOENT")], { name: "read", isError: true })]);
    const blocks = (messages[11]!.parts[0] as ToolResultPart).content;
    expect(blocks).toEqual([text("tool blocks"), { type: "opaque", value: { type: "reasoning", reasoning: "r" }, meta: { langchain: { wire: true } } }]);
  });

  it("content blocks: text, bare strings, reasoning, image_url; others opaque", () => {
    expect(messages[6]!.parts).toEqual([
      { type: "opaque", value: { type: "thinking", thinking: "hmm", signature: "s" }, meta: { langchain: { wire: true } } },
      { type: "reasoning", text: "standard", signature: "sig", meta: { langchain: { fields: { extras: { signature: "sig" } } } } },
      { type: "text", text: "a bare string", meta: { langchain: { bare: true } } },
      { type: "text", text: "x", meta: { langchain: { fields: { annotations: [] } } } },
    ]);
    expect(messages[7]!.parts[1]).toEqual({ type: "media", data: { url: "https://e/a.png", detail: "low" }, meta: { langchain: { wire: true } } });
    expect(messages[7]!.parts[2]).toMatchObject({ type: "opaque" });
    expect(messages[8]!.meta.langchain).toEqual({ content: "array" });
  });

  it("role keys and their spellings; *MessageChunk types", () => {
    const roles = parse(clone(kRoleDicts));
    expect(roles.map((m) => m.role)).toEqual(["system", "system", "user", "assistant", "tool", "user"]);
    expect(roles[1]!.meta.langchain).toEqual({ key: "role", kind: "developer" });
    expect(roles[5]!.meta.langchain).toEqual({ key: "role", fields: { type: "chat" } });
    expect(messages[12]!.meta.langchain).toMatchObject({ kind: "AIMessageChunk", fields: { tool_call_chunks: [] } });
  });
});

describe("langchain: rendering canonical messages from other formats", () => {
  it("type keys, no ids, a lone text part as a string, AI messages always with tool_calls", () => {
    const out = render([
      msg("m0", "system", [text("s")]),
      msg("m1", "user", [text("u")]),
      msg("m2", "assistant", [text("Two."), call("c1", "bash", '{"command": "ls"}'), call("c2", "f", "[1]")]),
      msg("m3", "tool", [result("c1", [text("ok")], { name: "bash", isError: true })]),
      msg("m4", "tool", [result("c2", [])]),
      msg("m5", "assistant", [text("done")]),
      msg("m6", "assistant", []),
    ]);
    expect(out).toEqual([
      { type: "system", content: "s" },
      { type: "human", content: "u" },
      {
        type: "ai",
        content: "Two.",
        tool_calls: [
          { name: "bash", args: { command: "ls" }, id: "c1", type: "tool_call" },
          { name: "f", args: {}, id: "c2", type: "tool_call" },
        ],
      },
      { type: "tool", content: "ok", tool_call_id: "c1", name: "bash", status: "error" },
      { type: "tool", content: [], tool_call_id: "c2" },
      { type: "ai", content: "done", tool_calls: [] },
      { type: "ai", content: [], tool_calls: [] },
    ]);
    expect((out[2]!.tool_calls![0]!.args as Record<symbol, unknown>)[kRawArgs]).toBe('{"command": "ls"}');
  });

  it("a tool message with several results renders one tool message each", () => {
    const out = render([msg("m0", "tool", [result("a", [text("1")]), result("b", [text("2")])])]);
    expect(out).toEqual([
      { type: "tool", content: "1", tool_call_id: "a" },
      { type: "tool", content: "2", tool_call_id: "b" },
    ]);
  });

  it("parts with no LangChain place are E_UNKNOWN_PART naming where", () => {
    for (const [m, path] of [
      [msg("m0", "user", [text("x"), call("c", "f", "{}")]), "messages[0].parts[1]"],
      [msg("m0", "assistant", [result("c", [])]), "messages[0].parts[0]"],
      [msg("m0", "tool", [text("x")]), "messages[0].parts[0]"],
      [msg("m0", "tool", []), "messages[0].parts"],
    ] as const) {
      const err = errorOf(() => render([m]));
      expect(err.code).toBe("E_UNKNOWN_PART");
      expect(err.path).toBe(path);
    }
  });

  it("reasoning as standard blocks, foreign opaque parts dropped, foreign media as image_url { url }", () => {
    const out = render([
      msg("m0", "assistant", [
        { type: "reasoning", text: "t", signature: "s" },
        { type: "reasoning", redacted: "r" },
        { type: "opaque", value: { type: "server_tool_use" }, meta: { anthropic: { wire: true } } },
      ]),
      msg("m1", "user", [{ type: "media", mediaType: "image/png", data: { type: "base64", media_type: "image/png", data: "iVBOR" } }]),
    ]);
    expect(out).toEqual([
      {
        type: "ai",
        content: [
          { type: "reasoning", reasoning: "t", extras: { signature: "s" } },
          { type: "reasoning", extras: { redacted: "r" } },
        ],
        tool_calls: [],
      },
      { type: "human", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } }] },
    ]);
    expect(parse(out)[0]!.parts.map(({ meta: _, ...p }) => p)).toEqual([
      { type: "reasoning", text: "t", signature: "s" },
      { type: "reasoning", redacted: "r" },
    ]);
  });
});

describe("langchain: canonical messages from OpenAI Chat Completions survive a trip through LangChain", () => {
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

  it("the same after a rebuild of the LangChain side", () => {
    const back = parse(render(parse(render(kOpenAIShaped)), { reuse: false }));
    expect(withoutMeta(back)).toEqual(withoutMeta(kOpenAIShaped));
  });

  it("through JSON the args are normalised (documented)", () => {
    const back = parse(clone(render(kOpenAIShaped)));
    expect((back[2]!.parts[1] as ToolCallPart).args).toBe('{"command":"ls"}');
  });
});

describe("langchain: bad input", () => {
  it.each([
    ["content is a number", { type: "human", content: 5 }, "content"],
    ["content is null", { type: "ai", content: null }, "content"],
    ["text block text", { type: "human", content: [{ type: "text", text: 5 }] }, "content[0]"],
    ["tool_call_id missing", { type: "tool", content: "x" }, "tool_call_id"],
    ["tool call args a string", { type: "ai", content: "", tool_calls: [{ name: "f", args: "{}", id: "c" }] }, "tool_calls[0].args"],
    ["tool call name", { type: "ai", content: "", tool_calls: [{ name: 1, args: {}, id: "c" }] }, "tool_calls[0].name"],
    ["status", { type: "tool", content: "x", tool_call_id: "c", status: "weird" }, "status"],
    ["id a number", { type: "human", content: "x", id: 7 }, "id"],
    ["additional_kwargs a string", { type: "human", content: "x", additional_kwargs: "y" }, "additional_kwargs"],
    ["type missing", { content: "x" }, "type"],
    ["role not a string", { role: 3, content: "x" }, "role"],
  ])("%s: E_SCHEMA naming messages[i] and the field", (_, bad, field) => {
    const err = errorOf(() => parse([{ type: "human", content: "ok" }, bad]));
    expect(err.code).toBe("E_SCHEMA");
    expect(err.path).toBe("messages[1]");
    expect(err.message).toContain("messages[1]");
    expect(err.message).toContain(field);
  });

  it("unknown kinds are E_UNKNOWN_ROLE; a non-array or non-object is E_SCHEMA", () => {
    for (const kind of [
      { type: "function", content: "x", name: "f" },
      { type: "chat", role: "critic", content: "x" },
      { type: "remove", id: "x" },
      { type: "constructor", lc: 1 },
    ]) {
      expect(errorOf(() => parse([kind])).code).toBe("E_UNKNOWN_ROLE");
    }
    expect(errorOf(() => parse("x")).code).toBe("E_SCHEMA");
    expect(errorOf(() => parse([null])).path).toBe("messages[0]");
  });

  it("random corruption of valid messages throws only CtxfoldErrors", () => {
    const paths = (v: unknown, at: (string | number)[] = []): (string | number)[][] => {
      if (typeof v !== "object" || v === null) return [at];
      const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
      return [at, ...keys.flatMap((k) => paths((v as Record<string | number, unknown>)[k], [...at, k]))];
    };
    const base = [...kDicts, ...kRoleDicts];
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
const jsonObject = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>);
const word = fc.string({ maxLength: 12, unit: "grapheme" });
const opt = <T extends Record<string, fc.Arbitrary<unknown>>>(required: T, optional: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record({ ...required, ...optional }, { requiredKeys: Object.keys(required) as (keyof T & string)[] });

const block = fc.oneof(
  word,
  opt({ type: fc.constant("text"), text: word }, { id: word, annotations: fc.constant([]) }),
  opt({ type: fc.constant("image_url"), image_url: fc.oneof(word, opt({ url: word }, { detail: fc.constantFrom("low", "high") })) }, {}),
  opt({ type: fc.constant("reasoning") }, { reasoning: word, extras: fc.record({ signature: word }, { requiredKeys: [] }), id: word }),
  opt({ type: fc.constantFrom("tool_use", "thinking", "image") }, { id: word, thinking: word, input: jsonObject }),
);
const content = fc.oneof(word, fc.array(block, { maxLength: 4 }));
const toolCall = opt({ name: word, args: jsonObject }, { id: fc.oneof(word, fc.constant(null)), type: fc.constant("tool_call") });
const common = {
  id: fc.oneof(word, fc.constant(null)),
  name: fc.oneof(word, fc.constant(null)),
  additional_kwargs: jsonObject,
  response_metadata: jsonObject,
  x_unknown: json,
};
const kindOf = (names: string[]) => fc.oneof(fc.record({ type: fc.constantFrom(...names) }), fc.record({ role: fc.constantFrom(...names) }));
const withKind = (names: string[], body: fc.Arbitrary<Record<string, unknown>>) => fc.tuple(kindOf(names), body).map(([k, b]) => ({ ...k, ...b }));
const message = fc.oneof(
  withKind(["system", "developer"], opt({ content }, common)),
  withKind(["human", "user", "HumanMessageChunk"], opt({ content }, { ...common, example: fc.boolean() })),
  withKind(
    ["ai", "assistant", "AIMessageChunk"],
    opt(
      { content },
      {
        ...common,
        tool_calls: fc.array(toolCall, { maxLength: 3 }),
        invalid_tool_calls: fc.array(jsonObject, { maxLength: 1 }),
        usage_metadata: fc.oneof(jsonObject, fc.constant(null)),
      },
    ),
  ),
  withKind(["tool", "ToolMessageChunk"], opt({ content, tool_call_id: word }, { ...common, status: fc.constantFrom("success", "error"), artifact: json })),
);
const conversation = fc.array(message, { maxLength: 12 });

describe("langchain: generated conversations", () => {
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
