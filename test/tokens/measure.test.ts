import { describe, expect, it } from "vitest";
import { kFormats, parseMessages, renderMessages } from "../../src/adapters/index.js";
import { kEncodings } from "../../src/tokens/weights-table.js";
import { generateRuns } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { messageTexts } from "../../src/model/texts.js";
import { providerOf, tokenMeasure, TokenMeasure } from "../../src/tokens/measure.js";
import { kMessageOverhead, TokenCounter, type CountableMessage } from "../../src/tokens/token-counter.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { errorOf, hasCorpus, kNoCorpusReason } from "../helpers.js";

const counter = new TokenCounter();

const msg = (id: string, role: Message["role"], parts: Message["parts"]): Message => ({ id, role, parts, meta: {} });
const call = msg("a", "assistant", [
  { type: "text", text: "Reading both files." },
  { type: "tool-call", id: "c1", name: "read_file", args: '{"path":"src/a.py"}' },
  { type: "tool-call", id: "c2", name: "read_file", args: '{"path":"src/b.py"}' },
]);
const results = msg("t", "tool", [
  { type: "tool-result", callId: "c1", content: [{ type: "text", text: "def a():\n    return 1\n" }] },
  { type: "tool-result", callId: "c2", content: [{ type: "text", text: "def b():\n    return 2\n" }] },
]);

/** The measure's definition, written out text by text (independent of its batching and memo). */
function expectedExact(m: Message, provider: "openai" | "anthropic"): number {
  const o = kMessageOverhead[provider];
  let n = o.perMessage + 1;
  for (const t of messageTexts([m])) n += counter.exact(t);
  for (const p of m.parts) n += p.type === "tool-call" ? o.perToolCall : p.type === "tool-result" ? o.perToolResult : 0;
  return n;
}

function expectedEstimate(m: Message, provider: "openai" | "anthropic"): number {
  const o = kMessageOverhead[provider];
  let n = o.perMessage + 1;
  for (const t of messageTexts([m])) n += counter.estimateMany([t])[0];
  for (const p of m.parts) n += p.type === "tool-call" ? o.perToolCall : p.type === "tool-result" ? o.perToolResult : 0;
  return Math.ceil(n);
}

/** A counter that records every estimator call. */
function recordingCounter(): { counter: TokenCounter; calls: string[][] } {
  const inner = new TokenCounter();
  const calls: string[][] = [];
  const c = Object.create(inner) as TokenCounter;
  c.estimateMany = (texts) => {
    calls.push([...texts]);
    return inner.estimateMany(texts);
  };
  return { counter: c, calls };
}

describe("TokenMeasure", () => {
  it("adds the provider's overheads: per message, role, tool call, tool result and request", () => {
    for (const provider of ["openai", "anthropic"] as const) {
      const m = new TokenMeasure(counter, { provider });
      const o = kMessageOverhead[provider];
      expect(m.exactOf(call), provider).toBe(expectedExact(call, provider));
      expect(m.exactOf(results), provider).toBe(expectedExact(results, provider));
      expect(m.exact([call, results]), provider).toBe(o.perRequest + expectedExact(call, provider) + expectedExact(results, provider));
      expect(m.of(call), provider).toBe(expectedEstimate(call, provider));
      expect(m.sum([call, results]), provider).toBe(m.of(call) + m.of(results));
      expect(m.all([call, results]), provider).toBe(o.perRequest + m.sum([call, results]));
      expect(m.all([]), provider).toBe(o.perRequest);
    }
    // Anthropic's wrappers: 3 more per tool_use block, 4 per tool_result block than OpenAI's.
    const openai = new TokenMeasure(counter, { provider: "openai" });
    const anthropic = new TokenMeasure(counter, { provider: "anthropic" });
    expect(anthropic.exactOf(call) - openai.exactOf(call)).toBe(2 * 3);
    expect(anthropic.exactOf(results) - openai.exactOf(results)).toBe(2 * 4);
  });

  it("takes the counter's provider unless given, and maps formats to providers", () => {
    expect(new TokenMeasure(new TokenCounter({ provider: "anthropic" })).provider).toBe("anthropic");
    expect(new TokenMeasure(new TokenCounter({ provider: "anthropic" }), { provider: "openai" }).provider).toBe("openai");
    expect(Object.fromEntries(kFormats.map((f) => [f, providerOf(f)]))).toEqual({
      "openai-chat": "openai",
      "openai-responses": "openai",
      anthropic: "anthropic",
      "ai-sdk": "openai",
      langchain: "openai",
    });
    expect(errorOf(() => new TokenMeasure(counter, { provider: "gemini" as never })).path).toBe("provider");
  });

  it("counts a role as one token: every role name is one token in every encoding", () => {
    for (const encoding of kEncodings) {
      const c = new TokenCounter({ encoding });
      for (const role of ["system", "user", "assistant", "tool", "developer", "function"]) expect(c.exact(role), `${encoding} ${role}`).toBe(1);
    }
  });

  it("memoises per message object: a growing transcript estimates only its new messages, in one call", () => {
    const { counter: c, calls } = recordingCounter();
    const m = new TokenMeasure(c);
    const run = generateRuns(1, 5)[0].messages;
    const first = m.all(run.slice(0, 6));
    expect(calls.length).toBe(1);
    expect(calls[0]).toEqual(messageTexts(run.slice(0, 6)));
    const grown = m.all(run);
    expect(calls.length).toBe(2);
    expect(calls[1]).toEqual(messageTexts(run.slice(6)));
    expect(grown - first).toBe(m.sum(run.slice(6)));
    m.all(run);
    run.forEach((x) => m.of(x));
    expect(calls.length).toBe(2);
    // A new object with the same content is measured anew (immutable messages: a change is a new object).
    expect(m.of({ ...run[3] })).toBe(m.of(run[3]));
    expect(calls.length).toBe(3);
    expect(m.text("")).toBe(0);
  });

  it("is shared per counter and provider (tokenMeasure)", () => {
    const c = new TokenCounter();
    expect(tokenMeasure(c)).toBe(tokenMeasure(c));
    expect(tokenMeasure(c).provider).toBe("openai");
    expect(tokenMeasure(c, "anthropic")).not.toBe(tokenMeasure(c));
    expect(tokenMeasure(new TokenCounter())).not.toBe(tokenMeasure(c));
  });

  it("estimates within a few percent of the exact count", () => {
    const m = tokenMeasure(counter);
    for (const run of generateRuns(5, 11)) {
      const exact = m.exact(run.messages);
      expect(Math.abs(m.all(run.messages) - exact) / exact).toBeLessThan(0.1);
    }
  });

  it("splits a message into its parts' tokens (partTokens)", () => {
    const m = tokenMeasure(counter);
    const [c, r] = m.partTokens([call, results], "exact");
    const o = kMessageOverhead.openai;
    expect(c).toEqual([
      counter.exact("Reading both files."),
      counter.exact("read_file") + counter.exact('{"path":"src/a.py"}') + o.perToolCall,
      counter.exact("read_file") + counter.exact('{"path":"src/b.py"}') + o.perToolCall,
    ]);
    expect(o.perMessage + 1 + c.reduce((a, b) => a + b, 0)).toBe(m.exactOf(call));
    expect(o.perMessage + 1 + r.reduce((a, b) => a + b, 0)).toBe(m.exactOf(results));
    const est = m.partTokens([call], "estimate")[0];
    expect(Math.ceil(o.perMessage + 1 + est.reduce((a, b) => a + b, 0))).toBe(m.of(call));
  });

  it("names the place of bad input", () => {
    const m = tokenMeasure(counter);
    expect(errorOf(() => m.all([call, null as unknown as Message])).path).toBe("messages[1]");
    expect(errorOf(() => m.sum("x" as unknown as Message[])).path).toBe("messages");
    expect(errorOf(() => m.exact([msg("x", "user", [null as never])])).path).toBe("messages[0].parts[0]");
    const bad = msg("y", "user", [
      { type: "text", text: "ok" },
      { type: "text", text: 7 as unknown as string },
    ]);
    expect(errorOf(() => m.all([bad])).message).toBe("messages[0].parts[1]: expected a string, got number");
    expect(errorOf(() => m.of(msg("z", "tool", [{ type: "tool-result", callId: "c", content: "x" as never }]))).path).toBe("message.parts[0].content");
    expect(errorOf(() => m.text(3 as unknown as string)).code).toBe("E_NOT_STRING");
  });
});

