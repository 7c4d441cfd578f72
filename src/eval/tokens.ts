/**
 * The eval's token count: exact o200k with OpenAI's per-message overheads (3 per message, 3 per
 * tool call, 3 per request), the way the compactor's own measure counts the OpenAI chat format.
 * Every budget check of the metrics, and every contender that takes a counter, counts with it.
 * A request's tokens are additive: `promptTokens(ms)` = the reply primer + Σ `messageTokens(m)`.
 */
import type { Message } from "../model/schema.js";
import type { OpenAIChatMessage } from "../adapters/openai-chat.js";
import { parseMessages } from "../adapters/index.js";
import { providerOf, tokenMeasure } from "../tokens/measure.js";
import { TokenCounter } from "../tokens/token-counter.js";

/** Exact o200k with OpenAI's per-message overheads: what the bench measures with, shared by the contenders that take a counter. */
export const kCounter = new TokenCounter({ encoding: "o200k_base", provider: "openai" });
/** The token measure the compactor budgets with, in the provider of the protocol's format (OpenAI chat). */
const kMeasure = tokenMeasure(kCounter, providerOf("openai-chat"));
const kCanonical = new WeakMap<object, Message>();

/** The canonical message of one OpenAI message, parsed once per message object. */
function canonicalOf(m: OpenAIChatMessage): Message {
  let c = kCanonical.get(m);
  if (c === undefined) kCanonical.set(m, (c = parseMessages([m], { format: "openai-chat" }).messages[0]));
  return c;
}

/** Exact tokens of one OpenAI message with its overheads (the token measure's, memoised per message object). */
export function messageTokens(m: OpenAIChatMessage): number {
  return kMeasure.exactOf(canonicalOf(m));
}

/** Exact tokens of a request: its messages plus the reply primer. */
export function promptTokens(messages: readonly OpenAIChatMessage[]): number {
  return kMeasure.exact(messages.map(canonicalOf));
}
