/**
 * ctxfold in front of OpenAI Chat Completions: an agent loop that keeps its whole history and
 * sends the model a compacted request body on every call. Runs offline: `stubModel` stands in
 * for `openai.chat.completions.create` (answering every call with a tool call) and records the
 * bodies it gets; swap in `(body) => openai.chat.completions.create(body)` for a real run.
 *
 * Each call prints the request's tokens before and after compaction, and whether the compacted
 * prefix was kept (the previous request is a prefix of this one: the provider's prompt cache
 * hits) or a new epoch rebuilt it.
 */
import { pathToFileURL } from "node:url";
import { TokenCounter } from "ctxfold";
import type { CountableMessage } from "ctxfold/tokens";
import { compactOpenAIRequest } from "ctxfold/requests";
import { readFile } from "./fake-files.js";

type ChatMessage = { role: string; content: string | null; tool_calls?: ToolCall[]; tool_call_id?: string };
type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type Body = { model: string; messages: ChatMessage[]; tools: unknown[]; max_completion_tokens: number };

const tools = [
  {
    type: "function",
    function: { name: "read_file", description: "Read a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  },
];

/** The model stand-in: records each body, asks to read the next file. */
function stubModel() {
  const bodies: Body[] = [];
  const create = async (body: Body) => {
    bodies.push(body);
    const n = bodies.length;
    const call: ToolCall = { id: `call_${n}`, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: `src/module${n}.ts` }) } };
    return { choices: [{ message: { role: "assistant", content: `Reading module ${n}.`, tool_calls: [call] } as ChatMessage }] };
  };
  return { bodies, create };
}

const counter = new TokenCounter({ encoding: "o200k_base", provider: "openai" });
const tokens = (messages: ChatMessage[]) => counter.countMessages(messages as CountableMessage[], "exact");

export async function main(steps = 30, log: (line: string) => void = console.log): Promise<{ calls: number; epochs: number; maxTokens: number }> {
  const options = { budget: 12_000 }; // or {} for a model ctxfold knows: its window minus max_completion_tokens and the tools
  const model = stubModel();
  const history: ChatMessage[] = [
    { role: "system", content: "You are a coding agent. Read what you need, then answer." },
    { role: "user", content: "Find where the retry policy is configured." },
  ];
  let prev: string[] | undefined;
  let epochs = 0;
  let maxTokens = 0;
  for (let step = 1; step <= steps; step++) {
    const body = await compactOpenAIRequest({ model: "gpt-4o", messages: history, tools, max_completion_tokens: 1024 }, options);
    const reply = await model.create(body);

    const sent = body.messages.map((m) => JSON.stringify(m));
    const kept = prev?.every((m, i) => m === sent[i]);
    if (prev !== undefined && !kept) epochs++;
    prev = sent;
    const out = tokens(body.messages);
    maxTokens = Math.max(maxTokens, out);
    log(
      `call ${step}: ${tokens(history)} -> ${out} tokens, ${body.messages.length} messages, ${prev && kept ? "prefix kept (cache hit)" : step === 1 ? "first call" : "new epoch"}`,
    );

    const message = reply.choices[0].message;
    history.push(message);
    for (const call of message.tool_calls ?? [])
      history.push({ role: "tool", tool_call_id: call.id, content: readFile(JSON.parse(call.function.arguments).path) });
  }
  return { calls: model.bodies.length, epochs, maxTokens };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
