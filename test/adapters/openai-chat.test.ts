import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mediaSource } from "../../src/adapters/media.js";
import { openaiChatAdapter, type OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { CtxfoldError } from "../../src/errors.js";
import { clone, compact, opt, str, withExtras } from "./helpers.js";
import { generateRun } from "../../src/gen/run.js";
import { Message as MessageSchema, type Message, type Part } from "../../src/model/schema.js";

const { parse, render } = openaiChatAdapter;

/** Both round-trip properties on one wire conversation. */
function expectRoundTrip(x: unknown[]): void {
  const json = JSON.stringify(x);
  expect(render(parse(x), { reuse: false })).toEqual(x);
  const again = JSON.parse(json) as unknown[];
  expect(JSON.stringify(render(parse(again)))).toBe(json);
}

function expectError(fn: () => unknown, code: string, ...fragments: string[]): CtxfoldError {
  try {
    fn();
  } catch (e) {
    expect(CtxfoldError.isInstance(e), String(e)).toBe(true);
    const err = e as CtxfoldError;
    expect(err.code).toBe(code);
    for (const f of fragments) expect(err.message).toContain(f);
    return err;
  }
  throw new Error("expected an error");
}

// A conversation that uses every wire feature of Chat Completions.
const kEverything: OpenAIChatMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "developer", content: [{ type: "text", text: "Prefer tools." }], name: "policy" },
  { role: "user", content: "What is in the picture and the recording?", name: "ada" },
  {
    role: "user",
    content: [
      { type: "text", text: "look", cache_control: { type: "ephemeral" } },
      { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
      { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
      { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
      { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
      { type: "file", file: { file_id: "file-123" } },
      { type: "video_url", video_url: { url: "https://example.com/v.mp4" } },
    ],
  },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
      { id: "call_2", type: "function", function: { name: "bash", arguments: "{not json", strict: true }, index: 1 },
      { id: "call_3", type: "custom", custom: { name: "patch", input: "*** Begin Patch" } },
      { id: "call_4", type: "mcp", mcp: { server: "s" } },
    ],
  },
  { role: "tool", tool_call_id: "call_1", content: "hello" },
  { role: "tool", tool_call_id: "call_2", content: "" },
  {
    role: "tool",
    tool_call_id: "call_3",
    content: [
      { type: "text", text: "applied" },
      { type: "text", text: "ok" },
    ],
    x_duration_ms: 12,
  },
  { role: "tool", tool_call_id: "call_4", content: null },
  { role: "assistant", content: "", tool_calls: [{ id: "call_5", type: "function", function: { name: "ls", arguments: "" } }] },
  { role: "tool", tool_call_id: "call_5", content: [] },
  { role: "assistant", tool_calls: [{ id: "call_6", type: "function", function: { name: "ls", arguments: "{}" } }] },
  { role: "tool", tool_call_id: "call_6", content: "." },
  { role: "assistant", content: null, function_call: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
  { role: "function", name: "get_weather", content: "rain" },
  { role: "function", name: "never_called", content: null },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Part one." },
      { type: "refusal", refusal: "Not that." },
    ],
    refusal: null,
  },
  { role: "assistant", content: null, refusal: "I can't help with that." },
  { role: "assistant", content: "Done.", name: "bot", audio: { id: "audio_1" }, reasoning_content: "thought", tool_calls: [], function_call: null },
  { role: "assistant", content: "x", tool_calls: null },
  { role: "assistant", content: [] },
  { role: "user", content: "" },
  { role: "user" },
];

