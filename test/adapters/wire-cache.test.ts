import { describe, expect, it } from "vitest";
import { kAdapters, kFormats, renderMessages, type Format } from "../../src/adapters/index.js";
import { WireCache } from "../../src/adapters/wire-cache.js";
import { sameWire } from "../../src/adapters/wire-equal.js";
import { generateRun, generateRuns } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { createCompactor } from "../../src/policy/index.js";
import { createMemoryStore } from "../../src/store/index.js";

type Loose = Record<string, unknown>;
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** A run in `format` as plain JSON: its wire messages and how to make the input of its first n (Anthropic: a body with its system). */
function wireRun(messages: readonly Message[], format: Format, seed: number): { wire: unknown[]; input: (wire: unknown[]) => unknown } {
  const rendered = clone(renderMessages(messages, format)) as unknown;
  if (format === "anthropic") {
    const body = rendered as { system?: unknown; messages: unknown[] };
    return { wire: body.messages, input: (wire) => (body.system === undefined ? { messages: wire } : { system: body.system, messages: wire }) };
  }
  const wire = rendered as Loose[];
  // LangChain messages with ids of their own (every third) keep them; the rest are numbered.
  if (format === "langchain") wire.forEach((m, i) => (i % 3 === seed % 3 ? (m.id = `lc-${seed}-${i}`) : undefined));
  return { wire, input: (w) => w };
}

/** A copy of `m` with its longest string changed (a text edited in place). */
function edited(m: unknown): unknown {
  const c = clone(m) as Loose;
  let best: { o: Loose; k: string; len: number } | undefined;
  const walk = (o: unknown): void => {
    if (typeof o !== "object" || o === null) return;
    for (const [k, v] of Object.entries(o as Loose)) {
      if (typeof v === "string" && (!best || v.length > best.len)) best = { o: o as Loose, k, len: v.length };
      else walk(v);
    }
  };
  walk(c);
  if (best) best.o[best.k] = `${best.o[best.k] as string} (edited)`;
  return c;
}

const json = (v: unknown) => JSON.stringify(v);

/** Incremental parse == whole parse (and their renders), for every call of a schedule of wire lists. */
function checkParses(format: Format, calls: readonly unknown[][], input: (wire: unknown[]) => unknown): WireCache {
  const cache = new WireCache(format);
  for (const [k, wire] of calls.entries()) {
    const whole = kAdapters[format].parse(input(wire));
    const inc = cache.parse(input(wire));
    expect(json(inc), `${format}, call ${k}`).toBe(json(whole));
    expect(inc.map((m) => m.id)).toEqual(whole.map((m) => m.id));
    expect(json(kAdapters[format].render(inc)), `${format}, call ${k}: render`).toBe(json(kAdapters[format].render(whole)));
    expect(json(cache.render(inc)), `${format}, call ${k}: cached render`).toBe(json(kAdapters[format].render(whole)));
  }
  return cache;
}

/** Calls growing one wire message at a time, with edits in the middle, truncations and regrowth; `fresh` parses each call's list anew. */
function schedule(wire: readonly unknown[], seed: number, fresh: boolean): unknown[][] {
  const calls: unknown[][] = [];
  let list: unknown[] = [];
  let r = seed;
  const rand = (n: number) => (r = (r * 1103515245 + 12345) >>> 0) % n;
  for (let n = 1; n <= wire.length; n++) {
    list = [...list.slice(0, n - 1), wire[n - 1]];
    const roll = rand(12);
    if (roll === 0 && n > 3) {
      const at = 1 + rand(n - 2);
      list = [...list.slice(0, at), edited(list[at]), ...list.slice(at + 1)];
    } else if (roll === 1 && n > 4) {
      calls.push(fresh ? clone(list) : list);
      list = list.slice(0, n - 1 - rand(3));
      calls.push(fresh ? clone(list) : list);
      list = wire.slice(0, n);
    }
    calls.push(fresh ? clone(list) : list);
  }
  return calls;
}

