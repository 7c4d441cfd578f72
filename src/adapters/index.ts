/**
 * The five wire formats to and from the canonical model: one adapter each, detection, and the
 * two calls most users need (`parseMessages`, `renderMessages`).
 */
import type { Message } from "../model/schema.js";
import { aiSdkAdapter } from "./ai-sdk.js";
import { anthropicAdapter } from "./anthropic.js";
import type { Adapter, Format, ParseOptions, RenderOptions } from "./common.js";
import { detectFormat } from "./detect.js";
import { langchainAdapter } from "./langchain.js";
import { openaiChatAdapter } from "./openai-chat.js";
import { openaiResponsesAdapter } from "./openai-responses.js";

export { kFormats, kRawArgs, type Adapter, type Format, type ParseOptions, type RenderOptions } from "./common.js";
export { detectFormat } from "./detect.js";
export { compactionBoundary, isCompactionPart, serverContextKind, type ServerContextKind } from "./server-context.js";
// The providers' message shapes, as the adapters read and write them: each format's whole, and
// the types of a request's messages by name.
export type * as AiSdkShapes from "./ai-sdk-wire.js";
export type * as AnthropicShapes from "./anthropic-wire.js";
export type * as LangchainShapes from "./langchain-wire.js";
export type * as OpenAIChatShapes from "./openai-chat-wire.js";
export type * as OpenAIResponsesShapes from "./openai-responses-wire.js";
export type { AiSdkWire } from "./ai-sdk-wire.js";
export type { AnthropicWire } from "./anthropic-wire.js";
export type { LangchainWire } from "./langchain-wire.js";
export type { OpenAIChatWire } from "./openai-chat-wire.js";
export type { OpenAIResponsesWire } from "./openai-responses-wire.js";
export { aiSdkAdapter, anthropicAdapter, langchainAdapter, openaiChatAdapter, openaiResponsesAdapter };

export const kAdapters: { readonly [F in Format]: Adapter<unknown> } = {
  "openai-chat": openaiChatAdapter,
  "openai-responses": openaiResponsesAdapter,
  anthropic: anthropicAdapter,
  "ai-sdk": aiSdkAdapter,
  langchain: langchainAdapter,
};

/** Parses wire messages of `options.format`, or of the detected format, into canonical messages. */
export function parseMessages(data: unknown, options: ParseOptions & { format?: Format } = {}): { format: Format; messages: Message[] } {
  const format = detectFormat(data, options.format);
  return { format, messages: kAdapters[format].parse(data, options) };
}

/**
 * Renders canonical messages in `format`: an array of that provider's messages, or for
 * "anthropic" an object with `messages` (and `system` when there is a system prompt).
 */
export function renderMessages(messages: readonly Message[], format: Exclude<Format, "anthropic">, options?: RenderOptions): unknown[];
export function renderMessages(messages: readonly Message[], format: Format, options?: RenderOptions): unknown;
export function renderMessages(messages: readonly Message[], format: Format, options?: RenderOptions): unknown {
  return kAdapters[detectFormat([], format)].render(messages, options);
}