describe("openai-chat: parsing every wire feature", () => {
  const messages = parse(kEverything);

  it("makes one canonical message per wire message, ids m<i>, valid against the canonical schema", () => {
    expect(messages.map((m) => m.id)).toEqual(kEverything.map((_, i) => `m${i}`));
    for (const m of messages) expect(MessageSchema.safeParse(m).success).toBe(true);
  });

  it("maps roles: developer is system with the wire role in meta, function messages are tool", () => {
    expect(messages.map((m) => m.role).slice(0, 6)).toEqual(["system", "system", "user", "user", "assistant", "tool"]);
    expect(messages[1]!.meta["openai-chat"]).toMatchObject({ role: "developer", content: "array", fields: { name: "policy" } });
    expect(messages[0]!.meta).toEqual({});
    expect(messages[15]!.role).toBe("tool");
  });

  it("reads content parts: text, media with the wire part as data, unknown types as opaque", () => {
    const parts = messages[3]!.parts;
    expect(parts.map((p) => p.type)).toEqual(["text", "media", "media", "media", "media", "media", "opaque"]);
    expect(parts[0]).toEqual({ type: "text", text: "look", meta: { "openai-chat": { fields: { cache_control: { type: "ephemeral" } } } } });
    expect(parts.slice(1, 6).map((p) => (p.type === "media" ? p.mediaType : null))).toEqual([
      "image/*",
      "image/jpeg",
      "audio/wav",
      "application/pdf",
      undefined,
    ]);
    expect((parts[1] as { data: unknown }).data).toBe((kEverything[3]!.content as unknown[])[1]);
    expect((parts[6] as { value: unknown }).value).toBe((kEverything[3]!.content as unknown[])[6]);
  });

  it("reads parallel tool calls with raw argument strings, carrying unknown fields, custom and unknown call types", () => {
    const parts = messages[4]!.parts;
    expect(parts).toHaveLength(4);
    expect(parts[0]).toEqual({ type: "tool-call", id: "call_1", name: "read_file", args: '{"path":"a.txt"}' });
    expect(parts[1]).toEqual({
      type: "tool-call",
      id: "call_2",
      name: "bash",
      args: "{not json",
      meta: { "openai-chat": { fields: { index: 1 }, fnFields: { strict: true } } },
    });
    expect(parts[2]).toMatchObject({ type: "tool-call", id: "call_3", name: "patch", args: "*** Begin Patch", meta: { "openai-chat": { custom: true } } });
    expect(parts[3]).toMatchObject({ type: "opaque", value: { id: "call_4", type: "mcp" } });
    // content null with tool calls is the plain rendering: no shape hint needed
    expect(messages[4]!.meta).toEqual({});
  });

  it("reads tool messages as one ToolResultPart each, keeping empty and null content apart", () => {
    expect(messages[5]!.parts).toEqual([{ type: "tool-result", callId: "call_1", content: [{ type: "text", text: "hello" }] }]);
    expect(messages[6]!.parts).toEqual([{ type: "tool-result", callId: "call_2", content: [{ type: "text", text: "" }] }]);
    expect(messages[7]!.parts[0]).toMatchObject({
      callId: "call_3",
      content: [{ text: "applied" }, { text: "ok" }],
      meta: { "openai-chat": { content: "array", fields: { x_duration_ms: 12 } } },
    });
    expect(messages[8]!.parts[0]).toMatchObject({ callId: "call_4", content: [], meta: { "openai-chat": { content: "null" } } });
    expect(messages[10]!.parts[0]).toMatchObject({ callId: "call_5", content: [], meta: { "openai-chat": { content: "array" } } });
  });

  it("keeps content null, absent and empty string apart on assistant messages", () => {
    expect(messages[9]!.parts[0]).toEqual({ type: "text", text: "" });
    expect(messages[11]!.parts.map((p) => p.type)).toEqual(["tool-call"]);
    expect(messages[11]!.meta["openai-chat"]).toEqual({ content: "absent" });
    expect(messages[17]!.parts).toEqual([]);
    expect(messages[17]!.meta["openai-chat"]).toEqual({ content: "null", fields: { refusal: "I can't help with that." } });
  });

  it("gives a legacy function_call a made-up id that its function message answers", () => {
    expect(messages[13]!.parts).toEqual([
      { type: "tool-call", id: "fc_m13", name: "get_weather", args: '{"city":"Oslo"}', meta: { "openai-chat": { functionCall: true } } },
    ]);
    expect(messages[14]!.parts[0]).toMatchObject({ type: "tool-result", callId: "fc_m13", name: "get_weather", content: [{ text: "rain" }] });
    expect(messages[15]!.parts[0]).toMatchObject({ callId: "fc_unknown_m15", name: "never_called", content: [], meta: { "openai-chat": { function: true } } });
  });

  it("reads refusal parts as text marked in meta and carries refusal, name, audio and unknown fields", () => {
    expect(messages[16]!.parts[1]).toEqual({ type: "text", text: "Not that.", meta: { "openai-chat": { refusal: true } } });
    expect(messages[18]!.meta["openai-chat"]).toEqual({
      fields: { name: "bot", audio: { id: "audio_1" }, reasoning_content: "thought", tool_calls: [], function_call: null },
    });
  });

  it("round-trips it: rebuilt deep-equal, reused byte-identical", () => {
    expectRoundTrip(kEverything);
  });
});

