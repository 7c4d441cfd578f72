import { describe, expect, it } from "vitest";
import { kAdapters, kFormats, parseMessages, renderMessages } from "../../src/adapters/index.js";
import { generateRuns } from "../../src/gen/run.js";
import { budgetOf, conversationKey, prefixKey, SessionPool, type IntegrationOptions, type UsageEvent } from "../../src/integrations/common.js";
import { modelProfileOf } from "../../src/tokens/models.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import type { Message } from "../../src/model/schema.js";
import { thrown } from "../helpers.js";
import { agentRun, callPoints, checkPrompts, historyIn, type RecordedCall } from "./harness.js";

const text = (id: string, role: Message["role"], t: string): Message => ({ id, role, parts: [{ type: "text", text: t }], meta: {} });

describe("budgetOf", () => {
  it("takes the budget, else the known or given context window minus the reserve", () => {
    expect(budgetOf({ budget: 9000 }, "anything")).toBe(9000);
    expect(modelProfileOf("openai/gpt-4o-mini-2024-07-18")?.contextWindow).toBe(128_000);
    expect(modelProfileOf("claude-sonnet-4-20250514")?.contextWindow).toBe(200_000);
    expect(budgetOf({}, "gpt-4o")).toBe(128_000 - 4096);
    expect(budgetOf({ contextWindow: 32_000, reserveTokens: 2000 }, "my-local-model")).toBe(30_000);
  });

  it("an unknown model without a budget says so; a bad budget names the field", () => {
    expect(thrown(() => budgetOf({}, "my-local-model"), "E_BAD_INPUT").message).toMatch(/context size of model "my-local-model" is unknown: pass budget/);
    expect(thrown(() => budgetOf({ budget: 0 }), "E_BAD_INPUT").path).toBe("budget");
    expect(thrown(() => budgetOf({ contextWindow: 1000 }), "E_BAD_INPUT").path).toBe("reserveTokens");
  });

  it("a non-finite budget, window or reserve is named and shown as given", () => {
    expect(thrown(() => budgetOf({ budget: Number.NaN }), "E_BAD_INPUT")).toMatchObject({
      path: "budget",
      message: "budget: expected a positive integer, got NaN",
    });
    expect(thrown(() => budgetOf({ budget: Infinity }), "E_BAD_INPUT").message).toBe("budget: expected a positive integer, got Infinity");
    expect(thrown(() => budgetOf({ contextWindow: Number.NaN }), "E_BAD_INPUT")).toMatchObject({
      path: "contextWindow",
      message: "contextWindow: expected a positive integer, got NaN",
    });
    expect(thrown(() => budgetOf({ contextWindow: 32_000, reserveTokens: -Infinity }), "E_BAD_INPUT")).toMatchObject({
      path: "reserveTokens",
      message: "reserveTokens: expected a non-negative integer, got -Infinity",
    });
  });
});

