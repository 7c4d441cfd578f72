import { describe, expect, it } from "vitest";
import { kAdapters, kFormats, parseMessages, renderMessages } from "../../src/adapters/index.js";
import { generateRuns } from "../../src/gen/run.js";
import { budgetOf, contextWindowOf, conversationKey, prefixKey, SessionPool, type IntegrationOptions } from "../../src/integrations/common.js";
import type { Message } from "../../src/model/schema.js";
import { thrown } from "../helpers.js";
import { agentRun, callPoints, checkPrompts, historyIn, type RecordedCall } from "./harness.js";

const text = (id: string, role: Message["role"], t: string): Message => ({ id, role, parts: [{ type: "text", text: t }], meta: {} });

describe("budgetOf", () => {
  it("takes the budget, else the known or given context window minus the reserve", () => {
    expect(budgetOf({ budget: 9000 }, "anything")).toBe(9000);
    expect(contextWindowOf("openai/gpt-4o-mini-2024-07-18")).toBe(128_000);
    expect(contextWindowOf("claude-sonnet-4-20250514")).toBe(200_000);
    expect(budgetOf({}, "gpt-4o")).toBe(128_000 - 4096);
    expect(budgetOf({ contextWindow: 32_000, reserveTokens: 2000 }, "my-local-model")).toBe(30_000);
  });

  it("an unknown model without a budget says so; a bad budget names the field", () => {
    expect(thrown(() => budgetOf({}, "my-local-model"), "E_BAD_INPUT").message).toMatch(/context size of model "my-local-model" is unknown: pass budget/);
    expect(thrown(() => budgetOf({ budget: 0 }), "E_BAD_INPUT").path).toBe("budget");
    expect(thrown(() => budgetOf({ contextWindow: 1000 }), "E_BAD_INPUT").path).toBe("reserveTokens");
  });

  it("a non-finite budget, window or reserve is named and shown as given", () => {
    expect(thrown(() => budgetOf({ budget: Number.NaN }), "E_BAD_INPUT")).toMatchObject({ path: "budget", message: "budget: expected a positive integer, got NaN" });
    expect(thrown(() => budgetOf({ budget: Infinity }), "E_BAD_INPUT").message).toBe("budget: expected a positive integer, got Infinity");
    expect(thrown(() => budgetOf({ contextWindow: Number.NaN }), "E_BAD_INPUT")).toMatchObject({ path: "contextWindow", message: "contextWindow: expected a positive integer, got NaN" });
    expect(thrown(() => budgetOf({ contextWindow: 32_000, reserveTokens: -Infinity }), "E_BAD_INPUT")).toMatchObject({ path: "reserveTokens", message: "reserveTokens: expected a non-negative integer, got -Infinity" });
  });
});

describe("sessions per conversation", () => {
  it("keys a conversation by its system messages and first user message only", () => {
    const a = [text("s", "system", "sys"), text("u", "user", "task A"), text("x", "assistant", "one")];
    expect(conversationKey(a)).toBe(conversationKey([...a, text("y", "user", "later steering")]));
    expect(conversationKey(a)).not.toBe(conversationKey([a[0], text("u", "user", "task B")]));
  });

  it("the integrations' own options (model, conversationId, cacheBreakpoint, …) do not reach the compactor's config", () => {
    const pool = new SessionPool({ model: "gpt-4o", conversationId: "c", cacheBreakpoint: true, budget: 9000, reserveTokens: 100, targetRatio: 0.5 } as IntegrationOptions);
    expect(pool.compactor.settings.targetRatio).toBe(0.5);
    expect(() => new SessionPool({ targetRatio: 2 })).toThrow(/targetRatio/);
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