describe("openai-chat: reuse of untouched messages", () => {
  it("hands back the very parsed objects, rebuilds edited ones, and rebuilds all with reuse:false", () => {
    const wire = clone(kEverything);
    const messages = parse(wire);
    const out = render(messages);
    out.forEach((m, i) => expect(m).toBe(wire[i]));
    const edited = messages.slice();
    edited[0] = { ...messages[0]!, parts: [{ type: "text", text: "You are verbose." }] };
    const out2 = render(edited);
    expect(out2[0]).toEqual({ role: "system", content: "You are verbose." });
    expect(out2[1]).toBe(wire[1]);
    const rebuilt = render(messages, { reuse: false });
    rebuilt.forEach((m, i) => expect(m).not.toBe(wire[i]));
  });

  it("does not reuse a parse of another format's adapter or a message moved out of its group", () => {
    const wire = [{ role: "user", content: "a" }];
    const [m] = parse(wire);
    const copy: Message = { ...m!, parts: m!.parts };
    expect(render([copy])[0]).not.toBe(wire[0]);
    expect(render([copy])[0]).toEqual(wire[0]);
  });
});

describe("openai-chat: rendering canonical messages from elsewhere", () => {
  const text = (t: string): Part => ({ type: "text", text: t });

  it("renders several results of one tool message as several tool messages, dropping isError", () => {
    const out = render([
      {
        id: "a",
        role: "assistant",
        parts: [
          { type: "tool-call", id: "c1", name: "f", args: "{}" },
          { type: "tool-call", id: "c2", name: "g", args: "{}" },
        ],
        meta: {},
      },
      {
        id: "t",
        role: "tool",
        parts: [
          { type: "tool-result", callId: "c1", content: [{ type: "text", text: "one" }], isError: true },
          {
            type: "tool-result",
            callId: "c2",
            content: [
              { type: "text", text: "a" },
              { type: "text", text: "b" },
            ],
          },
        ],
        meta: {},
      },
    ]);
    expect(out).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "g", arguments: "{}" } },
        ],
      },
      { role: "tool", content: "one", tool_call_id: "c1" },
      {
        role: "tool",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
        tool_call_id: "c2",
      },
    ]);
  });

  it("drops reasoning and foreign opaque parts, keeps text; no text and no calls is an empty string", () => {
    const out = render([
      {
        id: "a",
        role: "assistant",
        parts: [
          { type: "reasoning", text: "hmm", signature: "sig" },
          text("Answer."),
          { type: "opaque", value: { type: "server_tool_use" }, meta: { anthropic: {} } },
        ],
        meta: {},
      },
      { id: "b", role: "assistant", parts: [{ type: "reasoning", redacted: "xxx" }], meta: {} },
      { id: "c", role: "user", parts: [], meta: {} },
    ]);
    expect(out).toEqual([
      { role: "assistant", content: "Answer." },
      { role: "assistant", content: "" },
      { role: "user", content: "" },
    ]);
  });

  it("renders results inside a user message as tool messages in place and a tool message's stray text as a user message", () => {
    const out = render([
      { id: "u", role: "user", parts: [{ type: "tool-result", callId: "c1", content: [] }, text("next please")], meta: {} },
      { id: "t", role: "tool", parts: [{ type: "tool-result", callId: "c2", content: [text("r")] }, text("note")], meta: {} },
    ]);
    expect(out).toEqual([
      { role: "tool", content: "", tool_call_id: "c1" },
      { role: "user", content: "next please" },
      { role: "tool", content: "r", tool_call_id: "c2" },
      { role: "user", content: "note" },
    ]);
  });

  it("renders foreign media from URLs, data URLs and base64, and refuses data it cannot read", () => {
    const out = render([
      {
        id: "u",
        role: "user",
        parts: [
          text("see"),
          { type: "media", mediaType: "image/png", data: "iVBORw0KGgo=" },
          { type: "media", mediaType: "image/png", data: { type: "url", url: "https://x.test/a.png" } },
          { type: "media", mediaType: "audio/mpeg", data: { type: "base64", media_type: "audio/mpeg", data: "SUQz" } },
          { type: "media", mediaType: "application/pdf", data: "JVBERi0=" },
          { type: "media", data: { type: "input_image", image_url: "https://x.test/b.png", detail: "auto" } },
        ],
        meta: {},
      },
    ]);
    expect(out[0]!.content).toEqual([
      { type: "text", text: "see" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      { type: "image_url", image_url: { url: "https://x.test/a.png" } },
      { type: "input_audio", input_audio: { data: "SUQz", format: "mp3" } },
      { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=" } },
      { type: "image_url", image_url: { url: "https://x.test/b.png" } },
    ]);
    expectError(() => render([{ id: "u", role: "user", parts: [{ type: "media", data: 42 }], meta: {} }]), "E_UNKNOWN_PART", "messages[0].parts[0]");
    expect(mediaSource({ type: "media", mediaType: "image/*", data: "data:image/gif;base64,R0lG" })).toEqual({
      url: "data:image/gif;base64,R0lG",
      mediaType: "image/gif",
    });
  });

  it("refuses a tool call on a user message", () => {
    expectError(
      () => render([{ id: "u", role: "user", parts: [{ type: "tool-call", id: "c", name: "f", args: "" }], meta: {} }]),
      "E_UNKNOWN_PART",
      "messages[0].parts[0]",
    );
  });

  it("writes a legacy function call back as function_call only when it is still the one it was", () => {
    const [a, f] = parse([
      { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } },
      { role: "function", name: "f", content: "r" },
    ]);
    const out = render([{ ...a!, parts: [...a!.parts, { type: "tool-call", id: "c9", name: "g", args: "{}" }] }, f!]);
    expect(out).toEqual([
      {
        role: "assistant",
        content: null,
        function_call: { name: "f", arguments: "{}" },
        tool_calls: [{ id: "c9", type: "function", function: { name: "g", arguments: "{}" } }],
      },
      { role: "function", name: "f", content: "r" },
    ]);
  });
});

