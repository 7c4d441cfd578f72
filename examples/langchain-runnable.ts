/**
 * ctxfold as a step of a LangChain.js chain: `ctxfoldRunnable` (a RunnableLambda) compacts the
 * message list in front of the chat model, one session per `thread_id`. Runs offline: the chat
 * model is a RunnableLambda stand-in that records the prompts it gets and answers with a tool
 * call; swap in `new ChatOpenAI({ model: "gpt-4o" })` (or any chat model) for a real run.
 *
 * Each call prints the history's and the prompt's size, and whether the prompt kept the previous
 * prompt's messages (the very same objects: the provider's prompt cache hits) or a new epoch
 * rebuilt it.
 */
import { AIMessage, getBufferString, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { pathToFileURL } from "node:url";
import { TokenCounter } from "ctxfold";
import { ctxfoldRunnable } from "ctxfold/langchain";
import { readFile } from "./fake-files.js";

/** The chat model stand-in: records each prompt, asks to read the next file. */
function stubModel() {
  const prompts: BaseMessage[][] = [];
  const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
    prompts.push(messages);
    const n = prompts.length;
    return new AIMessage({
      content: `Reading module ${n}.`,
      tool_calls: [{ id: `call_${n}`, name: "read_file", args: { path: `src/module${n}.ts` }, type: "tool_call" }],
    });
  });
  return { prompts, model };
}

const counter = new TokenCounter({ encoding: "o200k_base" });
/** About how many tokens the messages are (their text as LangChain prints it). */
const tokens = (messages: BaseMessage[]) => counter.count(getBufferString(messages), "exact");

export async function main(steps = 30, log: (line: string) => void = console.log): Promise<{ calls: number; epochs: number }> {
  const compact = await ctxfoldRunnable<BaseMessage>({ budget: 12_000 }); // or { model: "gpt-4o" }: its context window
  const { prompts, model } = stubModel();
  const chain = compact.pipe(model);
  const history: BaseMessage[] = [
    new SystemMessage("You are a coding agent. Read what you need, then answer."),
    new HumanMessage("Find where the retry policy is configured."),
  ];
  let epochs = 0;
  for (let step = 1; step <= steps; step++) {
    const reply = (await chain.invoke(history, { configurable: { thread_id: "demo" } })) as AIMessage;

    const prompt = prompts.at(-1)!;
    const before = prompts.at(-2);
    const kept = before?.every((m, i) => m === prompt[i]);
    if (before !== undefined && !kept) epochs++;
    log(
      `call ${step}: ${tokens(history)} -> ${tokens(prompt)} tokens, ${prompt.length} messages, ${kept ? "prefix kept (same objects)" : step === 1 ? "first call" : "new epoch"}`,
    );

    history.push(reply);
    for (const call of reply.tool_calls ?? []) history.push(new ToolMessage({ tool_call_id: call.id!, content: readFile(String(call.args.path)) }));
  }
  return { calls: prompts.length, epochs };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
