import { describe, expect, it } from "vitest";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { createMemoryStore } from "../../src/store/index.js";
import { getMessages, indexedRefs, putMessages } from "../../src/store/messages.js";
import { createRng, randomTricky, thrown } from "../helpers.js";

const long = (c: string) => c.repeat(1500);

/** One message of each kind, long texts and short ones, escapes and lone surrogates. */
function kinds(): Message[] {
  const r = createRng(7);
  return [
    {
      id: "u",
      role: "user",
      parts: [
        { type: "text", text: long("u") },
        { type: "text", text: "short" },
      ],
      meta: {},
    },
    {
      id: "a",
      role: "assistant",
      meta: { provider: { x: 1 } },
      parts: [
        { type: "reasoning", text: long("r"), redacted: long("e"), signature: "sig" },
        { type: "reasoning", redacted: long("z") },
        { type: "tool-call", id: "c1", name: "write_file", args: JSON.stringify({ path: "a.py", content: long("p") }) },
        { type: "tool-call", id: "c2", name: "ls", args: "{}" },
      ],
    },
    {
      id: "t",
      role: "tool",
      meta: {},
      parts: [
        {
          type: "tool-result",
          callId: "c1",
          content: [
            { type: "text", text: "ok" },
            { type: "media", mediaType: "image/png", data: "AAAA" },
            { type: "text", text: randomTricky(r, 4000) + long("x") },
          ],
        },
        { type: "tool-result", callId: "c2", isError: true, content: [{ type: "text", text: `\uD800${long('\n"\\')}` }] },
      ],
    },
  ];
}

describe("putMessages / getMessages", () => {
  it("lists refs of messages stored earlier where they stand, chunked or not", () => {
    for (const count of [3, 600]) {
      const store = createMemoryStore();
      const messages = Array.from(
        { length: count },
        (_, i): Message => ({ id: `m${i}`, role: "user", parts: [{ type: "text", text: `message ${i}` }], meta: {} }),
      );
      const earlier = putMessages(store, messages.slice(0, Math.floor(count / 2)));
      const later = messages.slice(Math.floor(count / 2));
      const { ref, refs } = putMessages(store, [...indexedRefs(store, earlier.ref), ...later]);
      expect(getMessages(store, ref)).toEqual(messages);
      expect(refs.slice(0, earlier.refs.length)).toEqual(earlier.refs);
      expect(indexedRefs(store, ref)).toEqual(refs);
    }
  });

  it("gives every message back exactly, lone surrogates and escapes included", () => {
    const store = createMemoryStore();
    const messages = kinds();
    const { ref, refs } = putMessages(store, messages);
    expect(getMessages(store, ref)).toEqual(messages);
    expect(refs).toHaveLength(messages.length);
    for (const r of refs) expect(store.has(r)).toBe(true);
  });

  it("round-trips generated runs, storing a message once however often it is removed", () => {
    const store = createMemoryStore();
    const messages = generateRun({ seed: 3, steps: 40 }).messages;
    const first = putMessages(store, messages.slice(0, 30));
    const size = store.size;
    const again = putMessages(store, messages.slice(0, 30));
    expect(again.refs).toEqual(first.refs);
    expect(store.size).toBe(size); // the index is the same bytes too
    expect(getMessages(store, putMessages(store, messages).ref)).toEqual(messages);
  });

  it("a long history's index is chunked, and storing it again grown at the end writes only its new chunk and a short top index", () => {
    const store = createMemoryStore();
    const messages = generateRun({ seed: 5, steps: 400 }).messages;
    expect(messages.length).toBeGreaterThan(600);
    const first = putMessages(store, messages.slice(0, 600));
    expect(getMessages(store, first.ref)).toEqual(messages.slice(0, 600));
    const top = JSON.parse(store.getText(first.ref)) as { chunks: string[]; count: number };
    expect(top.count).toBe(600);
    expect(top.chunks).toHaveLength(3);
    // Grown by 20 messages: 20 message files, the changed last chunk and the top index.
    const count = store.refs().length;
    const grown = putMessages(store, messages.slice(0, 620));
    expect(store.refs().length).toBe(count + 20 + 2);
    expect(getMessages(store, grown.ref)).toEqual(messages.slice(0, 620));
    expect((JSON.parse(store.getText(grown.ref)) as { chunks: string[] }).chunks.slice(0, 2)).toEqual(top.chunks.slice(0, 2));
    // The same list in a fresh store gives the same ref (content alone decides).
    expect(putMessages(createMemoryStore(), messages.slice(0, 620)).ref).toBe(grown.ref);
  });

  it("refuses a chunked index whose count disagrees with its chunks, or whose chunk is not an index", () => {
    const store = createMemoryStore();
    const { refs } = putMessages(store, generateRun({ seed: 2, steps: 3 }).messages);
    const chunk = store.put(JSON.stringify({ ctxfold: "messages", refs }), { kind: "history", ext: "json" });
    const wrong = store.put(JSON.stringify({ ctxfold: "messages", chunks: [chunk], count: refs.length + 1 }), { kind: "history", ext: "json" });
    expect(thrown(() => getMessages(store, wrong), "E_BAD_REF").path).toBe(`${wrong}.count`);
    const nested = store.put(JSON.stringify({ ctxfold: "messages", chunks: [wrong], count: refs.length }), { kind: "history", ext: "json" });
    thrown(() => getMessages(store, nested), "E_BAD_REF");
  });

  it("names the stored message that is not a valid message, and refuses a ref that is not an index", () => {
    const store = createMemoryStore();
    const bad = store.put(JSON.stringify({ id: "x", role: "narrator", parts: [], meta: {} }), { kind: "message", ext: "json" });
    const index = store.put(JSON.stringify({ ctxfold: "messages", refs: [bad] }), { kind: "history", ext: "json" });
    const err = thrown(() => getMessages(store, index), "E_SCHEMA");
    expect(err.message).toContain(bad);
    expect(err.path).toBe(`${index}.refs[0]`);
    thrown(() => getMessages(store, bad), "E_BAD_REF");
  });
});
