import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openaiChatAdapter } from "../../src/adapters/openai-chat.js";
import { openaiResponsesAdapter, type OpenAIResponsesItem } from "../../src/adapters/openai-responses.js";
import { CtxfoldError } from "../../src/errors.js";
import { clone, compact, opt, str, withExtras } from "./helpers.js";
import { generateRun } from "../../src/gen/run.js";
import { Message as MessageSchema, type Message, type Part } from "../../src/model/schema.js";

const { parse, render } = openaiResponsesAdapter;

/** Both round-trip properties on one wire conversation. */
function expectRoundTrip(x: unknown[]): void {
  const json = JSON.stringify(x);
  expect(render(parse(x), { reuse: false })).toEqual(x);
  const again = JSON.parse(json) as unknown[];
  expect(JSON.stringify(render(parse(again)))).toBe(json);
}

/** OpenAI Chat -> canonical -> Responses -> canonical -> OpenAI Chat gives the conversation back. */
function expectCrossFormat(chat: unknown[]): void {
  const canonical = openaiChatAdapter.parse(chat);
  const items = render(canonical);
  const back = parse(clone(items));
  expect(openaiChatAdapter.render(back, { reuse: false })).toEqual(chat);
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

// Input items using every wire feature; the comments give each item's wire index.
const kEverything: OpenAIResponsesItem[] = [
  { role: "system", content: "Be terse." }, // 0
  { type: "message", role: "developer", content: [{ type: "input_text", text: "Prefer tools." }] }, // 1
  { role: "user", content: "hi" }, // 2
  {
    type: "message",
    role: "user",
    id: "msg_u1",
    status: "completed",
    content: [
      { type: "input_text", text: "look" },
      { type: "input_image", image_url: "https://x.test/cat.png", detail: "low" },
      { type: "input_image", file_id: "file-1", detail: "auto" },
      { type: "input_file", file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" },
      { type: "input_file", file_url: "https://x.test/a.pdf" },
      { type: "input_audio", input_audio: { data: "UklG", format: "mp3" } },
      { type: "input_video", video_url: "https://x.test/v.mp4" },
    ],
  }, // 3
  { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Plan." }], encrypted_content: "gAAAA" }, // 4
  {
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "Let me look.", annotations: [], logprobs: [] }],
  }, // 5
  { type: "function_call", id: "fc_1", call_id: "call_1", name: "read_file", arguments: '{"path":"a"}', status: "completed" }, // 6
  { type: "function_call", call_id: "call_2", name: "bash", arguments: "{bad" }, // 7
  { type: "function_call_output", call_id: "call_1", output: "hello" }, // 8
  { type: "function_call_output", call_id: "call_2", output: "" }, // 9
  { type: "reasoning", id: "rs_2", summary: [], encrypted_content: null, status: "completed" }, // 10
  { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } }, // 11
  { type: "custom_tool_call", call_id: "call_3", name: "patch", input: "*** Begin" }, // 12
  { type: "custom_tool_call_output", call_id: "call_3", output: [{ type: "input_text", text: "ok" }] }, // 13
  {
    type: "function_call_output",
    id: "fco_1",
    call_id: "call_x",
    output: [
      { type: "input_text", text: "a" },
      { type: "input_image", image_url: "data:image/png;base64,iVBO" },
    ],
  }, // 14
  { type: "function_call_output", call_id: "call_y", output: [], x_note: "empty" }, // 15
  {
    type: "reasoning",
    id: "rs_3",
    summary: [
      { type: "summary_text", text: "One." },
      { type: "summary_text", text: "Two." },
    ],
    content: [{ type: "reasoning_text", text: "raw" }],
  }, // 16
  {
    role: "assistant",
    content: [
      { type: "refusal", refusal: "No." },
      { type: "output_text", text: "Sorry", annotations: [{ type: "url_citation", url: "u", start_index: 0, end_index: 1, title: "t" }] },
    ],
  }, // 17
  { role: "assistant", content: "Plain answer." }, // 18
  { type: "item_reference", id: "msg_old" }, // 19
  { type: "computer_call_output", call_id: "cc_1", output: { type: "computer_screenshot", image_url: "https://x.test/s.png" } }, // 20
  { type: "mcp_list_tools", id: "mcpl_1", server_label: "s", tools: [] }, // 21
  { role: "assistant", content: [] }, // 22
  { type: "message", role: "user", content: [] }, // 23
  { role: "user", content: "" }, // 24
  { role: "assistant", content: "x", x_extra: 1 }, // 25
];

