/**
 * LangChain.js integration: compaction as a step of a chain, in front of the chat model.
 *
 *   const compact = await ctxfoldRunnable<BaseMessage>({ model: "gpt-4o" }); // a RunnableLambda
 *   const chain = compact.pipe(chatModel);
 *   await chain.invoke(messages, { configurable: { thread_id: "t1" } });
 *
 * `@langchain/core` is an optional peer: nothing here imports it statically. The types are
 * structural, and the runtime pieces (RunnableLambda, the message classes for messages
 * compaction made) are imported on first use, or taken from the caller's own messages (see
 * below). `langChainCompactor(options)` is the same step as a plain function, for
 * `RunnableLambda.from(...)` with exact types and the caller's package copy. Each factory checks
 * the installed @langchain/core's version when it resolves (peer-version.ts: E_PEER_VERSION
 * outside package.json's peer range; nothing checked when it does not resolve from ctxfold).
 *
 * Decisions:
 * - Messages in and out (instances, dicts, a ChatPromptValue; which objects come back; the
 *   shapes that fail and how they are named): langchain-messages.ts, shared with the agent
 *   middleware (langchain-agent.ts, `ctxfoldMiddleware` for `createAgent`).
 * - Sessions: one per conversation — `config.configurable.conversationId`, else `thread_id`
 *   (LangGraph's), else `options.conversationId`, else the stable prefix (conversationKey).
 *   The runnable owns its SessionPool; compactLangChainMessages shares sessionPoolFor's rule
 *   (requests.ts): reuse the options object when it configures the compactor.
 * - Budget: budgetOf(options, options.model), checked when the runnable is made (an unknown
 *   context size without a budget fails there, not at the first call), and taken per call with
 *   the conversation's usage feedback (budget.ts).
 * - Usage feedback: the reply to a call is the AIMessage the caller appends after that call's
 *   input, so at the next call the message at the previous input's length is that reply, and
 *   its `usage_metadata.input_tokens` (LangChain's total, cached input included) is the
 *   provider's count of the prompt the previous call compacted. It is read from there (an AI
 *   message without usage_metadata is a report of no usage, ignored with an `onUsage` event;
 *   anything else at that index is not a reply and is left alone).
 * - Recall: `await ctxfoldRecallTool({ store })` (langchain-recall.ts) is a tool for the agent
 *   that reads what the refs of its compacted prompt stand for; give the compaction step the
 *   same `store`, and `recallHint: true` so the prompt says how to use it.
 */
import { CtxfoldError } from "../errors.js";
import { checkPeerVersions } from "../peer-version.js";
import { budgetOf, sessionPoolFor, SessionPool } from "./common.js";
import { compactLangChain, configuredId, messageList, type LangChainConfigLike, type LangChainOptions, type PromptValueLike } from "./langchain-messages.js";

export type { LangChainConfigLike, LangChainOptions, PromptValueLike } from "./langchain-messages.js";
export { ctxfoldMiddleware, type CtxfoldAgentMiddleware, type LangChainModelRequest } from "./langchain-agent.js";
export type { UsageEvent } from "./common.js";

export { ctxfoldRecallTool, type CtxfoldLangChainTool, type RecallResult, type RecallToolOptions } from "./langchain-recall.js";

// ---------------------------------------------------------------------------------------------
// Structural types.

/** The compaction step as a function: what RunnableLambda.from takes, and what `.pipe()` / RunnableSequence.from coerce. */
export type LangChainCompactFn<M extends object = object> = (input: LangChainCompactInput<M>, config?: LangChainConfigLike) => Promise<M[]>;

/** What the compaction step takes: a message list, or a ChatPromptValue. */
export type LangChainCompactInput<M extends object = object> = readonly M[] | PromptValueLike;

/**
 * The RunnableLambda ctxfoldRunnable returns, structurally: enough of LangChain's
 * RunnableInterface that `prompt.pipe(compact)` and `compact.pipe(model)` type-check without
 * ctxfold's types naming @langchain/core. For its exact type build it yourself:
 * `RunnableLambda.from(langChainCompactor<BaseMessage>(options))`.
 */
// biome-ignore-start lint/suspicious/noExplicitAny: the shape of LangChain's own RunnableInterface, whose signatures take and give any
export interface CtxfoldRunnable<M extends object = object> {
  lc_serializable: boolean;
  readonly lc_id: string[];
  invoke(input: LangChainCompactInput<M>, config?: LangChainConfigLike): Promise<M[]>;
  batch(inputs: LangChainCompactInput<M>[], config?: any, batchOptions?: any): Promise<any[]>;
  stream(input: LangChainCompactInput<M>, config?: any): Promise<any>;
  transform(generator: AsyncGenerator<LangChainCompactInput<M>>, config: any): AsyncGenerator<M[]>;
  getName(suffix?: string): string;
  pipe(next: any): any;
}
// biome-ignore-end lint/suspicious/noExplicitAny: the end of that shape

// ---------------------------------------------------------------------------------------------
// The API.

/**
 * Compacts a LangChain message list to the budget (options.budget, or the context window of
 * options.model); messages compaction left alone come back as the same objects.
 */
export async function compactLangChainMessages<M extends object>(messages: LangChainCompactInput<M>, options: LangChainOptions = {}): Promise<M[]> {
  checkPeerVersions(["@langchain/core"], "compactLangChainMessages of ctxfold/langchain");
  budgetOf(options, options.model); // a bad budget or an unknown model fails before anything is parsed
  return (
    await compactLangChain<M>(sessionPoolFor(options), messageList(messages), options, {
      modelId: options.model,
      conversationId: options.conversationId,
      replyUsage: true,
    })
  ).messages;
}

/**
 * The compaction step as a plain function with its own sessions: `RunnableLambda.from(fn)`, or
 * straight into `.pipe(fn)` / `RunnableSequence.from([fn, model])`, which coerce functions. The
 * second argument is the run's config (conversation id from `configurable`).
 */
export function langChainCompactor<M extends object = object>(options: LangChainOptions = {}): LangChainCompactFn<M> {
  checkPeerVersions(["@langchain/core"], "langChainCompactor of ctxfold/langchain");
  budgetOf(options, options.model); // checked when the step is made
  const pool = new SessionPool(options);
  // The name shows in LangChain traces (RunnableLambda names its run after the function).
  const ctxfold = (input: LangChainCompactInput<M>, config?: LangChainConfigLike): Promise<M[]> =>
    compactLangChain<M>(pool, messageList(input), options, {
      modelId: options.model,
      conversationId: configuredId(config) ?? options.conversationId,
      replyUsage: true,
    }).then((r) => r.messages);
  return ctxfold;
}

/**
 * The compaction step as a real RunnableLambda (see langChainCompactor), @langchain/core's
 * RunnableLambda imported on first use. Name the message type for a typed chain:
 * `await ctxfoldRunnable<BaseMessage>({ model: "gpt-4o" })`.
 */
export async function ctxfoldRunnable<M extends object = object>(options: LangChainOptions = {}): Promise<CtxfoldRunnable<M>> {
  const fn = langChainCompactor<M>(options);
  let mod: { RunnableLambda: { from(fn: LangChainCompactFn<M>): CtxfoldRunnable<M> } };
  try {
    mod = (await import("@langchain/core/runnables")) as unknown as typeof mod;
  } catch (err) {
    throw new CtxfoldError(
      "E_BAD_INPUT",
      "@langchain/core is not installed (npm install @langchain/core): ctxfoldRunnable makes a RunnableLambda; langChainCompactor gives the plain function",
      { path: "@langchain/core", cause: err },
    );
  }
  return mod.RunnableLambda.from(fn);
}
