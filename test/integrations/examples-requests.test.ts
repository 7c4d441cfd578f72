// The integration examples (examples/*.ts) run as documented: offline, a line per call, the
// requests within the example's budget, and both kinds of calls (prefix kept, new epoch) shown.
import { describe, expect, it } from "vitest";
import { main as anthropicRequest } from "../../examples/anthropic-request.js";
import { main as langchainAgent } from "../../examples/langchain-agent.js";
import { main as langchainRunnable } from "../../examples/langchain-runnable.js";
import { main as openaiRequest } from "../../examples/openai-request.js";

const steps = 14;

/** Runs an example's main, collecting its lines; checks a line per call and both kinds of calls. */
async function run<R extends { calls: number; epochs: number }>(
  main: (steps: number, log: (line: string) => void) => Promise<R>,
): Promise<{ lines: string[]; result: R }> {
  const lines: string[] = [];
  const result = await main(steps, (line) => lines.push(line));
  expect(result.calls).toBe(steps);
  expect(lines.length).toBe(steps);
  lines.forEach((line, k) => expect(line).toMatch(new RegExp(`^call ${k + 1}: \\d+ -> \\d+ tokens, \\d+ messages, `)));
  expect(result.epochs).toBeGreaterThan(0);
  expect(lines.filter((l) => l.includes("new epoch")).length).toBe(result.epochs);
  expect(lines.some((l) => l.includes("prefix kept"))).toBe(true);
  return { lines, result };
}

describe("examples", () => {
  it("openai-request: compacted bodies within its 12k budget", async () => {
    const { result } = await run(openaiRequest);
    expect(result.maxTokens).toBeLessThanOrEqual(12_000);
  });

  it("anthropic-request: within its 12k budget, a cache breakpoint on every call", async () => {
    const { lines, result } = await run(anthropicRequest);
    expect(result.maxTokens).toBeLessThanOrEqual(12_000);
    for (const line of lines) expect(line).toMatch(/cache_control on message \d+$/);
  });

  it("langchain-runnable: the chain's prompts keep their objects between epochs", async () => {
    await run(langchainRunnable);
  });

  it("langchain-agent: createAgent's model calls keep their objects between epochs; its state keeps every message", async () => {
    const { result } = await run(langchainAgent);
    expect(result.history).toBe(2 * steps); // the task, a call and its result a step, the answer
  });
});
