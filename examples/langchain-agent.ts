/**
 * ctxfold as a LangChain v1 agent middleware: `ctxfoldMiddleware` in `createAgent`'s middleware
 * list compacts what every model call sends, while the agent's state keeps the whole history.
 * Runs offline: the chat model is a stand-in that records the prompts it gets and asks to read
 * one file per step; swap in `new ChatOpenAI({ model: "gpt-4o" })` (or any tool-calling chat
 * model) for a real run.
 *
 * Each model call prints the history's and the prompt's size, and whether the prompt kept the
 * previous prompt's messages (the very same objects: the provider's prompt cache hits) or a new
 * epoch rebuilt it.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, getBufferString, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { createAgent, tool } from "langchain";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { TokenCounter } from "ctxfold";
import { ctxfoldMiddleware } from "ctxfold/langchain";
import { readFile } from "./fake-files.js";

/** The chat model stand-in: records each prompt; at call n < steps it asks to read src/module<n>.ts, then answers. */
class StubReader extends BaseChatModel {
  readonly prompts: BaseMessage[][] = [];

  constructor(readonly steps: number) {
    super({});
  }

  _llmType(): string {
    return "stub-reader";
  }

  // The agent binds its tools to the model; the stand-in knows its one tool already.
  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.prompts.push(messages);
    const n = this.prompts.length;
    const message =
      n < this.steps
        ? new AIMessage({
            content: `Reading module ${n}.`,
            tool_calls: [{ id: `call_${n}`, name: "read_file", args: { path: `src/module${n}.ts` }, type: "tool_call" }],
          })
        : new AIMessage(`Read ${n - 1} files.`);
    return { generations: [{ text: String(message.content), message }] };
  }
}

const readFileTool = tool(({ path }) => readFile(path), {
  name: "read_file",
  description: "Reads a file of the project.",
  schema: z.object({ path: z.string() }),
});

const counter = new TokenCounter({ encoding: "o200k_base" });
/** About how many tokens the messages are (their text as LangChain prints it). */
const tokens = (messages: BaseMessage[]) => counter.count(getBufferString(messages), "exact");

export async function main(steps = 30, log: (line: string) => void = console.log): Promise<{ calls: number; epochs: number; history: number }> {
  const model = new StubReader(steps);
  const agent = createAgent({
    model,
    tools: [readFileTool],
    systemPrompt: "You are a coding agent. Read what you need, then answer.",
    middleware: [ctxfoldMiddleware({ budget: 12_000 })], // or { model: "gpt-4o" }: its context window
  });
  const result = await agent.invoke(
    { messages: [new HumanMessage("Find where the retry policy is configured.")] },
    { configurable: { thread_id: "demo" }, recursionLimit: 4 * steps + 10 },
  );

  // What each call got, against the history the agent held then (its system prompt, the task, two messages a step).
  let epochs = 0;
  model.prompts.forEach((prompt, k) => {
    const before = model.prompts[k - 1];
    const kept = before?.every((m, i) => m === prompt[i]);
    if (before !== undefined && !kept) epochs++;
    const held = [prompt[0], ...result.messages.slice(0, 1 + 2 * k)];
    log(
      `call ${k + 1}: ${tokens(held)} -> ${tokens(prompt)} tokens, ${prompt.length} messages, ${kept ? "prefix kept (same objects)" : k === 0 ? "first call" : "new epoch"}`,
    );
  });
  return { calls: model.prompts.length, epochs, history: result.messages.length };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
