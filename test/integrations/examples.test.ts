import { describe, expect, it } from "vitest";
import { parseMessages } from "../../src/adapters/index.js";
import { main as aiSdkExample } from "../../examples/ai-sdk-middleware.js";
import { main as mastraExample } from "../../examples/mastra-processor.js";
import { exactTokens } from "./harness.js";

// Each example's main(), run with a few steps and its lines collected instead of printed.
describe.each([
  ["examples/ai-sdk-middleware.ts", aiSdkExample],
  ["examples/mastra-processor.ts", mastraExample],
])("%s", (_, main) => {
  it("runs offline: a line per model call, compaction with epochs, every prompt the model got within the budget", async () => {
    const steps = 30;
    const lines: string[] = [];
    const r = await main(steps, (line) => lines.push(line));
    expect(r.prompts).toHaveLength(steps);
    expect(r.reports).toHaveLength(steps);
    expect(lines).toHaveLength(steps + 1);
    expect(lines[0]).toMatch(/^call {3}1: +\d+ → +\d+ tokens$/);
    expect(lines.some((l) => / new epoch 1: prefix rebuilt$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(new RegExp(`^${steps} steps, \\d+ epochs, every prompt ≤ ${r.budget} tokens: true$`));
    expect(r.reports.some((i) => i.tokensBefore > r.budget)).toBe(true);
    for (const prompt of r.prompts) expect(exactTokens(parseMessages(prompt, { format: "ai-sdk" }).messages)).toBeLessThanOrEqual(r.budget);
    expect(r.text).toBe(`Read ${steps - 1} files.`); // the stub's answer at the last step
  }, 60_000);
});
