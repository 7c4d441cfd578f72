// Compile-time checks that the recall tools are what the frameworks take (the built declarations),
// type-checked by typed-results.test.ts with tsc: the AI SDK's own `Tool` type and generateText's
// tool set take ctxfold/ai-sdk's tool, with its input and output types; LangChain's createAgent
// and bindTools take ctxfold/langchain's. Neither module imports the framework at run time.
import { generateText, type Tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { createAgent } from "langchain";
import { ctxfoldRecallTool, type RecallResult } from "../../dist/src/integrations/ai-sdk.js";
import { ctxfoldRecallTool as langChainRecallTool } from "../../dist/src/integrations/langchain.js";
import { createMemoryStore } from "../../dist/src/store/index.js";

export async function checks(): Promise<void> {
  const store = createMemoryStore();
  const recall = ctxfoldRecallTool({ store });
  const asTool: Tool<{ ref: string; offset?: number }, RecallResult> = recall;
  void asTool;
  const r = await generateText({ model: new MockLanguageModelV3(), prompt: "go", tools: { recall } });
  for (const result of r.toolResults) {
    if (result.dynamic) continue;
    const page: RecallResult = result.output;
    void page;
  }
  // @ts-expect-error the tool's input needs a ref
  await recall.execute({ offset: 3 });

  const lc = await langChainRecallTool({ store });
  createAgent({ model: "openai:gpt-4o", tools: [lc] });
}
