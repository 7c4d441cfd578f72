/**
 * Text ctxfold writes never echoes a secret: secret-named tool-call argument values (without any
 * known prefix) and known secret shapes, in every wire format, through the tiered compactor, the
 * step compactor and block compaction, with or without redactOffload, where tool outputs and the
 * agent's text echo them too. A secret may stay only in a part the output keeps verbatim from the
 * input (that part is the caller's own).
 */
import { describe, expect, it } from "vitest";
import { kFormats, parseMessages } from "../../src/adapters/index.js";
import { createCompactor } from "../../src/policy/index.js";
import { DefaultBlockCompaction, compactMessages, resolveSessionConfig, turnMapOf } from "../../src/block/index.js";
import { assignTurns } from "../../src/block/loops.js";
import { compactStepMessages } from "../../src/steps/messages.js";
import { StepReducer } from "../../src/steps/reducer.js";
import { createMemoryStore } from "../../src/store/index.js";
import { kSecrets, leaks, plantedRun, throughFormat, written } from "../helpers-secrets.js";

describe("text ctxfold writes never echoes a secret", () => {
  const runs = [7, 19].map(plantedRun);

  it.each(kFormats)("the tiered compactor, %s, at every tier, with and without redactOffload", async (format) => {
    for (const run of runs) {
      const { wire, canonical } = throughFormat(run, format);
      for (const redactOffload of [false, true]) {
        for (const budget of [1500, 4000, 9000]) {
          const r = await createCompactor({ store: createMemoryStore(), redactOffload }).compact(wire as unknown[], { budget, format });
          expect(leaks(canonical, r.canonical), `${format} @${budget} redactOffload=${redactOffload}`).toEqual([]);
          const out = JSON.stringify(r.messages);
          for (const s of kSecrets) if (out.includes(s.slice(0, 8))) expect(leaks(canonical, parseMessages(r.messages, { format }).messages)).toEqual([]);
        }
      }
    }
  });

  it("the tiered compactor writes the secret calls' redacted arguments where it compacts them", async () => {
    const { wire, canonical } = throughFormat(runs[0], "openai-chat");
    const r = await createCompactor({ store: createMemoryStore() }).compact(wire as unknown[], { budget: 4000, format: "openai-chat" });
    expect(r.tier).not.toBe("normal");
    expect(written(canonical, r.canonical)).toContain("Called deploy(prod, [REDACTED:credential])");
  });

  it("a caller's summariser answer is redacted before it goes into the prompt", async () => {
    const key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
    const summarizer = (text: string) => `Summary (${text.length} chars). The deploy used OPENAI_API_KEY=${key}.`;
    const r = await createCompactor({ store: createMemoryStore(), summarizer }).compactCanonical(runs[1], { budget: 1500 });
    const out = JSON.stringify(r.canonical);
    expect(out).toContain("OPENAI_API_KEY=[REDACTED:");
    expect(out).not.toContain(key);
  });

  it("a caller's summariser failing with a secret in its message: the fallback event does not carry it", async () => {
    const key = "sk-proj-" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4";
    const summarizer = () => {
      throw new Error(`upstream refused the request with OPENAI_API_KEY=${key}`);
    };
    const events: { type: string; reason?: string }[] = [];
    await createCompactor({ store: createMemoryStore(), summarizer, onEvent: (e) => events.push(e) }).compactCanonical(runs[1], { budget: 1500 });
    const fallbacks = events.filter((e) => e.type === "summarizer_fallback");
    expect(fallbacks.length).toBeGreaterThan(0);
    expect(fallbacks[0].reason).toContain("OPENAI_API_KEY=[REDACTED:");
    expect(JSON.stringify(events)).not.toContain(key);
  });

  it.each(kFormats)("the step compactor, %s", (format) => {
    for (const run of runs) {
      const { canonical } = throughFormat(run, format);
      const r = compactStepMessages(canonical, { reducer: new StepReducer({ store: createMemoryStore() }), force: true });
      expect(r.compacted).toBe(true);
      expect(leaks(canonical, r.messages), format).toEqual([]);
      const summary = written(canonical, r.messages);
      expect(summary).toContain("Called deploy(prod, [REDACTED:credential])");
    }
  });

  it.each(kFormats)("block compaction and session compaction, %s", (format) => {
    for (const run of runs) {
      const { canonical } = throughFormat(run, format);
      const loop = { id: 0, messages: assignTurns(canonical, 0) };
      const config = resolveSessionConfig({ keepFirstTurns: 1, keepRecent: 2, maxSummaryTokens: 4000 });
      const section = new DefaultBlockCompaction({ store: createMemoryStore() }).keepCompacted(loop, turnMapOf(loop), config, true)!;
      expect(section.messages).toHaveLength(1);
      expect(leaks(loop.messages, section.messages), format).toEqual([]);
      expect(written(loop.messages, section.messages)).toContain("DB_PASSWORD=[REDACTED:credential]");
      const r = compactMessages(loop.messages, { keepRecent: 2, maxSummaryTokens: 4000 }, 3000);
      expect(r.level).toBeGreaterThanOrEqual(2);
      expect(leaks(loop.messages, r.messages), format).toEqual([]);
    }
  });
});
