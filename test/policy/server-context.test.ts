/**
 * Compaction keeps what the providers require of their server-side context state: the latest
 * compaction item / block goes back byte-identical and nothing moves across it, what precedes
 * it may go (the providers say it is superseded), a Responses reasoning item stays with the
 * call it preceded, Anthropic's turn in progress keeps its signed thinking, and the output
 * passes the validators.
 */
import { describe, expect, it } from "vitest";
import { parseMessages, type Format } from "../../src/adapters/index.js";
import { compactionBoundary } from "../../src/adapters/server-context.js";
import type { Message } from "../../src/model/schema.js";
import { createCompactor } from "../../src/policy/index.js";
import { createMemoryStore, getMessages, reachableRefs } from "../../src/store/index.js";
import { newViolations, validate } from "../../src/validate/index.js";
import {
  anthropicOnDemandBody,
  anthropicThresholdBody,
  anthropicThresholdChat,
  onDemandBlock,
  responsesAgentInput,
  responsesCompactedWindow,
  responsesCompaction,
  thresholdBlock,
} from "../helpers-server-context.js";

type Item = Record<string, unknown>;
interface Case {
  input: unknown;
  format: Format;
  /** The wire object of the latest compaction. */
  latest: Item;
}

const cases: Record<string, Case> = {
  "Responses, server-side compaction": { input: responsesAgentInput(30, 12), format: "openai-responses", latest: responsesCompaction("a") },
  "Responses, a /responses/compact window": { input: responsesCompactedWindow(30), format: "openai-responses", latest: responsesCompaction("w") },
  "Anthropic, threshold compaction": { input: anthropicThresholdBody(30, 12), format: "anthropic", latest: thresholdBlock },
  "Anthropic, on-demand compaction": { input: anthropicOnDemandBody(30), format: "anthropic", latest: onDemandBlock },
  "Anthropic, a long chat after threshold compaction": { input: anthropicThresholdChat(12), format: "anthropic", latest: thresholdBlock },
};

const isNote = (m: Message) => (m.meta.ctxfold as { kind?: string } | undefined)?.kind === "superseded";
/** ctxfold's note of what it moved out, and nothing else (a summary merged into it would stand before the compaction). */
const onlyNote = (m: Message) =>
  isNote(m) && m.parts.length === 1 && m.parts[0]!.type === "text" && /^\[ctxfold\] \d+ earlier messages?, superseded/.test(m.parts[0]!.text);

const parse = (wire: unknown, format: Format): Message[] => parseMessages(wire, { format }).messages;
/** The wire items (Responses) or blocks (Anthropic) of an output, flattened in order. */
function wireObjects(wire: unknown, format: Format): Item[] {
  if (format === "openai-responses") return wire as Item[];
  return (wire as { messages: { content: string | Item[] }[] }).messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
}

describe.each(Object.entries(cases))("%s", (_, { input, format, latest }) => {
  const tokens = createCompactor().measure(parse(input, format), format);

  it.each([0.5, 0.2, 0.06])(
    "compacted to %d of its size: within budget, valid, the latest compaction byte-identical and nothing moved across it",
    async (share) => {
      const budget = Math.floor(tokens * share);
      const store = createMemoryStore();
      const r = await createCompactor({ store }).compact(input, { budget, format });
      expect(r.status).toBe("ok");
      expect(r.tokensAfter).toBeLessThanOrEqual(budget);

      const out = parse(r.messages, format);
      const after = validate(out, format);
      expect(after.issues.filter((i) => i.severity === "error")).toEqual([]);
      expect(newViolations(validate(parse(input, format), format), after)).toEqual([]);

      const objects = wireObjects(r.messages, format);
      expect(objects.filter((o) => o.type === "compaction").map((o) => JSON.stringify(o))).toContain(JSON.stringify(latest));
      // Before the latest compaction: system messages, and ctxfold's note of what it moved out.
      const at = compactionBoundary(r.canonical);
      expect(at).toBeGreaterThanOrEqual(0);
      for (const m of r.canonical.slice(0, at)) expect(m.role === "system" || onlyNote(m), m.id).toBe(true);

      // Every ref resolves, and is reachable from the output.
      const reached = reachableRefs(store, [JSON.stringify(r.canonical)]);
      expect([...new Set(r.refs)].filter((ref) => !reached.has(ref))).toEqual([]);
    },
  );

  it("what it moved out from before the compaction comes back whole from the note's ref", async () => {
    const store = createMemoryStore();
    const r = await createCompactor({ store }).compact(input, { budget: Math.floor(tokens * 0.2), format });
    const note = r.canonical.find(isNote);
    const before = parse(input, format);
    const superseded = before.slice(0, compactionBoundary(before)).filter((m) => m.role !== "system");
    if (superseded.length === 0) {
      expect(note).toBeUndefined();
      return;
    }
    const ref = (note!.meta.ctxfold as { ref: string }).ref;
    expect(getMessages(store, ref).map((m) => m.id)).toEqual(superseded.map((m) => m.id));
  });
});

