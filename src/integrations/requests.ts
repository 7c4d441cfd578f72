/**
 * Request-body helpers: compact the messages of an OpenAI Chat Completions, OpenAI Responses or
 * Anthropic Messages request body right before it is sent, whatever client sends it.
 *
 *   const body = await compactOpenAIRequest({ model: "gpt-4o", messages, tools }, { budget: 100_000 });
 *   const answer = await openai.chat.completions.create(body);
 *
 * Decisions:
 * - The body comes back as a new object of the same shape: `messages` (and Anthropic's `system`)
 *   compacted, every other field the very value it was (same key order). The caller's body, its
 *   messages and their blocks are never mutated; a block that gains or loses a `cache_control`
 *   is a copy.
 * - Budget: `budget` when given (the messages' budget, as everywhere in ctxfold); else the
 *   model's context window (`contextWindow`, or the model profile of `body.model`) minus
 *   the answer's room — the body's `max_completion_tokens` / `max_tokens` / `max_output_tokens`
 *   when present, else `reserveTokens` — in ctxfold's measure (budget.ts), minus the tool
 *   definitions (their JSON, exact o200k) and a Responses body's `instructions`: they take
 *   context too, and only a derived budget knows nothing about them. Unknown window and no
 *   budget: budgetOf's E_BAD_INPUT naming the model; an answer's room at or past the window:
 *   E_BAD_INPUT at the body's field (`body.max_tokens`), naming the window.
 * - Over budget: messages that cannot be brought within their budget (what must stay is
 *   larger) are E_OVER_BUDGET at `body.messages` (`body.input`), unless `onOverBudget:
 *   "return"`: the return type is the body, which has no room to say so.
 * - Originals: into the options' `store` when given, else into the pool's own, bounded by
 *   `maxStoreBytes` (pool-store.ts).
 * - Usage feedback: the third argument, `{ usage }`, is the provider's usage report of the
 *   conversation's previous request, as the response carried it (OpenAI Chat Completions'
 *   `usage` with `prompt_tokens`, Responses' `input_tokens`, Anthropic's `input_tokens` plus its
 *   cache fields; a bare number too). It is folded into the conversation's ratio of reported to
 *   estimated tokens (against ctxfold's estimate of that request: its messages, its tools and
 *   instructions) before this request's budget is taken, so from the second request on a derived
 *   budget is the window by the provider's own count. A third argument rather than an option:
 *   options that configure the compactor are one object reused across calls (see below), a
 *   report is new at every call. A report that holds no count, or an absurd one, is ignored or
 *   clamped with an `onUsage` event, never thrown.
 * - Server-side context: the request fields that configure it (Anthropic `context_management`
 *   and `compaction`, Responses `context_management`, `store`, `include`,
 *   `previous_response_id`) come back as they were; the compaction items and blocks in the
 *   messages are kept as the providers require (adapters/server-context.ts). A Responses body
 *   with `previous_response_id` carries only the new items: the server's stored context is not
 *   in the budget (nor in the estimate a usage report is compared with). A Responses `input`
 *   that is a string (one user message) or absent comes back as it is.
 * - Sessions: one per conversation, found by `conversationId` when given, else by the stable
 *   prefix (conversationKey), and per format (the same conversation sent to both providers, a
 *   fallback, keeps one session each: their canonical messages differ in format meta, so one
 *   shared session would start a new epoch at every switch). A call parses and renders only what
 *   its conversation's previous call did not have (common.ts's openConversation, the wire cache).
 * - Where the sessions live (common.ts's sessionPoolFor): options that only say how to budget and key
 *   (budget, contextWindow, reserveTokens, conversationId, cacheBreakpoint, model) share one
 *   module-wide pool, so options written inline on every call still keep their epochs; options
 *   that configure the compactor (a summariser, a store, onEvent, maxSessions, ...) get a pool
 *   of their own per options object — pass the same object on every call (hoist it), else each
 *   call starts afresh (still within budget, but a new epoch each time: no prompt-cache hits).
 *
 * Anthropic `cache_control` (prompt-caching breakpoints; the adapter keeps a block's
 * `cache_control` in its part meta, so a kept block keeps its breakpoint and a replaced one
 * would keep it too):
 * - A breakpoint stays only on a block that reaches the model byte-identical to a block of the
 *   request (the caller's breakpoint on kept content); one on content compaction replaced
 *   (a shortened tool result, a summarised text) is removed, and so is one on an empty text
 *   block (Anthropic rejects both an empty text block with cache_control and more than 4
 *   breakpoints). Content compaction removed takes its breakpoints with it.
 * - `cacheBreakpoint: true` marks the last block of the current epoch's compacted prefix (the
 *   last message of the output of the call that started the epoch; for a conversation not yet
 *   compacted, of its first call): the part every call of the epoch repeats byte for byte, so
 *   one cache write there is read by all of them. It goes on the last block that may carry one
 *   (not thinking / redacted_thinking, not empty text; a string content becomes one text
 *   block), walking back a message when the last has none; a block already marked counts as
 *   ours. Within an epoch calls only append, so the mark stays on the same block and the
 *   prefix stays byte-identical. It does not cache what the epoch appends: keep your own
 *   breakpoint on the last message for that (Anthropic's 20-block look-back finds the previous
 *   call's entry).
 * - At most 4 breakpoints: ours is placed only when tools and system hold fewer than 4 (they are
 *   the caller's explicit choices and cache the longest-lived prefix); past 4 the caller's
 *   message-level breakpoints go first, oldest first (a later breakpoint caches everything
 *   before it, so the oldest are the least useful), ours never; only a request whose tools and
 *   system alone hold more than 4 (which Anthropic rejects anyway) loses tools / system ones,
 *   earliest first, for the same reason.
 */
