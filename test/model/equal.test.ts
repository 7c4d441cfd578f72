import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateRun } from "../../src/gen/run.js";
import { jsonEqual } from "../../src/model/equal.js";

describe("jsonEqual", () => {
  it("agrees with comparing JSON.stringify renderings, for any JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(jsonEqual(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
        expect(jsonEqual(a, structuredClone(a))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("counts a key holding undefined as absent, and compares byte arrays by their bytes", () => {
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: null })).toBe(false);
    expect(jsonEqual({ a: [1, 2] }, { a: [1, 2, 3] })).toBe(false);
    expect(jsonEqual([{ x: "1" }], { 0: { x: "1" } })).toBe(false);
    expect(jsonEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(jsonEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(jsonEqual(new Uint8Array([1, 2]), [1, 2])).toBe(false);
    expect(jsonEqual("1", 1)).toBe(false);
  });

  it("tells a generated conversation from a copy with one character changed", () => {
    const messages = generateRun({ seed: 4, steps: 30 }).messages;
    const copy = structuredClone(messages);
    expect(jsonEqual(messages, copy)).toBe(true);
    const last = copy.at(-1)!.parts.find((p) => p.type === "text" || p.type === "tool-result")!;
    if (last.type === "text") last.text += "!";
    else last.content.push({ type: "text", text: "!" });
    expect(jsonEqual(messages, copy)).toBe(false);
  });
});
