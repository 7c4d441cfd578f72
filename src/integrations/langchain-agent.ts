/**
 * LangChain v1 agents: a middleware for `createAgent` that compacts what every model call sends,
 * while the agent's state keeps the whole history.
 *
 *   const agent = createAgent({ model, tools, systemPrompt, middleware: [ctxfoldMiddleware({ budget: 100_000 })] });
 *   await agent.invoke({ messages: [new HumanMessage(task)] }, { configurable: { thread_id: "t1" } });
 *
 * Decisions:
 * - The hook is `wrapModelCall`, not `beforeModel`: beforeModel returns state updates, so a
 *   compacted list written there would replace the agent's history (and its checkpoints) for
 *   good; wrapModelCall changes only the request of one call. The state's messages stay whole,
 *   and every call compacts the whole history again, which the session makes incremental.
 * - What is compacted is what the model receives: the agent's system message (sent first when
 *   its text is not empty, as the agent's model node does) and the request's messages, as one
 *   list. So the budget counts the system prompt, and the conversation's prefix key holds it.
 *   A system message compaction left alone stays the request's very object (the agent then
 *   builds nothing new); the messages after it go back as `request.messages`.
 * - No import of `langchain`: the middleware is a plain object, `{ name, wrapModelCall }`, which
 *   is all `createAgent` reads of a middleware (`createMiddleware` only copies the hooks into
 *   such an object and adds a brand symbol that nothing checks), and its types are structural,
 *   so this module loads without `langchain` installed. The examples assign it to
 *   `createAgent`'s middleware list, which type-checks it against langchain's own
 *   AgentMiddleware. Messages compaction made are built as langchain-messages.ts builds them
 *   (the caller's classes, else @langchain/core's, imported on first need).
 * - Sessions: one per conversation — the runtime's `configurable.conversationId`, else its
 *   `thread_id` (the agent's checkpointer thread), else `options.conversationId`, else the
 *   stable prefix (the system prompt and the first user message).
 * - Budget: budgetOf(options, options.model, else the id of the request's model: `model`,
 *   `modelName`, or a configurable model's default), per call, since a middleware before this
 *   one may switch models. Bad options fail when the middleware is made, and so does an
 *   unknown context size when `options.model` names the model; otherwise the first model call
 *   fails with it (the agent wraps it in a MiddlewareError whose `cause` is the CtxfoldError).
 *   Tool definitions are sent too and are not counted: leave them room in `reserveTokens`.
 * - A message ctxfold cannot read is a CtxfoldError naming its index in the agent's state,
 *   `messages[i]` (`systemMessage` for the system message).
 * - Recall hint: on for a call whose tools include one named `recall` (ctxfoldRecallTool), as
 *   the AI SDK middleware does, unless the options set `recallHint` either way.
 * - Usage feedback: the model's AIMessage reports the input tokens of the prompt just sent
 *   (`usage_metadata.input_tokens`); the conversation's next budget follows it (budget.ts).
 */
import { badValueError, CtxfoldError, optionsObject } from "../errors.js";
import { checkPeerVersions } from "../peer-version.js";
import { budgetOf, SessionPool } from "./common.js";
import { kRecallToolName } from "../recall/index.js";
import {
  compactLangChain,
  configuredId,
  instanceKind,
  messageList,
  type LangChainCompaction,
  type LangChainConfigLike,
  type LangChainOptions,
} from "./langchain-messages.js";

// ---------------------------------------------------------------------------------------------
// Structural types (what createAgent passes; no import of `langchain`).

/** What the middleware reads of a model request (langchain's ModelRequest). */
export interface LangChainModelRequest {
  /** The chat model the call goes to: its id sets the budget when the options do not. */
  model: unknown;
  /** The agent state's messages, the history the model gets after the system message. */
  messages: readonly object[];
  /** The agent's system message, sent first when its text is not empty. */
  systemMessage?: { readonly text: string };
  /** The run's config as the middleware sees it (`configurable.thread_id`). */
  runtime?: LangChainConfigLike;
  /** The tools the model is offered: one named `recall` turns the recall hint on (see ctxfoldMiddleware). */
  tools?: readonly unknown[];
}

/**
 * The middleware ctxfoldMiddleware returns: an AgentMiddleware of langchain v1 with the
 * `wrapModelCall` hook, structurally (assignable to `createAgent`'s `middleware` entries).
 */
export interface CtxfoldAgentMiddleware {
  /** The middleware's name in the agent ("CtxfoldMiddleware"). */
  readonly name: string;
  /** Calls `handler` with the request's system message and messages compacted to the budget; returns the model's answer as it came. */
  wrapModelCall<R extends LangChainModelRequest, A>(request: R, handler: (request: R) => A | Promise<A>): Promise<A>;
}

// ---------------------------------------------------------------------------------------------
// One model call.

/** A request compacted for one model call, and what usage feedback needs of it. */
interface CompactedCall<R> {
  /** What goes to the handler: the request itself when compaction changed nothing. */
  request: R;
  /** The compaction (its session, and the estimate `result.tokensAfter` of what was sent). */
  compaction: LangChainCompaction<object>;
  /** The model whose window the budget came from, when known. */
  modelId: string | undefined;
}

