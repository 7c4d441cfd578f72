/**
 * The providers' fixed per-message overheads, apart from the token counter so that both the
 * counter and the token measure of canonical messages (measure.ts) read them without importing
 * each other.
 */
export type Provider = "openai" | "anthropic";

/**
 * Per-message overheads, in tokens, added to the content when a whole message is counted.
 *
 * - openai: OpenAI's cookbook ("How to count tokens with tiktoken", gpt-4o / gpt-4 / 3.5-turbo
 *   0613+): 3 per message (`<|start|>{role}<|message|>`), 1 more when `name` is set, and 3 for
 *   the reply primer, counted once per request. A tool call is rendered as its name and its
 *   arguments plus a wrapper we take as 3 tokens (not documented by OpenAI; measured usage
 *   agrees within a few tokens per call).
 * - anthropic: Anthropic's tokenizer is not public; the figures are approximations of the
 *   same shape (role header per message, a wrapper per tool_use / tool_result block). The
 *   ContextTracker corrects them with the usage the provider reports back.
 */
export const kMessageOverhead: Readonly<
  Record<Provider, { perMessage: number; perName: number; perToolCall: number; perToolResult: number; perRequest: number }>
> = Object.freeze({
  openai: { perMessage: 3, perName: 1, perToolCall: 3, perToolResult: 0, perRequest: 3 },
  anthropic: { perMessage: 3, perName: 0, perToolCall: 6, perToolResult: 4, perRequest: 3 },
});