describe("openai-responses: parsing every wire feature", () => {
  const messages = parse(kEverything);
  const byId = new Map(messages.map((m) => [m.id, m]));
  const get = (id: string) => byId.get(id)!;

  it("makes canonical messages with ids m<first item index>, valid against the canonical schema", () => {
    expect(messages.map((m) => `${m.id}:${m.role}`)).toEqual([
      "m0:system",
      "m1:system",
      "m2:user",
      "m3:user",
      "m4:assistant",
      "m8:tool",
      "m9:tool",
      "m10:assistant",
      "m13:tool",
      "m14:tool",
      "m15:tool",
      "m16:assistant",
      "m18:assistant",
      "m19:assistant",
      "m20:tool",
      "m21:assistant",
      "m23:user",
      "m24:user",
      "m25:assistant",
    ]);
    for (const m of messages) expect(MessageSchema.safeParse(m).success).toBe(true);
  });

  it("reads message items with and without type, developer as system, fields in meta", () => {
    expect(get("m0")).toEqual({ id: "m0", role: "system", parts: [{ type: "text", text: "Be terse." }], meta: {} });
    expect(get("m1").meta["openai-responses"]).toEqual({ role: "developer", content: "array", fields: { type: "message" } });
    expect(get("m1").parts).toEqual([{ type: "text", text: "Prefer tools.", meta: { "openai-responses": { type: "input_text" } } }]);
    expect(get("m3").meta["openai-responses"]).toEqual({ content: "array", fields: { type: "message", id: "msg_u1", status: "completed" } });
  });

  it("reads content parts: media with the wire part as data, unknown types as opaque", () => {
    const parts = get("m3").parts;
    expect(parts.map((p) => p.type)).toEqual(["text", "media", "media", "media", "media", "media", "opaque"]);
    expect(parts.slice(1, 6).map((p) => (p.type === "media" ? p.mediaType : null))).toEqual(["image/*", "image/*", "application/pdf", undefined, "audio/mpeg"]);
    expect((parts[2] as { data: unknown }).data).toBe((kEverything[3] as { content: unknown[] }).content[2]);
  });

  it("groups a turn of reasoning, message and parallel calls into one assistant message", () => {
    const m = get("m4");
    expect(m.parts).toEqual([
      { type: "reasoning", text: "Plan.", redacted: "gAAAA", meta: { "openai-responses": { fields: { id: "rs_1" } } } },
      { type: "text", text: "Let me look.", meta: { "openai-responses": { type: "output_text", fields: { annotations: [], logprobs: [] } } } },
      {
        type: "tool-call",
        id: "call_1",
        name: "read_file",
        args: '{"path":"a"}',
        meta: { "openai-responses": { fields: { id: "fc_1", status: "completed" } } },
      },
      { type: "tool-call", id: "call_2", name: "bash", args: "{bad" },
    ]);
    expect(m.meta["openai-responses"]).toEqual({ content: "array", fields: { type: "message", id: "msg_1", status: "completed" } });
  });

  it("makes each function_call_output a tool message with one result, empty outputs kept apart", () => {
    expect(get("m8").parts).toEqual([{ type: "tool-result", callId: "call_1", content: [{ type: "text", text: "hello" }] }]);
    expect(get("m9").parts).toEqual([{ type: "tool-result", callId: "call_2", content: [{ type: "text", text: "" }] }]);
    expect(get("m14").parts[0]).toMatchObject({
      callId: "call_x",
      content: [
        { type: "text", text: "a" },
        { type: "media", mediaType: "image/png" },
      ],
      meta: { "openai-responses": { output: "array", fields: { id: "fco_1" } } },
    });
    expect(get("m15").parts).toEqual([
      { type: "tool-result", callId: "call_y", content: [], meta: { "openai-responses": { output: "array", fields: { x_note: "empty" } } } },
    ]);
  });

  it("reads reasoning: empty summary without text, several summaries joined, the rest in meta", () => {
    expect(get("m10").parts[0]).toEqual({
      type: "reasoning",
      meta: { "openai-responses": { fields: { id: "rs_2", status: "completed", encrypted_content: null } } },
    });
    const r = get("m16").parts[0]!;
    expect(r).toMatchObject({ type: "reasoning", text: "One.\n\nTwo." });
    expect(r.meta!["openai-responses"]).toMatchObject({
      summary: [{ text: "One." }, { text: "Two." }],
      fields: { id: "rs_3", content: [{ type: "reasoning_text", text: "raw" }] },
    });
  });

  it("carries custom tool calls and unknown model-side items in the turn", () => {
    const m = get("m10");
    expect(m.parts.map((p) => p.type)).toEqual(["reasoning", "opaque", "tool-call"]);
    expect(m.parts[1]).toMatchObject({ value: kEverything[11], meta: { "openai-responses": { item: true } } });
    expect(m.parts[2]).toEqual({ type: "tool-call", id: "call_3", name: "patch", args: "*** Begin", meta: { "openai-responses": { custom: true } } });
    expect(get("m13").parts[0]).toMatchObject({ type: "tool-result", callId: "call_3", meta: { "openai-responses": { custom: true, output: "array" } } });
  });

  it("starts a new assistant message at a message item after a message, and keeps refusals as marked text", () => {
    expect(get("m16").parts.map((p) => p.type)).toEqual(["reasoning", "text", "text"]);
    expect(get("m16").parts[1]).toEqual({ type: "text", text: "No.", meta: { "openai-responses": { type: "refusal" } } });
    expect(get("m18").parts).toEqual([{ type: "text", text: "Plain answer." }]);
  });

  it("carries item_reference alone, client-side unknown items as tool messages, empty assistant content whole", () => {
    expect(get("m19").parts).toEqual([{ type: "opaque", value: kEverything[19], meta: { "openai-responses": { item: true } } }]);
    expect(get("m20").parts).toEqual([{ type: "opaque", value: kEverything[20], meta: { "openai-responses": { item: true } } }]);
    expect(get("m21").parts.map((p) => (p.type === "opaque" ? p.value : p))).toEqual([kEverything[21], kEverything[22]]);
    expect(get("m23")).toMatchObject({ parts: [], meta: { "openai-responses": { content: "array", fields: { type: "message" } } } });
    expect(get("m24").parts).toEqual([{ type: "text", text: "" }]);
    expect(get("m25").meta["openai-responses"]).toEqual({ fields: { x_extra: 1 } });
  });

  it("round-trips it: rebuilt deep-equal, reused byte-identical", () => {
    expectRoundTrip(kEverything);
  });
});

