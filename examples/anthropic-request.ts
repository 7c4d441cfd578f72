/**
 * ctxfold in front of the Anthropic Messages API: an agent loop that keeps its whole history and
 * sends a compacted request body on every call, with a prompt-cache breakpoint at the end of the
 * compacted prefix (`cacheBreakpoint: true`). Runs offline: `stubModel` stands in for
 * `anthropic.messages.create` (answering every call with a tool_use) and records the bodies it
 * gets; swap in `(body) => anthropic.messages.create(body)` for a real run.
 *
 * Each call prints the request's tokens before and after compaction, whether the compacted
 * prefix was kept (a cache hit) or a new epoch rebuilt it, and where the breakpoints are.
 */
import { pathToFileURL } from "node:url";
import { parseMessages, renderMessages, TokenCounter } from "ctxfold";
import type { CountableMessage } from "ctxfold/tokens";
import { compactAnthropicRequest } from "ctxfold/requests";
import { readFile } from "./fake-files.js";

type Block = { type: string; [key: string]: unknown };
type Message = { role: "user" | "assistant"; content: string | Block[] };
type Body = { model: string; max_tokens: number; system: string; messages: Message[]; tools: unknown[] };

const tools = [
  { name: "read_file", description: "Read a file.", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
];

/** The model stand-in: records each body, asks to read the next file. */
function stubModel() {
  const bodies: Body[] = [];
  const create = async (body: Body) => {
    bodies.push(body);
    const n = bodies.length;
    return {
      content: [
        { type: "text", text: `Reading module ${n}.` },
        { type: "tool_use", id: `toolu_${n}`, name: "read_file", input: { path: `src/module${n}.ts` } },
      ] as Block[],
    };
  };
  return { bodies, create };
}

const counter = new TokenCounter({ encoding: "o200k_base", provider: "openai" });
/** Tokens of a request's system and messages (o200k with OpenAI's overheads, as ctxfold budgets them). */
const tokens = (body: { system?: unknown; messages: unknown[] }) =>
  counter.countMessages(renderMessages(parseMessages(body, { format: "anthropic" }).messages, "openai-chat") as CountableMessage[], "exact");

/** Indices of the messages holding a cache_control. */
const breakpoints = (messages: Message[]) => messages.flatMap((m, i) => (Array.isArray(m.content) && m.content.some((b) => b.cache_control) ? [i] : []));

export async function main(steps = 30, log: (line: string) => void = console.log): Promise<{ calls: number; epochs: number; maxTokens: number }> {
  const options = { budget: 12_000, cacheBreakpoint: true }; // or { cacheBreakpoint: true } for a model ctxfold knows
  const model = stubModel();
  const system = "You are a coding agent. Read what you need, then answer.";
  const history: Message[] = [{ role: "user", content: "Find where the retry policy is configured." }];
  let prev: string[] | undefined;
  let epochs = 0;
  let maxTokens = 0;
  for (let step = 1; step <= steps; step++) {
    const body = await compactAnthropicRequest({ model: "claude-sonnet-4-20250514", max_tokens: 1024, system, messages: history, tools }, options);
    const reply = await model.create(body);

    const sent = body.messages.map((m) => JSON.stringify(m));
    const kept = prev?.every((m, i) => m === sent[i]);
    if (prev !== undefined && !kept) epochs++;
    prev = sent;
    const out = tokens(body);
    maxTokens = Math.max(maxTokens, out);
    log(
      `call ${step}: ${tokens({ system, messages: history })} -> ${out} tokens, ${body.messages.length} messages, ${kept ? "prefix kept (cache hit)" : step === 1 ? "first call" : "new epoch"}, cache_control on message ${breakpoints(body.messages).join(", ")}`,
    );

    history.push({ role: "assistant", content: reply.content });
    const results = reply.content
      .filter((b) => b.type === "tool_use")
      .map((b) => ({ type: "tool_result", tool_use_id: b.id, content: readFile((b.input as { path: string }).path) }));
    history.push({ role: "user", content: results });
  }
  return { calls: model.bodies.length, epochs, maxTokens };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
