import { MockLanguageModelV3 } from "ai/test";

/**
 * The examples' stub model (AI SDK's MockLanguageModelV3, which Mastra runs too): at call n it
 * asks to read src/module<n>.ts; from call `steps` on it answers. It records every prompt it
 * receives (`doGenerateCalls`).
 */
export function stubReaderModel(steps: number): MockLanguageModelV3 {
  const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
  const model: MockLanguageModelV3 = new MockLanguageModelV3({
    modelId: "stub-model",
    doGenerate: async () => {
      const n = model.doGenerateCalls.length; // the call being answered (its prompt is recorded)
      return n < steps
        ? {
            content: [{ type: "tool-call", toolCallId: `call_${n}`, toolName: "readFile", input: JSON.stringify({ path: `src/module${n}.ts` }) }],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage,
            warnings: [],
          }
        : { content: [{ type: "text", text: `Read ${n - 1} files.` }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    },
  });
  return model;
}