describe("budgetOf with model profiles and usage feedback", () => {
  it("converts a non-OpenAI window to ctxfold's measure by the profile's factor and margin", () => {
    for (const id of [
      "claude-opus-4-7",
      "claude-sonnet-4-5-20250929",
      "gemini-2.5-pro",
      "llama-3.3-70b-versatile",
      "qwen3-32b",
      "deepseek-chat",
      "mistral-large-latest",
    ]) {
      const p = modelProfileOf(id)!;
      expect(p.factor, id).toBeGreaterThan(0);
      expect(budgetOf({}, id), id).toBe(Math.floor((p.contextWindow - 4096) / (p.factor * (1 + p.margin))));
    }
    // Claude's updated tokenizer (Opus 4.7 on) counts more than the earlier one: a smaller budget from the same 1M window.
    expect(budgetOf({}, "claude-opus-4-7")).toBeLessThan(budgetOf({}, "claude-opus-4-6"));
  });

  it("counts OpenAI models in their own encoding: exact, no factor", () => {
    expect(budgetOf({}, "gpt-4.1-mini")).toBe(1_047_576 - 4096);
    expect(budgetOf({}, "gpt-5.1-codex")).toBe(272_000); // the input cap, below 400,000 − 4096
    // gpt-4 is cl100k_base: exact with a cl100k_base counter, converted with the default o200k_base one.
    expect(budgetOf({ counter: new TokenCounter({ encoding: "cl100k_base" }) }, "gpt-4-0613")).toBe(8192 - 4096);
    const p = modelProfileOf("gpt-4-0613")!;
    expect(budgetOf({}, "gpt-4-0613")).toBe(Math.floor(4096 / (p.factor * (1 + p.margin))));
  });

  it("a caller-given budget is ctxfold's measure: no profile, factor or usage ratio touches it", () => {
    expect(budgetOf({ budget: 9000 }, "claude-opus-4-7", 2.5)).toBe(9000);
  });

  it("after a usage report the ratio replaces the profile (with 3 % on top); usageFeedback: false keeps the profile", () => {
    expect(budgetOf({}, "claude-opus-4-7", 1.5)).toBe(Math.floor((1_000_000 - 4096) / (1.5 * 1.03)));
    expect(budgetOf({ usageFeedback: false }, "claude-opus-4-7", 1.5)).toBe(budgetOf({}, "claude-opus-4-7"));
  });

  it("modelProfile overrides the model's profile per call, or stands for one; a bad field is named", () => {
    expect(budgetOf({ modelProfile: { factor: 2, margin: 0 } }, "gemini-2.5-flash")).toBe(Math.floor((1_048_576 - 4096) / 2));
    expect(budgetOf({ modelProfile: { contextWindow: 50_000, factor: 1.25, margin: 0 }, reserveTokens: 0 }, "my-local-model")).toBe(40_000);
    expect(thrown(() => budgetOf({ modelProfile: { factor: -1 } }, "gpt-4o"), "E_BAD_INPUT")).toMatchObject({ path: "modelProfile.factor" });
    expect(thrown(() => budgetOf({ modelProfile: { contextWindow: 1.5 } }, "gpt-4o"), "E_BAD_INPUT")).toMatchObject({ path: "modelProfile.contextWindow" });
    expect(thrown(() => budgetOf({ modelProfile: "big" as never }, "gpt-4o"), "E_BAD_INPUT")).toMatchObject({ path: "modelProfile" });
  });
});

describe("SessionPool's usage feedback (the entry point every integration reports through)", () => {
  it("applies a report to what the conversation's last call sent, per model, once", () => {
    const pool = new SessionPool();
    const events: UsageEvent[] = [];
    const onUsage = (e: UsageEvent) => events.push(e);
    pool.session("c");
    expect(pool.usageRatio("c", "m")).toBeUndefined();
    pool.noteSent("c", "m", 1000);
    pool.recordUsage("c", { prompt_tokens: 1400 }, { onUsage });
    expect(pool.usageRatio("c", "m")).toBe(1.4);
    expect(pool.usageRatio("c", "other-model")).toBeUndefined();
    // The same call reported twice: the second has nothing to compare with.
    pool.recordUsage("c", { prompt_tokens: 9000 }, { onUsage });
    expect(events.map((e) => (e.status === "ignored" ? e.reason : e.status))).toEqual(["applied", "no_estimate"]);
    expect(events[0]).toMatchObject({ conversation: "c", model: "m", reported: 1400, estimated: 1000, before: undefined, after: 1.4 });
    expect(pool.usageRatio("c", "m")).toBe(1.4);
  });

  it("a report for a conversation it does not hold, or with usageFeedback false, changes nothing", () => {
    const pool = new SessionPool();
    const events: UsageEvent[] = [];
    expect(pool.recordUsage("nobody", 500, { onUsage: (e) => events.push(e) })).toMatchObject({ status: "ignored", reason: "no_estimate" });
    pool.session("c");
    pool.noteSent("c", "m", 1000);
    expect(pool.recordUsage("c", 500, { usageFeedback: false, onUsage: (e) => events.push(e) })).toBeUndefined();
    expect(events).toHaveLength(1);
    expect(pool.usageRatio("c", "m")).toBeUndefined();
  });
});