describe("openai-responses: reuse of untouched messages", () => {
  it("hands back the very parsed items, a turn's items spread in order", () => {
    const wire = clone(kEverything);
    const messages = parse(wire);
    const out = render(messages);
    expect(out).toHaveLength(wire.length);
    out.forEach((item, i) => expect(item).toBe(wire[i]));
  });

  it("rebuilds an edited turn and leaves its neighbours alone", () => {
    const wire = clone(kEverything);
    const messages = parse(wire);
    const k = messages.findIndex((m) => m.id === "m4");
    const turn = messages[k]!;
    const edited = messages.slice();
    edited[k] = { ...turn, parts: turn.parts.filter((p) => p.type !== "reasoning") };
    const out = render(edited);
    expect(out.slice(0, 4)).toEqual(wire.slice(0, 4));
    expect(out[3]).toBe(wire[3]);
    expect(out.slice(4, 7)).toEqual(wire.slice(5, 8));
    expect(out[7]).toBe(wire[8]);
  });
});

describe("openai-responses: rendering canonical messages", () => {
  const text = (t: string): Part => ({ type: "text", text: t });
  const call = (id: string): Part => ({ type: "tool-call", id, name: "f", args: "{}" });

  it("renders an assistant message with text and two calls as a message and two function_call items, and reads it back as one", () => {
    const canonical: Message[] = [{ id: "a", role: "assistant", parts: [text("Checking."), call("c1"), call("c2")], meta: {} }];
    const items = render(canonical);
    expect(items).toEqual([
      { role: "assistant", content: "Checking." },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call", call_id: "c2", name: "f", arguments: "{}" },
    ]);
    const back = parse(items);
    expect(back).toHaveLength(1);
    expect(back[0]!.parts).toEqual(canonical[0]!.parts);
  });

  it("uses the plain string form for one text part and typed parts for several", () => {
    expect(
      render([
        { id: "s", role: "system", parts: [text("a"), text("b")], meta: {} },
        { id: "a", role: "assistant", parts: [text("c"), text("d")], meta: {} },
        { id: "u", role: "user", parts: [], meta: {} },
      ]),
    ).toEqual([
      {
        role: "system",
        content: [
          { type: "input_text", text: "a" },
          { type: "input_text", text: "b" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "output_text", text: "c", annotations: [] },
          { type: "output_text", text: "d", annotations: [] },
        ],
      },
      { role: "user", content: "" },
    ]);
  });

  it("renders several results as several outputs, drops isError, foreign reasoning and foreign opaque parts", () => {
    const items = render([
      {
        id: "a",
        role: "assistant",
        parts: [{ type: "reasoning", text: "hmm", signature: "s" }, { type: "opaque", value: { type: "x" } }, call("c1"), call("c2")],
        meta: {},
      },
      {
        id: "t",
        role: "tool",
        parts: [
          { type: "tool-result", callId: "c1", content: [], isError: true },
          { type: "tool-result", callId: "c2", content: [text("x"), text("y")] },
          text("note"),
        ],
        meta: {},
      },
    ]);
    expect(items).toEqual([
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call", call_id: "c2", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "" },
      {
        type: "function_call_output",
        call_id: "c2",
        output: [
          { type: "input_text", text: "x" },
          { type: "input_text", text: "y" },
        ],
      },
      { role: "user", content: "note" },
    ]);
  });

  it("rebuilds a reasoning summary from edited text, keeps it when the text is untouched", () => {
    const [m] = parse([
      {
        type: "reasoning",
        id: "rs",
        summary: [
          { type: "summary_text", text: "A" },
          { type: "summary_text", text: "B" },
        ],
        encrypted_content: "e",
      },
    ]);
    const r = m!.parts[0]!;
    expect(render([m!], { reuse: false })).toEqual([
      {
        type: "reasoning",
        id: "rs",
        summary: [
          { type: "summary_text", text: "A" },
          { type: "summary_text", text: "B" },
        ],
        encrypted_content: "e",
      },
    ]);
    const edited: Message = { ...m!, parts: [{ ...r, text: "short" } as Part] };
    expect(render([edited])).toEqual([{ type: "reasoning", id: "rs", summary: [{ type: "summary_text", text: "short" }], encrypted_content: "e" }]);
  });

  it("renders foreign media and refuses a tool call on a user message", () => {
    const items = render([
      {
        id: "u",
        role: "user",
        parts: [
          { type: "media", mediaType: "image/png", data: "iVBO" },
          { type: "media", data: { type: "image_url", image_url: { url: "https://x.test/a.png" } } },
          { type: "media", mediaType: "application/pdf", data: { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } } },
          { type: "media", mediaType: "audio/wav", data: "UklG" },
        ],
        meta: {},
      },
    ]);
    expect(items).toEqual([
      {
        role: "user",
        content: [
          { type: "input_image", image_url: "data:image/png;base64,iVBO", detail: "auto" },
          { type: "input_image", image_url: "https://x.test/a.png", detail: "auto" },
          { type: "input_file", file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" },
          { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
        ],
      },
    ]);
    expectError(() => render([{ id: "u", role: "user", parts: [call("c")], meta: {} }]), "E_UNKNOWN_PART", "messages[0].parts[0]");
    expectError(() => render([{ id: "u", role: "user", parts: [{ type: "media", data: null }], meta: {} }]), "E_UNKNOWN_PART", "messages[0].parts[0]");
  });
});

describe("openai-responses: bad input", () => {
  it("rejects a non-array with E_SCHEMA", () => {
    expectError(() => parse("hello"), "E_SCHEMA", "messages");
  });

  it("names the item and the field of a wrong type", () => {
    expectError(
      () =>
        parse([
          { role: "user", content: "x" },
          { type: "function_call", call_id: "c", name: "f", arguments: 5 },
        ]),
      "E_SCHEMA",
      "messages[1]",
      "arguments",
    );
    expectError(() => parse([{ role: "user", content: 5 }]), "E_SCHEMA", "messages[0]", "content");
    expectError(() => parse([{ type: "reasoning", id: "r", summary: "x" }]), "E_SCHEMA", "summary");
    expectError(() => parse([{ type: "function_call_output", call_id: "c", output: [{ type: "input_text", text: 1 }] }]), "E_SCHEMA", "output[0].text");
    expectError(() => parse([{ type: 5 }]), "E_SCHEMA", "messages[0]", "type");
    expectError(() => parse([[]]), "E_SCHEMA", "messages[0]");
    expectError(() => parse([{ content: "x" }]), "E_SCHEMA", "role");
    const err = expectError(() => parse([{ role: "user", content: 5 }], { source: "r.jsonl:3" }), "E_SCHEMA");
    expect(err.path).toBe("r.jsonl:3: messages[0]");
  });

  it("rejects an unknown role with E_UNKNOWN_ROLE", () => {
    expectError(() => parse([{ role: "tool", content: "x" }]), "E_UNKNOWN_ROLE", "messages[0].role");
    expectError(() => parse([{ type: "message", role: "__proto__", content: "x" }]), "E_UNKNOWN_ROLE");
  });

  it("never throws anything but a CtxfoldError on arbitrary input", () => {
    const mutated = fc
      .tuple(fc.constantFrom(...kEverything), fc.constantFrom("type", "role", "content", "summary", "output", "call_id", "arguments"), fc.anything())
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
// Random valid input item lists.

const inputPart = fc.oneof(
  withExtras(fc.record({ type: fc.constant("input_text"), text: str })),
  fc
    .record({
      type: fc.constant("input_image"),
      image_url: opt(fc.constantFrom("https://x.test/a.png", "data:image/png;base64,iVBO")),
      file_id: opt(str),
      detail: fc.constantFrom("low", "high", "auto"),
    })
    .map(compact),
  fc
    .record({
      type: fc.constant("input_file"),
      file_data: opt(fc.constant("data:application/pdf;base64,JVBE")),
      file_id: opt(str),
      file_url: opt(fc.constant("https://x.test/a.pdf")),
      filename: opt(str),
    })
    .map(compact),
  fc.record({ type: fc.constant("input_audio"), input_audio: fc.record({ data: str, format: fc.constantFrom("wav", "mp3") }) }),
  fc.record({ type: fc.constantFrom("input_video", "x_part"), value: fc.jsonValue({ maxDepth: 1 }) }),
);
const outputPart = fc.oneof(
  withExtras(
    fc
      .record({
        type: fc.constant("output_text"),
        text: str,
        annotations: opt(fc.array(fc.record({ type: fc.constant("url_citation"), url: str }), { maxLength: 1 })),
        logprobs: opt(fc.constant([])),
      })
      .map(compact),
  ),
  withExtras(fc.record({ type: fc.constant("refusal"), refusal: str })),
);
const itemMeta = { type: opt(fc.constant("message")), id: opt(str), status: opt(fc.constantFrom("completed", "in_progress")) };
const output = fc.oneof(str, fc.array(fc.oneof(withExtras(fc.record({ type: fc.constant("input_text"), text: str })), inputPart), { maxLength: 3 }));
const item: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  withExtras(
    fc
      .record({ ...itemMeta, role: fc.constantFrom("user", "system", "developer"), content: fc.oneof(str, fc.array(inputPart, { maxLength: 3 })) })
      .map(compact),
  ),
  {
    weight: 2,
    arbitrary: withExtras(
      fc.record({ ...itemMeta, role: fc.constant("assistant"), content: fc.oneof(str, fc.array(outputPart, { maxLength: 3 })) }).map(compact),
    ),
  },
  {
    weight: 2,
    arbitrary: withExtras(
      fc
        .record({ type: fc.constant("function_call"), call_id: str, name: str, arguments: str, id: opt(str), status: opt(fc.constant("completed")) })
        .map(compact),
    ),
  },
  {
    weight: 2,
    arbitrary: withExtras(
      fc.record({ type: fc.constant("function_call_output"), call_id: str, output, id: opt(str), status: opt(fc.constant("completed")) }).map(compact),
    ),
  },
  withExtras(fc.record({ type: fc.constant("custom_tool_call"), call_id: str, name: str, input: str, id: opt(str) }).map(compact)),
  withExtras(fc.record({ type: fc.constant("custom_tool_call_output"), call_id: str, output }).map(compact)),
  withExtras(
    fc
      .record({
        type: fc.constant("reasoning"),
        id: opt(str),
        summary: fc.array(withExtras(fc.record({ type: fc.constantFrom("summary_text", "summary_text", "x_summary"), text: str })), { maxLength: 3 }),
        encrypted_content: opt(fc.option(str)),
        content: opt(fc.array(fc.record({ type: fc.constant("reasoning_text"), text: str }), { maxLength: 2 })),
        status: opt(fc.constant("completed")),
      })
      .map(compact),
  ),
  fc.record({
    type: fc.constantFrom("web_search_call", "item_reference", "computer_call_output", "mcp_list_tools", "mcp_approval_response", "x_future"),
    id: str,
    data: fc.jsonValue({ maxDepth: 1 }),
  }),
);

describe("openai-responses: properties over random valid item lists", () => {
  it("render(parse(x)) rebuilds x and reuses it byte for byte", () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 12 }), (x) => expectRoundTrip(x)),
      { numRuns: 400 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The cross-format property: OpenAI Chat shaped conversations survive a trip through Responses.

describe("openai-responses: OpenAI Chat -> canonical -> Responses -> canonical -> OpenAI Chat", () => {
  it("gives back hand-written conversations with parallel calls, null content and empty outputs", () => {
    expectCrossFormat([
      { role: "system", content: "You are an agent." },
      { role: "user", content: "Fix the bug." },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"src/a.ts"}' } },
          { id: "call_b", type: "function", function: { name: "grep", arguments: '{"pattern":"TODO"}' } },
          { id: "call_c", type: "function", function: { name: "bash", arguments: "" } },
        ],
      },
      { role: "tool", content: "export const a = 1;", tool_call_id: "call_a" },
      { role: "tool", content: "", tool_call_id: "call_b" },
      { role: "tool", content: "", tool_call_id: "call_c" },
      {
        role: "assistant",
        content: "Now the edit.",
        tool_calls: [{ id: "call_d", type: "function", function: { name: "write_file", arguments: '{"path":"src/a.ts"}' } }],
      },
      { role: "tool", content: "ok", tool_call_id: "call_d" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_e", type: "function", function: { name: "bash", arguments: '{"command":"npm test"}' } }] },
      { role: "tool", content: "", tool_call_id: "call_e" },
      { role: "assistant", content: "Done." },
      { role: "user", content: "" },
      { role: "assistant", content: "" },
      { role: "assistant", content: "Anything else?" },
      { role: "user", content: "List the files." },
      { role: "assistant", content: null, tool_calls: [{ id: "call_f", type: "function", function: { name: "ls", arguments: "{}" } }] },
      { role: "tool", content: "a.ts", tool_call_id: "call_f" },
    ]);
  });

  it("keeps consecutive assistant messages apart where the items tell: calls end a message, text starts one", () => {
    const call = (id: string) => ({ id, type: "function", function: { name: "f", arguments: "{}" } });
    expectCrossFormat([
      { role: "user", content: "go" },
      { role: "assistant", content: "Trying.", tool_calls: [call("g1"), call("g2")] },
      { role: "assistant", content: "Never mind." },
      { role: "user", content: "go on" },
      { role: "assistant", content: null, tool_calls: [call("g3")] },
      { role: "assistant", content: "" },
      { role: "assistant", content: "Still here." },
    ]);
  });

  it("gives back generated agent transcripts", () => {
    for (let seed = 1; seed <= 30; seed++)
      expectCrossFormat(openaiChatAdapter.render(generateRun({ seed, steps: 10, parallel: 0.4, failures: 0.2 }).messages) as unknown[]);
  });

  it("gives back random OpenAI Chat shaped conversations", () => {
    const calls = fc.array(fc.record({ id: str, type: fc.constant("function"), function: fc.record({ name: str, arguments: str }) }), {
      minLength: 1,
      maxLength: 3,
    });
    /** An agent step: an assistant message with calls (content a string or null), then one tool message per call. */
    const step = fc
      .tuple(fc.oneof(str, fc.constant(null)), calls, fc.array(str, { minLength: 3, maxLength: 3 }))
      .map(([content, tc, outputs]) => [
        { role: "assistant", content, tool_calls: tc },
        ...tc.map((c, k) => ({ role: "tool", content: outputs[k]!, tool_call_id: c.id })),
      ]);
    const say = (role: string) => str.map((content) => [{ role, content }]);
    const conversation = fc
      .tuple(fc.option(say("system")), fc.array(fc.oneof(step, say("user"), say("assistant")), { maxLength: 8 }))
      .map(([sys, turns]) => [...(sys ?? []), ...turns.flat()]);
    // The one shape the items cannot tell apart: a text-only assistant message right before one with calls.
    const tellable = (x: Record<string, unknown>[]) =>
      !x.some((m, i) => m.role === "assistant" && !m.tool_calls && x[i + 1]?.role === "assistant" && x[i + 1]!.tool_calls);
    fc.assert(
      fc.property(conversation.filter(tellable), (x) => expectCrossFormat(x)),
      { numRuns: 300 },
    );
  });

  it("reads a text-only assistant message followed by one with only calls back as one message (documented)", () => {
    const chat = [
      { role: "assistant", content: "Let me check." },
      { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
    ];
    const back = openaiChatAdapter.render(parse(render(openaiChatAdapter.parse(chat))), { reuse: false });
    expect(back).toEqual([{ role: "assistant", content: "Let me check.", tool_calls: chat[1]!.tool_calls }]);
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
  assistant: fc.array(fc.oneof(canonText, canonCall, canonReasoning, canonMedia, canonOpaque, canonResult), { maxLength: 4 }),
  tool: fc.array(fc.oneof({ weight: 3, arbitrary: canonResult }, { weight: 1, arbitrary: canonText }), { maxLength: 3 }),
};
const canonMessage: fc.Arbitrary<Message> = fc
  .constantFrom<Message["role"]>("system", "user", "assistant", "tool")
  .chain((role) => partsFor[role].map((parts) => ({ id: "x", role, parts, meta: {} })));

describe("openai-responses: canonical messages from elsewhere", () => {
  it("render is stable: parsing a rendering and rendering again gives the same items", () => {
    fc.assert(
      fc.property(fc.array(canonMessage, { maxLength: 8 }), (messages) => {
        const items = render(messages, { reuse: false });
        expect(render(parse(items), { reuse: false })).toEqual(items);
      }),
      { numRuns: 300 },
    );
  });
});
