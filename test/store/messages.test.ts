import { describe, expect, it } from "vitest";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { createMemoryStore } from "../../src/store/index.js";
import { getMessages, putMessages } from "../../src/store/messages.js";
import { createRng, randomTricky, thrown } from "../helpers.js";

const long = (c: string) => c.repeat(1500);

/** One message of each kind, long texts and short ones, escapes and lone surrogates. */
function kinds(): Message[] {
  const r = createRng(7);
  return [
    { id: "u", role: "user", parts: [{ type: "text", text: long("u") }, { type: "text", text: "short" }], meta: {} },
    {
      id: "a", role: "assistant", meta: { provider: { x: 1 } }, parts: [
        { type: "reasoning", text: long("r"), redacted: long("e"), signature: "sig" },
        { type: "reasoning", redacted: long("z") },
        { type: "tool-call", id: "c1", name: "write_file", args: JSON.stringify({ path: "a.py", content: long("p") }) },
        { type: "tool-call", id: "c2", name: "ls", args: "{}" },
      ],
    },
    {
      id: "t", role: "tool", meta: {}, parts: [
        { type: "tool-result", callId: "c1", content: [{ type: "text", text: "ok" }, { type: "media", mediaType: "image/png", data: "AAAA" }, { type: "text", text: randomTricky(r, 4000) + long("x") }] },
        { type: "tool-result", callId: "c2", isError: true, content: [{ type: "text", text: `\uD800${long("\n\"\\")}` }] },
      ],
    },
  ];
}

describe("putMessages / getMessages", () => {
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