describe("Responses reasoning items stay with their calls", () => {
  it("every function_call that followed a reasoning item still follows the same item", async () => {
    const input = responsesAgentInput(30, 12);
    const before = new Map<string, string>();
    input.forEach((item, i) => {
      if (item.type === "function_call" && input[i - 1]?.type === "reasoning") before.set(item.id as string, JSON.stringify(input[i - 1]));
    });
    for (const share of [0.5, 0.2, 0.06]) {
      const budget = Math.floor(createCompactor().measure(parse(input, "openai-responses"), "openai-responses") * share);
      const out = (await createCompactor().compact(input, { budget, format: "openai-responses" })).messages as Item[];
      let calls = 0;
      out.forEach((item, i) => {
        if (item.type !== "function_call" || !before.has(item.id as string)) return;
        calls++;
        expect(JSON.stringify(out[i - 1]), `${item.id as string} at ${share}`).toBe(before.get(item.id as string));
      });
      expect(calls).toBeGreaterThan(0);
    }
  });

  it("a compaction_trigger item stays the last item", async () => {
    const input = [...responsesAgentInput(30, 12), { type: "compaction_trigger" }];
    const budget = Math.floor(createCompactor().measure(parse(input, "openai-responses"), "openai-responses") * 0.2);
    const r = await createCompactor().compact(input, { budget, format: "openai-responses" });
    expect((r.messages as Item[]).at(-1)).toEqual({ type: "compaction_trigger" });
    expect(validate(parse(r.messages, "openai-responses"), "openai-responses").ok).toBe(true);
  });
});

describe("without a compaction in the input", () => {
  it("nothing is moved out as superseded", async () => {
    const input = responsesAgentInput(30, -1);
    const budget = Math.floor(createCompactor().measure(parse(input, "openai-responses"), "openai-responses") * 0.2);
    const r = await createCompactor().compact(input, { budget, format: "openai-responses" });
    expect(r.canonical.some(isNote)).toBe(false);
    expect(r.stages.map((s) => s.name)).not.toContain("superseded_history");
  });
});

describe("mode: legacy", () => {
  it.each(Object.entries(cases))(
    "%s: the latest compaction stays, byte-identical, with what ctxfold wrote after it, and no new provider violation",
    async (_, { input, format, latest }) => {
      const budget = Math.floor(createCompactor().measure(parse(input, format), format) * 0.2);
      const r = await createCompactor({ mode: "legacy" }).compact(input, { budget, format });
      expect(r.tokensAfter).toBeLessThan(createCompactor().measure(parse(input, format), format));
      expect(
        wireObjects(r.messages, format)
          .filter((o) => o.type === "compaction")
          .map((o) => JSON.stringify(o)),
      ).toContain(JSON.stringify(latest));
      for (const m of r.canonical.slice(0, compactionBoundary(r.canonical))) expect(m.meta.ctxfold, m.id).toBeUndefined();
      const errors = newViolations(validate(parse(input, format), format), validate(parse(r.messages, format), format)).filter((i) => i.severity === "error");
      expect(errors).toEqual([]);
    },
  );
});

describe("a session over a growing conversation", () => {
  it.each([
    ["openai-responses", responsesAgentInput(40, 15)],
    ["anthropic", anthropicThresholdBody(40, 15).messages],
  ] as const)("%s: every call within budget and valid, the compaction kept once it is there", async (format, full) => {
    const budget = 9000;
    const session = createCompactor().session();
    const latest = format === "anthropic" ? thresholdBlock : responsesCompaction("a");
    let withCompaction = 0;
    for (let n = 6; n <= full.length; n += 3) {
      const input = full.slice(0, n);
      const r = await session.compact(input, { budget, format });
      expect(r.tokensAfter, `call at ${n}`).toBeLessThanOrEqual(budget);
      const out = parse(r.messages, format);
      expect(
        newViolations(validate(parse(input, format), format), validate(out, format)).filter((i) => i.severity === "error"),
        `call at ${n}`,
      ).toEqual([]);
      if (!JSON.stringify(input).includes('"type":"compaction"')) continue;
      withCompaction++;
      expect(
        wireObjects(r.messages, format).map((o) => JSON.stringify(o)),
        `call at ${n}`,
      ).toContain(JSON.stringify(latest));
    }
    expect(withCompaction).toBeGreaterThan(10);
  });
});

describe("the measure", () => {
  it("counts an Anthropic compaction's summary, which the model reads; an OpenAI compaction item's ciphertext is not text", () => {
    const c = createCompactor();
    const with_ = (block: Item) =>
      parse(
        [
          { role: "assistant", content: [block] },
          { role: "user", content: "Go on." },
        ],
        "anthropic",
      );
    const summary = c.counter.count(onDemandBlock.content as string, "estimate");
    expect(c.measure(with_(onDemandBlock), "anthropic") - c.measure(with_({ ...onDemandBlock, content: "" }), "anthropic")).toBeGreaterThanOrEqual(summary - 1);
    const item = parse([responsesCompaction("m"), { role: "user", content: "Go on." }], "openai-responses");
    expect(c.measure(item, "openai-responses")).toBe(
      c.measure(
        parse(
          [
            { ...responsesCompaction("m"), encrypted_content: "" },
            { role: "user", content: "Go on." },
          ],
          "openai-responses",
        ),
        "openai-responses",
      ),
    );
  });
});
