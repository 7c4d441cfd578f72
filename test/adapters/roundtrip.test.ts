/**
 * The round-trip properties of every adapter over generated runs, and the cross-format chain
 * over every run of the corpus (OpenAI -> canonical -> each format -> canonical -> OpenAI).
 */
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { kAdapters, kFormats, openaiChatAdapter, parseMessages } from "../../src/adapters/index.js";
import { generateRuns } from "../../src/gen/run.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";

const runs = generateRuns(1000, 20261123);

describe.each(kFormats)("%s round trip over 1,000 generated runs", (format) => {
  const adapter = kAdapters[format];
  const wires = runs.map((r) => adapter.render(r.messages, { reuse: false }));

  it("render(parse(x)) deep-equals x when every message is rebuilt", () => {
    for (let i = 0; i < wires.length; i++) {
      const x = wires[i];
      const again = adapter.render(adapter.parse(x, { source: runs[i]!.id }), { reuse: false });
      if (!isDeepStrictEqual(again, x)) expect(again, `run ${runs[i]!.id}`).toEqual(x);
    }
  });

  it("untouched messages come back byte-identical", () => {
    for (let i = 0; i < wires.length; i++) {
      const json = JSON.stringify(wires[i]);
      const x = JSON.parse(json) as unknown;
      expect(JSON.stringify(adapter.render(adapter.parse(x))), `run ${runs[i]!.id}`).toBe(json);
    }
  });

  it("detectFormat recognises the rendering", () => {
    const rich = wires.filter((_, i) => runs[i]!.messages.some((m) => m.parts.some((p) => p.type === "tool-call")));
    for (const x of rich.slice(0, 100)) expect(parseMessages(x).format).toBe(format);
  });
});

describe.skipIf(!hasCorpus)(`the corpus through every format${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  it.each(kFormats)("OpenAI -> canonical -> %s -> canonical -> OpenAI is unchanged for every run", (format) => {
    const adapter = kAdapters[format];
    for (const line of corpusLines()) {
      const run = JSON.parse(line) as CorpusRun;
      const canonical = openaiChatAdapter.parse(run.messages, { source: run.id });
      const wire = adapter.render(canonical);
      const back = openaiChatAdapter.render(adapter.parse(wire, { source: run.id }), { reuse: false });
      if (!isDeepStrictEqual(back, run.messages)) expect(back, run.id).toEqual(run.messages);
    }
  });
});
