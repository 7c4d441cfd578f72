/**
 * The agent loop every integration test runs (issue 9's must-show): a generated 200-step agent
 * run replayed call by call — at each assistant message the agent calls the model with the
 * messages before it — through the integration, with a stub model that records the prompt it
 * receives. `checkPrompts` asserts what the issue asks of every prompt: within budget (exact
 * o200k with OpenAI's overheads, as `ctxfold eval` counts), no provider-rule violation the input
 * did not have, and a stable prefix between epochs (consecutive prompts share their earlier one
 * whole, message for message byte-identical, except where a new epoch starts; few epochs).
 */
import type { ModelMessage } from "ai";
import { expect } from "vitest";
import { parseMessages, renderMessages, type Format } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import type { LangchainMessage } from "../../src/adapters/langchain.js";
import type { AiSdkPromptMessage } from "../../src/integrations/ai-sdk.js";
import type { Message } from "../../src/model/schema.js";
import { TokenCounter, type CountableMessage } from "../../src/tokens/token-counter.js";
import { newViolations, validate } from "../../src/validate/index.js";

/** A generated agent run of `steps` tool steps (canonical messages). */
export function agentRun(steps = 200, seed = 9): Message[] {
  return generateRun({ seed, steps }).messages;
}

/** Indices i where the agent calls the model with messages[0..i) (before each assistant message). */
export function callPoints(messages: readonly Message[]): number[] {
  const at: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "assistant" && i > 0) at.push(i);
  });
  return at;
}

const counter = new TokenCounter({ encoding: "o200k_base", provider: "openai" });

/** Exact tokens of a request (OpenAI's overheads), as the eval counts them. */
export function exactTokens(messages: readonly Message[]): number {
  return counter.countMessages(renderMessages(messages, "openai-chat") as CountableMessage[], "exact");
}

/** One recorded call: what the agent passed in and what the model received, both in `format`. */
export interface RecordedCall {
  input: unknown;
  received: unknown;
}

/**
 * Asserts the issue's three properties over a loop's calls, `format` being the provider shape
 * the model received (see the module comment). Returns how many calls started a new epoch
 * (broke the prefix) and how many were over the budget before compaction.
 */
export function checkPrompts(calls: readonly RecordedCall[], budget: number, format: Format): { epochs: number; overBudget: number } {
  let epochs = 0;
  let overBudget = 0;
  let prev: string[] | undefined;
  calls.forEach((call, k) => {
    const input = parseMessages(call.input, { format }).messages;
    const received = parseMessages(call.received, { format }).messages;
    if (exactTokens(input) > budget) overBudget++;
    const tokens = exactTokens(received);
    expect(tokens, `call ${k}: ${tokens} tokens over the budget ${budget}`).toBeLessThanOrEqual(budget);
    const issues = newViolations(validate(input, format), validate(received, format)).filter((i) => i.severity === "error");
    expect(issues, `call ${k}: new provider-rule violations`).toEqual([]);
    const wire = wireMessages(call.received).map((m) => JSON.stringify(m));
    if (prev) {
      const keeps = prev.length <= wire.length && prev.every((m, j) => m === wire[j]);
      if (!keeps) epochs++;
    }
    prev = wire;
  });
  // Compaction happened, and most calls only appended (prompt caches keep hitting): an epoch
  // compacts to 60% of the budget and the next starts at 85%, so on the generated runs (steps
  // of ~500 tokens) a 16k budget sees a new epoch every ~6 calls.
  expect(overBudget, "the loop never went over the budget: it tests nothing").toBeGreaterThan(0);
  expect(epochs).toBeGreaterThan(0);
  expect(epochs, `${epochs} prefix breaks in ${calls.length} calls`).toBeLessThanOrEqual(Math.ceil(calls.length / 4));
  return { epochs, overBudget };
}

/** The message list of a wire request: an array, or an object's `messages` (Anthropic's system aside) or `input`. */
function wireMessages(wire: unknown): unknown[] {
  if (Array.isArray(wire)) return wire;
  const o = wire as { system?: unknown; messages?: unknown[]; input?: unknown[] };
  return [...(o.system !== undefined ? [o.system] : []), ...(o.messages ?? o.input ?? [])];
}

/** The adapter's dict form of LangChain message instances (what checkPrompts parses as "langchain"). */
export function dictsOf(messages: readonly object[]): LangchainMessage[] {
  return messages.map((m) => {
    const o = m as Record<string, unknown> & { getType(): string };
    const d: Record<string, unknown> = { type: o.getType() };
    for (const k of [
      "content",
      "id",
      "name",
      "additional_kwargs",
      "response_metadata",
      "tool_calls",
      "invalid_tool_calls",
      "usage_metadata",
      "tool_call_id",
      "status",
      "artifact",
    ]) {
      if (o[k] !== undefined) d[k] = o[k];
    }
    return d as LangchainMessage;
  });
}

/** The canonical run rendered in `format`, up to message `end` (what the agent holds at a call). */
export function historyIn(messages: readonly Message[], end: number, format: Format): unknown {
  return renderMessages(messages.slice(0, end), format);
}

/**
 * The provider prompt (LanguageModelV2 / V3 prompt) the AI SDK — and Mastra, through it — makes
 * of a ModelMessage[] history: new objects every call, string content as one text part,
 * consecutive tool messages combined. For loops that call a middleware or processor directly
 * (the SDK's own conversion costs ~70 ms a call on 500 messages).
 */
export function providerPrompt(messages: readonly ModelMessage[]): AiSdkPromptMessage[] {
  const out: { role: string; content: unknown }[] = [];
  for (const m of messages) {
    const content = typeof m.content === "string" ? (m.role === "system" ? m.content : [{ type: "text", text: m.content }]) : m.content.map((p) => ({ ...p }));
    const last = out.at(-1);
    if (m.role === "tool" && last?.role === "tool") (last.content as unknown[]).push(...(content as unknown[]));
    else out.push({ role: m.role, content });
  }
  return out as AiSdkPromptMessage[];
}
