/**
 * The providers' server-side context features through the adapters: OpenAI Responses
 * compaction items and encrypted reasoning, Anthropic compaction blocks and thinking come back
 * byte-identical, whether the message is handed back as parsed or rebuilt from its parts.
 */
import { describe, expect, it } from "vitest";
import { anthropicAdapter, detectFormat, openaiResponsesAdapter } from "../../src/adapters/index.js";
import { isCompactionPart } from "../../src/adapters/server-context.js";
import {
  anthropicOnDemandBody,
  anthropicThresholdBody,
  onDemandBlock,
  responsesAgentInput,
  responsesCompactedWindow,
  thresholdBlock,
} from "../helpers-server-context.js";
import { clone, errorOf } from "./helpers.js";

describe("OpenAI Responses: compaction items and encrypted reasoning", () => {
  const inputs = { "server-side compaction": responsesAgentInput(8, 4), "a /responses/compact window": responsesCompactedWindow(4) };

  // A rebuilt item holds the same fields with the same values; only its key order may differ
  // (the canonical fields are written first), which the API does not read.
  it.each(Object.entries(inputs))("%s: parse then render is byte-identical, and a rebuild deep-equal", (_, input) => {
    const json = JSON.stringify(input);
    const x = JSON.parse(json) as unknown[];
    expect(JSON.stringify(openaiResponsesAdapter.render(openaiResponsesAdapter.parse(x)))).toBe(json);
    expect(openaiResponsesAdapter.render(openaiResponsesAdapter.parse(clone(x)), { reuse: false })).toStrictEqual(input);
  });

  it("a rebuilt encrypted reasoning item and a compaction item are byte-identical", () => {
    const input = responsesAgentInput(8, 4);
    const out = openaiResponsesAdapter.render(openaiResponsesAdapter.parse(clone(input)), { reuse: false });
    input.forEach((item, i) => {
      if (item.type === "reasoning" || item.type === "compaction") expect(JSON.stringify(out[i]), `item ${i}`).toBe(JSON.stringify(item));
    });
  });

  it("a compaction item opens the run of model items it came with: one assistant message with the reasoning and call after it", () => {
    const messages = openaiResponsesAdapter.parse(responsesAgentInput(8, 4));
    const at = messages.findIndex((m) => m.parts.some(isCompactionPart));
    expect(messages.filter((m) => m.parts.some(isCompactionPart))).toHaveLength(1);
    expect(messages[at].role).toBe("assistant");
    expect(messages[at].parts.map((p) => p.type)).toEqual(["opaque", "reasoning", "tool-call"]);
    expect(messages[at].parts[1]).toMatchObject({ type: "reasoning", redacted: expect.stringMatching(/^gAAAAB/) });
  });

  it("the compacted window's compaction item opens the assistant message after the user messages", () => {
    const messages = openaiResponsesAdapter.parse(responsesCompactedWindow(2));
    expect(messages.map((m) => m.role).slice(0, 3)).toEqual(["user", "user", "assistant"]);
    expect(isCompactionPart(messages[2].parts[0]!)).toBe(true);
    expect(openaiResponsesAdapter.parse(responsesCompactedWindow(0))[2]!.parts.map(isCompactionPart)).toEqual([true]);
  });

  it("a compaction_trigger item is a user message of its own, carried whole", () => {
    const trigger = { type: "compaction_trigger" };
    const input = [...responsesCompactedWindow(1), trigger];
    const messages = openaiResponsesAdapter.parse(input);
    expect(messages.at(-1)).toMatchObject({ role: "user", parts: [{ type: "opaque", value: trigger }] });
    expect(openaiResponsesAdapter.render(messages, { reuse: false }).at(-1)).toBe(trigger);
  });

  it("a compaction item without encrypted_content is a schema error naming it", () => {
    const input = responsesCompactedWindow(1);
    delete input[2]!.encrypted_content;
    const e = errorOf(() => openaiResponsesAdapter.parse(input));
    expect(e.code).toBe("E_SCHEMA");
    expect(e.path).toBe("messages[2]");
    expect(e.message).toContain("encrypted_content");
  });
});

describe("Anthropic: compaction blocks, thinking and context_management", () => {
  const bodies = { "threshold compaction": anthropicThresholdBody(8, 4), "on-demand compaction": anthropicOnDemandBody(4) };

  it.each(Object.entries(bodies))("%s: parse then render gives back system and messages byte-identical, reused or rebuilt", (_, body) => {
    const expected = JSON.stringify({ system: body.system, messages: body.messages });
    expect(JSON.stringify(anthropicAdapter.render(anthropicAdapter.parse(clone(body))))).toBe(expected);
    expect(JSON.stringify(anthropicAdapter.render(anthropicAdapter.parse(clone(body)), { reuse: false }))).toBe(expected);
  });

  it("a compaction block is a part the adapter carries whole, recognised as the provider's compaction", () => {
    for (const [body, block] of [
      [anthropicThresholdBody(8, 4), thresholdBlock],
      [anthropicOnDemandBody(1), onDemandBlock],
    ] as const) {
      const parts = anthropicAdapter
        .parse(body)
        .flatMap((m) => m.parts)
        .filter(isCompactionPart);
      expect(parts).toEqual([expect.objectContaining({ type: "opaque", value: block })]);
    }
  });

  it("a text block is not mistaken for a compaction", () => {
    const parts = anthropicAdapter.parse({ messages: [{ role: "user", content: [{ type: "text", text: "compaction" }] }] }).flatMap((m) => m.parts);
    expect(parts.some(isCompactionPart)).toBe(false);
  });
});

describe("detectFormat", () => {
  it("tells a conversation by its compaction alone", () => {
    expect(
      detectFormat([
        { role: "user", content: "Go on." },
        { type: "compaction", encrypted_content: "gAAAAB" },
      ]),
    ).toBe("openai-responses");
    expect(detectFormat([{ role: "user", content: "Go on." }, { type: "compaction_trigger" }])).toBe("openai-responses");
    expect(
      detectFormat([
        { role: "assistant", content: [onDemandBlock] },
        { role: "user", content: "Go on." },
      ]),
    ).toBe("anthropic");
  });
});