describe("the wire cache parses and renders as the adapters do, a call at a time", () => {
  const runs = generateRuns(4, 31);
  for (const format of kFormats) {
    it(`${format}: generated runs appended message by message, edits in the middle, truncations; same objects and parsed afresh`, () => {
      for (const [i, run] of runs.entries()) {
        const { wire, input } = wireRun(run.messages, format, i);
        checkParses(format, schedule(wire, i + 1, i % 2 === 0), input);
        // Whole steps at a time (what an agent loop appends), with the same objects.
        const steps: unknown[][] = [];
        for (let n = 1; n <= wire.length; n += 1 + (n % 3)) steps.push(wire.slice(0, n));
        checkParses(format, steps, input);
      }
    });

    it(`${format}: the compacted output of a session renders as the adapter renders it, call after call`, async () => {
      const { wire, input } = wireRun(generateRun({ seed: 77, steps: 60 }).messages, format, 0);
      const session = createCompactor({ store: createMemoryStore() }).session();
      const cache = new WireCache(format);
      let epochs = 0;
      for (let n = 4; n <= wire.length; n += 2) {
        const r = await session.compactCanonical(cache.parse(input(clone(wire.slice(0, n)))), { budget: 6000 });
        expect(json(cache.render(r.canonical)), `${format}, ${n} messages`).toBe(json(kAdapters[format].render(r.canonical)));
        if (r.stages.length > 0) epochs++;
      }
      expect(epochs).toBeGreaterThan(1);
    });
  }

  it("renders messages parsed from another format (rebuilt, names looked up across messages) as the adapter does", () => {
    const canonical = kAdapters["openai-chat"].parse(clone(renderMessages(generateRun({ seed: 5, steps: 12 }).messages, "openai-chat")));
    for (const format of kFormats) {
      const cache = new WireCache(format);
      for (let n = 1; n <= canonical.length; n++) expect(json(cache.render(canonical.slice(0, n)))).toBe(json(kAdapters[format].render(canonical.slice(0, n))));
    }
  });

  it("a bad message fails as a whole parse fails, with its path in the whole list", () => {
    const { wire } = wireRun(generateRun({ seed: 3, steps: 6 }).messages, "openai-chat", 0);
    const cache = new WireCache("openai-chat");
    cache.parse(wire);
    const bad = [...wire, { role: "wizard", content: "x" }];
    expect(() => cache.parse(bad)).toThrow(`messages[${wire.length}].role: unknown openai-chat role "wizard"`);
    expect(json(cache.parse(wire))).toBe(json(kAdapters["openai-chat"].parse(wire)));
  });
});

describe("an append parses only the new messages", () => {
  for (const format of kFormats) {
    it(`${format}: the previous call's canonical messages are handed back as the same objects`, () => {
      const { wire, input } = wireRun(generateRun({ seed: 8, steps: 30 }).messages, format, 1);
      const cache = new WireCache(format);
      let prev: Message[] = [];
      let prevLength = 0;
      for (let n = 2; n <= wire.length; n++) {
        const parsed = cache.stats.parsedMessages;
        const messages = cache.parse(input(clone(wire.slice(0, n))));
        const reparsed = cache.stats.parsedMessages - parsed - (n - prevLength);
        // Parsed again, at most: the run of items the new ones join (Responses: a reasoning item, a
        // message and up to 4 parallel calls) or the message holding a new result's call (Anthropic).
        expect(reparsed, `${format}, ${n} messages`).toBeLessThanOrEqual(format === "openai-responses" ? 5 : format === "anthropic" ? 1 : 0);
        const same = messages.filter((m, i) => m === prev[i]).length;
        expect(same).toBeGreaterThanOrEqual(prev.length - (format === "openai-chat" || format === "ai-sdk" || format === "langchain" ? 0 : 2));
        prev = messages;
        prevLength = n;
      }
      expect(cache.stats.wholeParses).toBe(1);
    });
  }

  it("the render of an append renders only the new messages: the prefix is the previous call's very wire objects", () => {
    const canonical = kAdapters["openai-chat"].parse(clone(renderMessages(generateRun({ seed: 9, steps: 20 }).messages, "openai-chat")));
    // Rebuilt messages (no wire object of their own), as a compaction makes them.
    const rebuilt = canonical.map((m) => ({ ...m }));
    const cache = new WireCache("openai-chat");
    const first = cache.render(rebuilt.slice(0, 20)) as unknown[];
    const second = cache.render(rebuilt.slice(0, 30)) as unknown[];
    for (let i = 0; i < first.length; i++) expect(second[i]).toBe(first[i]);
  });
});

describe("sameWire", () => {
  it("is JSON equality with keys in order, undefined fields kept, and byte arrays, URLs and dates by value", () => {
    expect(sameWire({ a: 1, b: [1, "x"] }, { a: 1, b: [1, "x"] })).toBe(true);
    expect(sameWire({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameWire({ a: 1, b: undefined }, { a: 1 })).toBe(false);
    expect(sameWire(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(sameWire(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(sameWire(new URL("https://a.test/x"), new URL("https://a.test/x"))).toBe(true);
    expect(sameWire(new Date(5), new Date(6))).toBe(false);
    expect(sameWire(Number.NaN, Number.NaN)).toBe(false);
    class Thing {}
    expect(sameWire(new Thing(), new Thing())).toBe(false);
  });
});
