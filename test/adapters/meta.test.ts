/** meta.ts: what every adapter keeps under meta[format]. */
import { describe, expect, it } from "vitest";
import { copyFields, formatMeta, isPlainText, textPart, withFields } from "../../src/adapters/meta.js";
import type { Message, Part } from "../../src/model/schema.js";

describe("meta", () => {
  it("reads and writes meta[format], the frozen form frozen through", () => {
    const chat = formatMeta<{ role?: string }, { wire?: true }>("openai-chat");
    const m: Message = { id: "m0", role: "system", parts: [], meta: chat.of({ role: "developer" }) };
    expect(chat.message(m)).toEqual({ role: "developer" });
    expect(chat.get({})).toBeUndefined();
    const frozen = chat.frozen({ wire: true });
    expect(Object.isFrozen(frozen) && Object.isFrozen(frozen["openai-chat"])).toBe(true);
  });

  it("keeps carried fields apart from the part's own keys, `__proto__` included", () => {
    expect(textPart("anthropic", "hi", undefined)).toEqual({ type: "text", text: "hi" });
    expect(textPart("anthropic", "hi", { cache_control: 1 })).toEqual({ type: "text", text: "hi", meta: { anthropic: { fields: { cache_control: 1 } } } });
    type Hints = { v?: 4; fields?: Record<string, unknown> };
    expect(withFields<Hints>(undefined, { v: 4 })).toEqual({ v: 4 });
    expect(withFields<Hints>({ a: 1 }, { v: 4 })).toEqual({ v: 4, fields: { a: 1 } });
    const fields = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
    const out = copyFields({ type: "text" }, fields);
    expect(Object.keys(out)).toEqual(["type", "__proto__", "y"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it("calls text plain when its format's meta is absent, or is what the format's own test accepts", () => {
    const text = (meta?: Record<string, unknown>): Part => (meta ? { type: "text", text: "t", meta } : { type: "text", text: "t" });
    expect(isPlainText(text(), "ai-sdk")).toBe(true);
    expect(isPlainText(text({ langchain: { bare: true } }), "ai-sdk")).toBe(true);
    expect(isPlainText(text({ "ai-sdk": { fields: {} } }), "ai-sdk")).toBe(false);
    expect(isPlainText({ type: "reasoning", text: "t" }, "ai-sdk")).toBe(false);
    expect(isPlainText(text({ anthropic: null }), "anthropic")).toBe(true);
    expect(isPlainText(text({ anthropic: null }), "anthropic", (own) => own === undefined)).toBe(false);
  });
});