describe("openai-chat: bad input", () => {
  it("rejects a non-array with E_SCHEMA at messages", () => {
    expectError(() => parse({ messages: [] }), "E_SCHEMA", "messages", "expected array");
  });

  it("names the message and the field of a wrong type", () => {
    expectError(
      () =>
        parse([
          { role: "user", content: "hi" },
          { role: "assistant", content: 5 },
        ]),
      "E_SCHEMA",
      "messages[1]",
      "content",
    );
    expectError(() => parse([{ role: "tool", tool_call_id: 7, content: "x" }]), "E_SCHEMA", "messages[0]", "tool_call_id");
    const err = expectError(
      () => parse([{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: 3, arguments: "{}" } }] }]),
      "E_SCHEMA",
      "messages[0]",
      "tool_calls[0].function.name",
    );
    expect(err.path).toBe("messages[0]");
    expectError(() => parse([{ role: "user", content: [{ type: "image_url", image_url: {} }] }]), "E_SCHEMA", "content[0].image_url.url");
    expectError(() => parse([{ role: "function", content: "x" }]), "E_SCHEMA", "messages[0]", "name");
    expectError(() => parse(["hello"]), "E_SCHEMA", "messages[0]");
    expectError(() => parse([{ content: "x" }]), "E_SCHEMA", "messages[0]", "role");
    expectError(() => parse([{ role: "user", content: "x" }, null]), "E_SCHEMA", "messages[1]");
  });

  it("puts the source in front of the path", () => {
    const err = expectError(() => parse([{ role: "user", content: 1 }], { source: "runs.jsonl:12" }), "E_SCHEMA", "runs.jsonl:12: messages[0]");
    expect(err.path).toBe("runs.jsonl:12: messages[0]");
  });

  it("rejects an unknown role with E_UNKNOWN_ROLE", () => {
    expectError(() => parse([{ role: "critic", content: "x" }]), "E_UNKNOWN_ROLE", "messages[0].role", "critic");
    expectError(() => parse([{ role: "constructor", content: "x" }]), "E_UNKNOWN_ROLE");
  });

  it("never throws anything but a CtxfoldError on arbitrary input", () => {
    const mutated = fc
      .tuple(fc.constantFrom(...kEverything), fc.constantFrom("role", "content", "tool_calls", "tool_call_id", "name", "function_call"), fc.anything())
      .map(([m, key, value]) => ({ ...m, [key]: value }));
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.anything(), mutated), { maxLength: 5 }), (x) => {
        try {
          render(parse(x), { reuse: false });
        } catch (e) {
          if (!CtxfoldError.isInstance(e)) throw e;
        }
      }),
      { numRuns: 500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Random valid wire conversations.

const textPart = withExtras(fc.record({ type: fc.constant("text"), text: str }));
const userPart = fc.oneof(
  textPart,
  fc.record({
    type: fc.constant("image_url"),
    image_url: fc
      .record({ url: fc.constantFrom("https://x.test/a.png", "data:image/png;base64,iVBO"), detail: opt(fc.constantFrom("low", "high", "auto")) })
      .map(compact),
  }),
  fc.record({ type: fc.constant("input_audio"), input_audio: fc.record({ data: str, format: fc.constantFrom("wav", "mp3") }) }),
  fc.record({
    type: fc.constant("file"),
    file: fc.oneof(fc.record({ file_id: str }), fc.record({ file_data: fc.constant("data:application/pdf;base64,JVBE"), filename: str })),
  }),
  fc.record({ type: fc.constantFrom("video_url", "x_part"), value: fc.jsonValue({ maxDepth: 1 }) }),
);
const assistantPart = fc.oneof(textPart, withExtras(fc.record({ type: fc.constant("refusal"), refusal: str })));
const content = (part: fc.Arbitrary<object>) => fc.oneof(str, fc.array(part, { maxLength: 3 }), fc.constant(null), fc.constant(undefined));
const toolCall = fc.oneof(
  { weight: 4, arbitrary: withExtras(fc.record({ id: str, type: fc.constant("function"), function: withExtras(fc.record({ name: str, arguments: str })) })) },
  { weight: 1, arbitrary: withExtras(fc.record({ id: str, type: fc.constant("custom"), custom: withExtras(fc.record({ name: str, input: str })) })) },
  { weight: 1, arbitrary: fc.record({ id: str, type: fc.constant("x_tool"), x_tool: fc.jsonValue({ maxDepth: 1 }) }) },
);

const chatMessage: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  withExtras(fc.record({ role: fc.constantFrom("system", "developer"), content: content(textPart), name: opt(str) }).map(compact)),
  withExtras(fc.record({ role: fc.constant("user"), content: content(userPart), name: opt(str) }).map(compact)),
  withExtras(
    fc
      .record({
        role: fc.constant("assistant"),
        content: content(assistantPart),
        tool_calls: fc.oneof(fc.constant(undefined), fc.array(toolCall, { minLength: 1, maxLength: 3 }), fc.constant([]), fc.constant(null)),
        function_call: fc.oneof(fc.constant(undefined), fc.record({ name: fc.constantFrom("f", "g"), arguments: str }), fc.constant(null)),
        refusal: opt(fc.option(str)),
        name: opt(str),
        audio: opt(fc.option(fc.record({ id: str }))),
      })
      .map(compact),
  ),
  withExtras(fc.record({ role: fc.constant("tool"), tool_call_id: str, content: content(textPart) }).map(compact)),
  withExtras(fc.record({ role: fc.constant("function"), name: fc.constantFrom("f", "g", "h"), content: fc.oneof(str, fc.constant(null)) })),
);