describe("sessions per conversation", () => {
  it("keys a conversation by its system messages and first user message only", () => {
    const a = [text("s", "system", "sys"), text("u", "user", "task A"), text("x", "assistant", "one")];
    expect(conversationKey(a)).toBe(conversationKey([...a, text("y", "user", "later steering")]));
    expect(conversationKey(a)).not.toBe(conversationKey([a[0], text("u", "user", "task B")]));
  });

  it("the integrations' own options (model, conversationId, cacheBreakpoint, …) do not reach the compactor's config", () => {
    const pool = new SessionPool({
      model: "gpt-4o",
      conversationId: "c",
      cacheBreakpoint: true,
      budget: 9000,
      reserveTokens: 100,
      targetRatio: 0.5,
    } as IntegrationOptions);
    expect(pool.compactor.settings.targetRatio).toBe(0.5);
    expect(() => new SessionPool({ targetRatio: 2 })).toThrow(/targetRatio/);
  });

  it("an integration's compactor settings may use a deprecated name (preserveRecentSteps, read as keepRecent)", () => {
    expect(new SessionPool({ preserveRecentSteps: 4 }).compactor.settings).toEqual(new SessionPool({ keepRecent: 4 }).compactor.settings);
    expect(() => new SessionPool({ preserveRecentSteps: 4, keepRecent: 1 })).toThrow(/^config\.preserveRecentSteps: the deprecated name of keepRecent/);
  });

  it("keeps at most maxSessions, dropping the least recently used", () => {
    const pool = new SessionPool({ maxSessions: 2 });
    const first = pool.session("a");
    pool.session("b");
    expect(pool.session("a")).toBe(first); // used again: now the most recent
    pool.session("c"); // drops b
    expect(pool.size).toBe(2);
    expect(pool.session("a")).toBe(first);
    expect(pool.session("b")).not.toBe(first);
  });
});

describe("the prefix key", () => {
  it("is conversationKey of the whole parse, computed from the first messages only", () => {
    for (const format of kFormats) {
      for (const run of generateRuns(3, 51)) {
        const rendered = JSON.parse(JSON.stringify(renderMessages(run.messages, format))) as unknown;
        const wire = format === "anthropic" ? (rendered as { messages: unknown[] }).messages : (rendered as unknown[]);
        const input = (n: number) => (format === "anthropic" ? { ...(rendered as object), messages: wire.slice(0, n) } : wire.slice(0, n));
        for (const n of [1, 2, 3, 5, wire.length]) {
          expect(prefixKey(format, input(n)), `${format}, ${n}`).toBe(conversationKey(kAdapters[format].parse(input(n))));
          // Parsed afresh: the same key (from the keys of recent prefixes).
          expect(prefixKey(format, JSON.parse(JSON.stringify(input(n))))).toBe(prefixKey(format, input(n)));
        }
      }
    }
  });
});

describe("the loop harness on a bare session (what every integration builds on)", () => {
  it("200 steps in OpenAI chat: within budget, valid, a stable prefix between epochs", async () => {
    const run = agentRun(200);
    const pool = new SessionPool();
    const budget = 16_000;
    const calls: RecordedCall[] = [];
    for (const at of callPoints(run)) {
      const input = historyIn(run, at, "openai-chat");
      const r = await pool.session(conversationKey(parseMessages(input, { format: "openai-chat" }).messages)).compact(input, { budget, format: "openai-chat" });
      calls.push({ input, received: r.messages });
    }
    const { epochs, overBudget } = checkPrompts(calls, budget, "openai-chat");
    expect(pool.size).toBe(1);
    expect(overBudget).toBeGreaterThan(100);
    expect(epochs).toBeGreaterThan(1);
  }, 120_000);
});

describe("the package's integration entry points", () => {
  it("ctxfold/ai-sdk, /mastra, /langchain, /requests and /eval resolve to the built modules with their exports", async () => {
    const load = (name: string) => import(/* @vite-ignore */ `ctxfold/${name}`) as Promise<Record<string, unknown>>;
    expect(Object.keys(await load("ai-sdk"))).toEqual(expect.arrayContaining(["ctxfoldMiddleware", "ctxfoldPrepareStep"]));
    expect(Object.keys(await load("mastra"))).toContain("CtxfoldProcessor");
    expect(Object.keys(await load("langchain"))).toEqual(expect.arrayContaining(["ctxfoldRunnable", "compactLangChainMessages"]));
    expect(Object.keys(await load("requests"))).toEqual(expect.arrayContaining(["compactOpenAIRequest", "compactAnthropicRequest"]));
    expect(Object.keys(await load("eval"))).toEqual(expect.arrayContaining(["evaluate", "parseThresholds"]));
  });
});
