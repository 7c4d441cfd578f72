/**
 * detectFormat: which of the five wire formats a conversation is in, from its shape.
 *
 * Evidence is read message by message until something only one format has turns up:
 * Responses item types (function_call, input_text, ...), LangChain `type` keys (human, ai),
 * Anthropic blocks (tool_use, tool_result, thinking) or a `{ system, messages }` request,
 * AI SDK parts (tool-call, tool-result with toolCallId), OpenAI `tool_calls` / `tool_call_id` /
 * `function_call`. A conversation of plain `{ role, content: string }` messages reads the same
 * in every role-based format and is reported as "openai-chat".
 */
import { CtxfoldError } from "../errors.js";
import { type Format, isObject, kFormats } from "./common.js";

const kResponsesItemTypes = new Set([
  "message",
  "function_call",
  "function_call_output",
  "reasoning",
  "item_reference",
  "web_search_call",
  "file_search_call",
  "computer_call",
  "computer_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "mcp_call",
  "local_shell_call",
  "local_shell_call_output",
  "image_generation_call",
  "code_interpreter_call",
  "compaction",
  "compaction_trigger",
]);
const kResponsesPartTypes = new Set(["input_text", "output_text", "input_image", "input_file", "input_audio", "summary_text"]);
const kLangchainTypes = new Set(["human", "ai", "tool", "system", "function", "chat", "generic", "remove", "AIMessageChunk", "HumanMessageChunk"]);
const kAnthropicBlocks = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "web_search_tool_result",
  "document",
  "search_result",
  "compaction",
]);
const kAiSdkParts = new Set(["tool-call", "tool-result", "reasoning", "file", "tool-approval-request", "tool-approval-response"]);

/** The format one wire message proves, if any. */
function evidence(m: unknown): Format | undefined {
  if (!isObject(m)) return undefined;
  if (typeof m.type === "string" && !("role" in m)) {
    if (kResponsesItemTypes.has(m.type)) return "openai-responses";
    if (kLangchainTypes.has(m.type)) return "langchain";
  }
  if (m.type === "message" && "role" in m) return "openai-responses";
  if ("tool_calls" in m || "tool_call_id" in m || "function_call" in m) {
    // LangChain dicts also carry tool_calls / tool_call_id, but with a `type` key.
    if (typeof m.type === "string" && kLangchainTypes.has(m.type)) return "langchain";
    if (Array.isArray(m.tool_calls) && m.tool_calls.some((c) => isObject(c) && "args" in c && !("function" in c))) return "langchain";
    return "openai-chat";
  }
  if (m.role === "developer") return "openai-chat";
  if ("providerOptions" in m) return "ai-sdk";
  if (Array.isArray(m.content)) {
    for (const p of m.content) {
      if (!isObject(p) || typeof p.type !== "string") continue;
      if (kResponsesPartTypes.has(p.type)) return "openai-responses";
      if (kAnthropicBlocks.has(p.type) || "cache_control" in p) return "anthropic";
      if (p.type === "file" && isObject(p.file)) return "openai-chat"; // chat's { type: "file", file: { file_id | file_data } }
      if (kAiSdkParts.has(p.type) || "providerOptions" in p || "toolCallId" in p) return "ai-sdk";
      if (p.type === "image_url" || p.type === "input_audio" || p.type === "refusal") return "openai-chat";
      if (p.type === "image" && isObject(p.source)) return "anthropic";
      if (p.type === "image" && "image" in p) return "ai-sdk";
    }
  }
  return undefined;
}

/**
 * The wire format of `data` (a message array, or an Anthropic `{ system?, messages }` request).
 * `override` skips detection (after checking it names a format).
 */
export function detectFormat(data: unknown, override?: Format): Format {
  if (override !== undefined) {
    if (!(kFormats as readonly string[]).includes(override)) {
      throw new CtxfoldError("E_UNKNOWN_FORMAT", `unknown format ${JSON.stringify(override)} (one of ${kFormats.join(", ")})`, { path: "format" });
    }
    return override;
  }
  let messages: unknown = data;
  if (isObject(data)) {
    if (!Array.isArray(data.messages)) throw new CtxfoldError("E_UNKNOWN_FORMAT", "expected an array of messages or an object with a `messages` array");
    if ("system" in data) return "anthropic";
    messages = data.messages;
  }
  if (!Array.isArray(messages)) throw new CtxfoldError("E_UNKNOWN_FORMAT", "expected an array of messages or an object with a `messages` array");
  for (const m of messages) {
    const f = evidence(m);
    if (f) return f;
  }
  if (messages.every((m) => isObject(m) && typeof m.role === "string")) return "openai-chat";
  const i = messages.findIndex((m) => !isObject(m) || (typeof m.role !== "string" && typeof m.type !== "string"));
  throw new CtxfoldError("E_UNKNOWN_FORMAT", "cannot tell the format: a message has neither `role` nor `type`", { path: `messages[${Math.max(i, 0)}]` });
}