describe("openai-chat: properties over random valid conversations", () => {
  it("render(parse(x)) rebuilds x and reuses it byte for byte", () => {
    fc.assert(
      fc.property(fc.array(chatMessage, { maxLength: 10 }), (x) => expectRoundTrip(x)),
      { numRuns: 400 },
    );
  });

  it("round-trips generated agent transcripts", () => {
    for (let seed = 1; seed <= 20; seed++) expectRoundTrip(openaiChatAdapter.render(generateRun({ seed, steps: 8 }).messages) as unknown[]);
  });
});

// ---------------------------------------------------------------------------------------------
// Random canonical messages, as other formats would hand them over.

const canonText = fc.record({ type: fc.constant("text" as const), text: str });
const canonMedia = fc.oneof(
  fc.record({ type: fc.constant("media" as const), mediaType: fc.constant("image/png"), data: fc.constantFrom("iVBORw0KGgo=", "https://x.test/a.png") }),
  fc.record({ type: fc.constant("media" as const), mediaType: fc.constantFrom("audio/wav", "application/pdf"), data: fc.constant("UklGRg==") }),
);
const canonResult = fc
  .record({
    type: fc.constant("tool-result" as const),
    callId: str,
    name: opt(str),
    content: fc.array(fc.oneof(canonText, canonMedia), { maxLength: 3 }),
    isError: opt(fc.boolean()),
  })
  .map(compact);