/**
 * The model id of a LangChain chat model: its `model` (ChatOpenAI, ChatAnthropic, ...), else
 * `modelName`, else a configurable model's default `model`; a string id without its
 * `provider:` prefix.
 */
function chatModelId(model: unknown): string | undefined {
  if (typeof model === "string") return model.replace(/^[\w-]+:/, "") || undefined;
  if (typeof model !== "object" || model === null) return undefined;
  const m = model as { model?: unknown; modelName?: unknown; _defaultConfig?: { model?: unknown } };
  for (const id of [m.model, m.modelName, m._defaultConfig?.model]) if (typeof id === "string" && id !== "") return chatModelId(id);
  return undefined;
}

/** An error of the compacted list (system message first) re-pathed to the request: `messages[i + 1]` is the state's `messages[i]`. */
function repathed(e: unknown): unknown {
  if (!CtxfoldError.isInstance(e) || e.path === undefined) return e;
  const m = /^messages\[(\d+)\]/.exec(e.path);
  if (!m) return e;
  const i = Number(m[1]);
  const path = (i === 0 ? "systemMessage" : `messages[${i - 1}]`) + e.path.slice(m[0].length);
  const message = e.message.startsWith(`${e.path}: `) ? e.message.slice(e.path.length + 2) : e.message;
  return new CtxfoldError(e.code, message, { path, cause: e });
}

/** Whether the call offers the recall tool (ctxfoldRecallTool's name) to the model. */
function offersRecall(tools: readonly unknown[] | undefined): boolean {
  return Array.isArray(tools) && tools.some((t) => typeof t === "object" && t !== null && (t as { name?: unknown }).name === kRecallToolName);
}

/** Compacts one call's system message and messages (see the module comment). */
async function compactCall<R extends LangChainModelRequest>(pool: SessionPool, options: LangChainOptions, request: R): Promise<CompactedCall<R>> {
  const modelId = options.model ?? chatModelId(request.model);
  const history = messageList(request.messages);
  const system = request.systemMessage;
  const lead = system !== undefined && system.text !== "" ? 1 : 0;
  const list = lead ? [system, ...history] : history;
  let compaction: LangChainCompaction<object>;
  try {
    const recallHint = options.recallHint === undefined && offersRecall(request.tools) ? true : undefined;
    compaction = await compactLangChain<object>(pool, list, options, {
      modelId,
      conversationId: configuredId(request.runtime) ?? options.conversationId,
      recallHint,
    });
  } catch (e) {
    throw lead ? repathed(e) : e;
  }
  const out = compaction.messages;
  if (out.length === list.length && out.every((m, i) => m === list[i])) return { request, compaction, modelId };
  const next: R = { ...request, messages: out.slice(lead) };
  if (lead && out[0] !== system) {
    // The system prompt is critical (never dropped, never moved); a changed one is still sent first.
    if (instanceKind(out[0] as Record<string, unknown>) !== "system")
      throw new CtxfoldError("E_INTERNAL", "compaction did not keep the system message first", { path: "systemMessage" });
    next.systemMessage = out[0] as R["systemMessage"];
  }
  return { request: next, compaction, modelId };
}

// ---------------------------------------------------------------------------------------------
// The API.

/**
 * A middleware for LangChain v1's `createAgent` that compacts every model call's prompt (the
 * system message and the agent's messages) to the budget: `options.budget`, else the context
 * window of `options.model` or of the called model, minus `reserveTokens`. The agent's state
 * keeps the whole history; within an epoch each call's prompt is the previous one's messages
 * plus new ones, so provider prompt caches keep hitting. One session per conversation (the
 * run's `thread_id`, else `options.conversationId`, else the conversation's stable prefix).
 *
 * `createAgent({ model, tools, middleware: [ctxfoldMiddleware({ budget: 100_000 })] })`
 */
export function ctxfoldMiddleware(options: LangChainOptions = {}): CtxfoldAgentMiddleware {
  checkPeerVersions(["langchain", "@langchain/core"], "ctxfoldMiddleware of ctxfold/langchain");
  const o = optionsObject(options, "{ budget?, model?, conversationId?, contextWindow?, reserveTokens?, ... }") as LangChainOptions;
  if (o.model !== undefined && (typeof o.model !== "string" || o.model === "")) throw badValueError("model", "a model id", o.model);
  if (o.conversationId !== undefined && (typeof o.conversationId !== "string" || o.conversationId === ""))
    throw badValueError("conversationId", "a non-empty string", o.conversationId);
  // A budget that cannot be had fails here rather than at the first model call.
  if (o.budget !== undefined || o.contextWindow !== undefined || o.model !== undefined) budgetOf(o, o.model);
  const pool = new SessionPool(o);
  return {
    name: "CtxfoldMiddleware",
    async wrapModelCall<R extends LangChainModelRequest, A>(request: R, handler: (request: R) => A | Promise<A>): Promise<A> {
      const call = await compactCall(pool, o, request);
      const response = await handler(call.request);
      // Usage feedback: the model's AIMessage carries the provider's count of the prompt just
      // sent (`usage_metadata.input_tokens`, cache reads and writes included); the next call's
      // budget follows it. No usage is reported to onUsage and ignored.
      pool.recordUsage(call.compaction.key, (response as { usage_metadata?: unknown } | null | undefined)?.usage_metadata, o, call.modelId);
      return response;
    },
  };
}
