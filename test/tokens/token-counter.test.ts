import { describe, expect, it } from "vitest";
import { errorOf } from "../helpers.js";
import { generateRun } from "../../src/gen/run.js";
import { messageTexts } from "../../src/model/texts.js";
import { kMessageOverhead, TokenCounter } from "../../src/tokens/token-counter.js";

describe("TokenCounter", () => {
  const counter = new TokenCounter();

  it("counts exactly with js-tiktoken (o200k_base and cl100k_base)", () => {
    expect(counter.exact("hello world")).toBe(2);
    expect(counter.exact("")).toBe(0);
    expect(new TokenCounter({ encoding: "cl100k_base" }).exact("hello world")).toBe(2);
    // Special tokens in user text are ordinary text, as providers treat them.
    expect(counter.exact("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("memoises exact counts by content hash", () => {
    const c = new TokenCounter();
    const text = "The same tool output, seen again on the next step. ".repeat(20);
    const a = c.exact(text);
    const b = c.exact(text.slice(0) + "");
    expect(a).toBe(b);
    expect(c.stats().tokenized).toBe(1);
    expect(c.stats().exactMemo).toBe(1);
  });

  it("forgets the oldest memo entries past its size", () => {
    const c = new TokenCounter({ memoEntries: 2 });
    for (const t of ["one", "two", "three"]) c.exact(t);
    expect(c.stats().exactMemo).toBe(2);
    c.exact("one");
    expect(c.stats().tokenized).toBe(4);
  });

  it("estimates: 0 for empty, at least 1 otherwise, the same through both backends", () => {
    const ts = new TokenCounter({ backend: "ts" });
    expect(counter.estimate("")).toBe(0);
    expect(counter.estimate(".")).toBeGreaterThanOrEqual(1);
    const texts = messageTexts(generateRun({ seed: 3, steps: 10 }).messages);
    expect(Array.from(counter.estimateMany(texts))).toEqual(Array.from(ts.estimateMany(texts)));
  });

  it("counts a message with the provider's overheads", () => {
    const o = kMessageOverhead.openai;
    const msg = { role: "assistant", content: "Looking.", name: "agent", tool_calls: [{ function: { name: "read_file", arguments: '{"path":"a.py"}' } }] };
    const want =
      o.perMessage + o.perName + o.perToolCall + ["assistant", "Looking.", "agent", "read_file", '{"path":"a.py"}'].reduce((n, t) => n + counter.exact(t), 0);
    expect(counter.countMessage(msg, "exact")).toBe(want);
    expect(counter.countMessages([msg, { role: "user", content: [{ type: "text", text: "go" }] }], "exact")).toBe(
      o.perRequest + want + o.perMessage + counter.exact("user") + counter.exact("go"),
    );
  });

  it("names the place of bad input", () => {
    expect(
      errorOf(() =>
        counter.countMessages([
          { role: "user", content: "ok" },
          { role: "user", content: 7 as unknown as string },
        ]),
      ).message,
    ).toBe("messages[1].content: expected a string, got number");
    expect(errorOf(() => counter.countMessages([{ role: "assistant", tool_calls: [{ function: { name: "x" } } as never] }])).path).toBe(
      "messages[0].tool_calls[0]",
    );
    expect(errorOf(() => counter.estimate(null as unknown as string)).code).toBe("E_NOT_STRING");
    expect(errorOf(() => new TokenCounter({ encoding: "p50k_base" as never })).code).toBe("E_UNKNOWN_ENCODING");
  });
});