const canonCall = fc.record({ type: fc.constant("tool-call" as const), id: str, name: str, args: str });
const canonReasoning = fc.record({ type: fc.constant("reasoning" as const), text: opt(str), redacted: opt(str), signature: opt(str) }).map(compact);
const canonOpaque = fc.record({ type: fc.constant("opaque" as const), value: fc.jsonValue({ maxDepth: 1 }) });
const partsFor: Record<Message["role"], fc.Arbitrary<Part[]>> = {
  system: fc.array(canonText, { maxLength: 2 }),
  user: fc.array(fc.oneof(canonText, canonMedia, canonResult, canonOpaque), { maxLength: 3 }),
  assistant: fc.array(fc.oneof(canonText, canonCall, canonReasoning, canonMedia, canonOpaque), { maxLength: 4 }),
  tool: fc.array(fc.oneof({ weight: 3, arbitrary: canonResult }, { weight: 1, arbitrary: canonText }), { maxLength: 3 }),
};
const canonMessage: fc.Arbitrary<Message> = fc
  .constantFrom<Message["role"]>("system", "user", "assistant", "tool")
  .chain((role) => partsFor[role].map((parts) => ({ id: "x", role, parts, meta: {} })));

describe("openai-chat: canonical messages from elsewhere", () => {
  it("render is stable: parsing a rendering and rendering again gives the same wire", () => {
    fc.assert(
      fc.property(fc.array(canonMessage, { maxLength: 8 }), (messages) => {
        const wire = render(messages, { reuse: false });
        expect(render(parse(wire), { reuse: false })).toEqual(wire);
      }),
      { numRuns: 300 },
    );
  });
});