import { badValueError, CtxfoldError } from "../errors.js";
import type { AnthropicWire } from "../adapters/anthropic.js";
import { isObject } from "../adapters/common.js";
import type { CanonicalResult } from "../policy/types.js";
import { Draft, fixBreakpoints, prefixLength, requestMarks } from "./anthropic-breakpoints.js";
import { budgetOf, openConversation, refuseOverBudget, sessionPoolFor, type SessionPool, type IntegrationOptions } from "./common.js";

export type { UsageEvent } from "./common.js";

// ---------------------------------------------------------------------------------------------
// Options and sessions.

export interface RequestOptions extends IntegrationOptions {
  /**
   * The conversation's id: its session.
   * @default none: the conversation's stable prefix (system messages and first user message) keys it
   */
  conversationId?: string;
}

/** What a request helper takes beside the body and the options: the previous request's usage report. */
export interface RequestCall {
  /**
   * The usage the provider reported for the conversation's previous request (the response's
   * `usage` as it came, or its input-token count); `undefined` says the provider reported none.
   */
  usage?: unknown;
}

export interface AnthropicRequestOptions extends RequestOptions {
  /** Mark the end of the epoch's compacted prefix with `cache_control: { type: "ephemeral" }` (see the module comment). @default false */
  cacheBreakpoint?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Bodies and budgets.

/** What compactOpenAIRequest reads of a Chat Completions request body (the SDK's params type fits). */
export interface OpenAIRequestBody {
  model?: string;
  messages: readonly unknown[];
  tools?: readonly unknown[] | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
}

/** What compactOpenAIResponsesRequest reads of a Responses request body (the SDK's params type fits). */
export interface OpenAIResponsesRequestBody {
  model?: string;
  input?: string | readonly unknown[] | null;
  instructions?: string | null;
  tools?: readonly unknown[] | null;
  max_output_tokens?: number | null;
}

/** What compactAnthropicRequest reads of a Messages request body (the SDK's params type fits). */
export interface AnthropicRequestBody {
  model?: string;
  system?: unknown;
  messages: readonly unknown[];
  tools?: readonly unknown[] | null;
  max_tokens?: number | null;
}

function checkBody(body: unknown, what: string): asserts body is Record<string, unknown> & { messages: unknown[] } {
  if (!isObject(body))
    throw new CtxfoldError(
      "E_SCHEMA",
      `expected a ${what} request body object, got ${body === null ? "null" : Array.isArray(body) ? "an array" : typeof body}`,
      { path: "body" },
    );
  if (!Array.isArray(body.messages))
    throw new CtxfoldError("E_SCHEMA", `expected an array of messages, got ${body.messages === null ? "null" : typeof body.messages}`, {
      path: "body.messages",
    });
}

/** The answer's room a body asks for: its first present field of `keys` (null is absent), with that field's path. */
function maxOutput(body: Record<string, unknown>, keys: readonly string[]): { tokens: number; path: string } | undefined {
  for (const k of keys) {
    const v = body[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) throw badValueError(`body.${k}`, "a positive integer", v);
    return { tokens: v, path: `body.${k}` };
  }
  return undefined;
}

/** The exact tokens of what a request sends beside its messages: its tool definitions, and the body's text field `field` (a Responses body's `instructions`). */
interface Beside {
  tools: number;
  text: number;
  field?: string;
}

function besideOf(pool: SessionPool, body: Record<string, unknown>, field: string | undefined): Beside {
  const count = (text: unknown) => (typeof text === "string" && text !== "" ? pool.compactor.counter.count(text, "exact") : 0);
  const tools = body.tools;
  return { tools: Array.isArray(tools) && tools.length > 0 ? count(JSON.stringify(tools)) : 0, text: field === undefined ? 0 : count(body[field]), field };
}

/**
 * The messages' budget of one request (see the module comment): the budget of `model`'s window
 * less what goes `beside` the messages; `ratio` is the conversation's usage ratio.
 */
function requestBudget(
  options: IntegrationOptions,
  body: Record<string, unknown>,
  outputKeys: readonly string[],
  model: string | undefined,
  beside: Beside,
  ratio?: number,
): number {
  if (options.budget !== undefined) return budgetOf(options, model);
  const asked = maxOutput(body, outputKeys);
  const reserve = asked?.tokens ?? options.reserveTokens;
  let budget = asked === undefined ? budgetOf(options, model, ratio) : budgetOf({ ...options, reserveTokens: asked.tokens }, model, ratio, asked.path);
  const take = (tokens: number, path: string, what: string) => {
    if (tokens === 0) return;
    if (budget - tokens <= 0) {
      throw new CtxfoldError(
        "E_BAD_INPUT",
        `${what} (${tokens} tokens) leave no room for messages in the context window after the answer's ${reserve ?? "default"} reserve`,
        { path },
      );
    }
    budget -= tokens;
  };
  take(beside.tools, "body.tools", "the tool definitions");
  if (beside.field !== undefined) take(beside.text, `body.${beside.field}`, `the ${beside.field}`);
  return budget;
}

/**
 * The conversation of a request, its usage report folded in, and the messages' budget: checked
 * before anything is parsed (a bad budget is reported first), then taken again with the
 * conversation's ratio once the report is in (a caller's `budget` stands as it is).
 */
function openRequest(
  options: RequestOptions,
  body: Record<string, unknown>,
  input: unknown,
  format: "openai-chat" | "openai-responses" | "anthropic",
  outputKeys: readonly string[],
  call: RequestCall | undefined,
  field?: string,
) {
  const pool = sessionPoolFor(options);
  const model = typeof body.model === "string" ? body.model : undefined;
  const beside = besideOf(pool, body, field);
  let budget = requestBudget(options, body, outputKeys, model, beside);
  const conversation = openConversation(pool, format, input, options.conversationId);
  if (call !== undefined && (typeof call !== "object" || call === null))
    throw new CtxfoldError("E_BAD_INPUT", "expected { usage } (the previous response's usage report)", { path: "call" });
  if (call !== undefined && "usage" in call) pool.recordUsage(conversation.key, call.usage, options);
  const ratio = pool.usageRatio(conversation.key, model);
  if (ratio !== undefined && options.budget === undefined) budget = requestBudget(options, body, outputKeys, model, beside, ratio);
  return { pool, budget, besideTokens: beside.tools + beside.text, model, ...conversation };
}

/** E_OVER_BUDGET at `path` when the messages did not reach their budget (unless `onOverBudget: "return"`). */
function refuse(options: RequestOptions, r: CanonicalResult, budget: number, path: string): void {
  refuseOverBudget(options, { status: r.status, budget, tokensAfter: r.tokensAfter, criticalTokens: r.infeasible?.criticalTokens }, path);
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions.

/**
 * Compacts the `messages` of an OpenAI Chat Completions request body; every other field comes
 * back untouched (see the module comment for the budget, the usage report `call.usage` of the
 * previous request, and the sessions).
 */
export async function compactOpenAIRequest<B extends OpenAIRequestBody>(body: B, options: RequestOptions = {}, call?: RequestCall): Promise<B> {
  checkBody(body, "Chat Completions");
  const { pool, budget, besideTokens, model, key, session, cache, messages } = openRequest(
    options,
    body,
    body.messages,
    "openai-chat",
    ["max_completion_tokens", "max_tokens"],
    call,
  );
  const r = await pool.compact(key, session, messages, { budget, format: "openai-chat" });
  pool.noteSent(key, model, r.tokensAfter + besideTokens);
  refuse(options, r, budget, "body.messages");
  return { ...body, messages: cache.render(r.canonical) } as B;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses.

/**
 * Compacts the `input` items of an OpenAI Responses request body; every other field comes back
 * untouched (`instructions`, `context_management`, `store`, `include`, `previous_response_id`
 * among them; see the module comment for the budget, the usage report `call.usage` of the
 * previous request, and the sessions).
 */
export async function compactOpenAIResponsesRequest<B extends OpenAIResponsesRequestBody>(
  body: B,
  options: RequestOptions = {},
  call?: RequestCall,
): Promise<B> {
  if (!isObject(body))
    throw new CtxfoldError(
      "E_SCHEMA",
      `expected a Responses request body object, got ${body === null ? "null" : Array.isArray(body) ? "an array" : typeof body}`,
      { path: "body" },
    );
  const input = (body as Record<string, unknown>).input;
  if (input === undefined || input === null || typeof input === "string") return body;
  if (!Array.isArray(input)) throw new CtxfoldError("E_SCHEMA", `expected a string or an array of input items, got ${typeof input}`, { path: "body.input" });
  const { pool, budget, besideTokens, model, key, session, cache, messages } = openRequest(
    options,
    body,
    input,
    "openai-responses",
    ["max_output_tokens"],
    call,
    "instructions",
  );
  const r = await pool.compact(key, session, messages, { budget, format: "openai-responses" });
  pool.noteSent(key, model, r.tokensAfter + besideTokens);
  refuse(options, r, budget, "body.input");
  return { ...body, input: cache.render(r.canonical) } as B;
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages.

/**
 * Compacts the `system` and `messages` of an Anthropic Messages request body, keeps its
 * `cache_control` breakpoints valid and, with `cacheBreakpoint: true`, marks the end of the
 * compacted prefix; every other field comes back untouched (see the module comment).
 */
export async function compactAnthropicRequest<B extends AnthropicRequestBody>(body: B, options: AnthropicRequestOptions = {}, call?: RequestCall): Promise<B> {
  checkBody(body, "Messages");
  // The adapter reads `system` and `messages` of the body (and nothing else of it).
  const { pool, budget, besideTokens, model, key, session, cache, messages } = openRequest(options, body, body, "anthropic", ["max_tokens"], call);
  const r = await pool.compact(key, session, messages, { budget, format: "anthropic" });
  pool.noteSent(key, model, r.tokensAfter + besideTokens);
  refuse(options, r, budget, "body.messages");
  const wire = cache.render(r.canonical) as AnthropicWire;
  const prefix = options.cacheBreakpoint ? prefixLength(session, wire.messages) : undefined;
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : undefined;
  const draft = new Draft(tools, wire.system, wire.messages);
  fixBreakpoints(draft, requestMarks(body), prefix);
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>), messages: draft.messages };
  if (draft.tools !== tools) out.tools = draft.tools;
  if (draft.system !== undefined) out.system = draft.system;
  else delete out.system;
  return out as unknown as B;
}