describe("TokenCounter on canonical messages", () => {
  it("counts them with the token measure", () => {
    const run = generateRuns(1, 8)[0].messages;
    const m = tokenMeasure(counter);
    expect(counter.countMessages(run, "exact")).toBe(m.exact(run));
    expect(counter.countMessages(run)).toBe(m.all(run));
    expect(counter.countMessage(run[2], "exact")).toBe(m.exactOf(run[2]));
    expect(counter.countMessage(run[2])).toBe(m.of(run[2]));
    const anthropic = new TokenCounter({ provider: "anthropic" });
    expect(anthropic.countMessages(run, "exact")).toBe(tokenMeasure(anthropic).exact(run));
    expect(anthropic.countMessages(run, "exact")).toBeGreaterThan(counter.countMessages(run, "exact"));
    expect(errorOf(() => counter.countMessages([run[0], { role: "user", content: "wire" } as never])).path).toBe("messages[1]");
  });

  // The canonical count of OpenAI chat messages equals the count of their wire form: what the
  // tiered compactor's exact check counted before, by rendering to that form. (Estimates differ
  // by design: the wire form rounds each text, the measure each message.)
  const wireAndCanonical = (wire: unknown[]): void => {
    const { messages } = parseMessages(wire, { format: "openai-chat" });
    expect(counter.countMessages(messages, "exact")).toBe(counter.countMessages(wire as CountableMessage[], "exact"));
    messages.forEach((m, i) => expect(counter.countMessage(m, "exact")).toBe(counter.countMessage(wire[i] as CountableMessage, "exact")));
  };

  it("counts OpenAI chat messages as their wire form counts (exact)", () => {
    for (const run of generateRuns(20, 3)) {
      wireAndCanonical(renderMessages(run.messages, "openai-chat") as unknown[]);
    }
    wireAndCanonical([
      { role: "system", content: "You are terse." },
      {
        role: "user",
        content: [
          { type: "text", text: "Look at " },
          { type: "text", text: "both files." },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
          { id: "c2", type: "function", function: { name: "grep", arguments: '{"q":"x"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "alpha" },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "beta" }] },
      { role: "assistant", content: "", tool_calls: [{ id: "c3", type: "function", function: { name: "done", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c3", content: "" },
      { role: "assistant", content: "Done: \u00e9t\u00e9 \ud83d\ude80" },
    ]);
  });

  it.skipIf(!hasCorpus)(`counts every second run of each corpus file as its wire form counts (exact)${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
    for (const line of corpusLines({ stride: 2 })) wireAndCanonical((JSON.parse(line) as CorpusRun).messages as unknown[]);
  });
});
