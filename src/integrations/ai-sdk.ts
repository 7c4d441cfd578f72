/**
 * The Vercel AI SDK integration: a language-model middleware for `wrapLanguageModel`
 * and a `prepareStep` for generateText / streamText, both compacting the prompt of every model
 * call to a budget with one compactor session per conversation, so the agent loop's prompts only
 * append between epochs and the provider's prompt cache keeps hitting.
 *
 * Decisions:
 * - No runtime dependency on `ai`. The middleware is plain data (`{ specificationVersion: "v3",
 *   transformParams }`) and every type here is structural, so this module loads and type-checks
 *   without `ai` or `@ai-sdk/provider` installed; `wrapLanguageModel` and `prepareStep` accept
 *   these values because their shapes match (the tests assign them to the SDK's own
 *   LanguageModelMiddleware and PrepareStepFunction). Where `ai` resolves from ctxfold, the
 *   factories check its version when they are made (peer-version.ts): outside package.json's
 *   peer range, E_PEER_VERSION; where it does not resolve (a bundle), nothing is checked.
 * - Two prompt shapes, one adapter. The middleware sees the provider-level prompt
 *   (LanguageModelV3Prompt in ai 6; Mastra hands processors the V2 one): system content is a
 *   string, user / assistant / tool content always a part array, tool calls carry `input`, tool
 *   results `output`, and consecutive tool messages arrive combined into one. That is a subset of
 *   `ModelMessage`, which the "ai-sdk" adapter parses, so both go through it. Every message the
 *   compactor did not touch renders back as the very wire object it was parsed from (the
 *   adapter's reuse), so unknown fields, provider options (Mastra's `providerOptions.mastra`
 *   stamps too) and non-JSON data (Uint8Array, URL) pass through as they were. A message the
 *   compactor rewrote is rebuilt by the adapter; for a provider prompt it is then brought into
 *   the provider shape (string content becomes one text part, an image part a file part).
 *   Until a conversation's first compaction the prompt goes on as the very array passed in.
 *   After it, the messages of the compacted prefix are the objects of the call that started the
 *   epoch: JSON-identical to this call's (that is how the session recognises its prefix), and
 *   what keeps the prefix byte-identical from call to call. Each call parses and renders only
 *   what the conversation's previous call did not have (its wire cache, adapters/wire-cache.ts):
 *   a rebuilt message is rebuilt once and handed back as the same object at every later call.
 * - Sessions. The conversation is the caller's id when there is one (`conversationId(params)`,
 *   else the call's `providerOptions.ctxfold.conversationId`), else the conversation's stable
 *   prefix (common.ts's prefixKey: conversationKey over its system messages and first user message, their
 *   part metadata left out: provider options such as cache breakpoints or Mastra's createdAt
 *   stamps may change between calls of one conversation). `prepareStep` has no provider options,
 *   so there only `conversationId` and the prefix key apply.
 * - Budget: budget.ts's budgetOf per call, from the options, the called model's id (a
 *   prepareStep may switch models between steps) and the conversation's usage feedback.
 * - Usage feedback: the middleware reads the usage of each call's result (`wrapGenerate`: the
 *   result's `usage`; `wrapStream`: the `finish` part's, as the stream passes through
 *   unchanged), `inputTokens.total` in the V3 spec (cache reads and writes included),
 *   `inputTokens` in V2; `prepareStep` reads the previous step's (`steps.at(-1).usage`, the
 *   SDK's LanguageModelUsage) before it compacts the next step, when that step's prompt was the
 *   one it compacted (the step numbers follow). Either way the report goes to the pool's
 *   recordUsage for the conversation, against ctxfold's estimate of what that call sent (the
 *   compaction's tokensAfter), so from the second call on the budget is the window by the
 *   provider's own count. No usage, or figures that cannot be one, are ignored with an
 *   `onUsage` event saying why.
 * - Shapes. A prompt message this module does not know (a role outside system / user / assistant
 *   / tool, content that is neither a string nor a part array, a part without a `type`) is a
 *   CtxfoldError whose path names it, `prompt[3]: unknown message shape: role "wizard" …`,
 *   raised before any compaction; deeper schema errors of the adapter are re-pathed the same way.
 *   Unknown part *types* (tool approvals, provider extensions) are not errors: the adapter
 *   carries them unchanged.
 * - Recall: `ctxfoldRecallTool({ store })` (ai-sdk-recall.ts) gives the model what the refs of
 *   its compacted prompt stand for; give the middleware the same `store`. The middleware turns
 *   the recall hint (the compactor's recallHint) on for a call whose `tools` include a function
 *   tool named `recall`, unless the options set `recallHint` themselves (false: never; true or a
 *   line: every call). `prepareStep` sees no tools: set `recallHint` in its options.
 * - A budget even the messages that must stay cannot meet (status "budget_infeasible") is a
 *   CtxfoldError E_OVER_BUDGET at `prompt` (`messages` for prepareStep) by default, thrown
 *   after `onCompact` reported it: the middleware's return type is the call's params, with no
 *   room to say so, and a prompt sent over the window fails at the provider anyway, later and
 *   less clearly. `onOverBudget: "return"` forwards the compactor's best prompt instead (the
 *   provider answers as it would have). Mastra's processor, whose framework has a typed
 *   refusal, aborts instead (see mastra.ts).
 */
import { CtxfoldError } from "../errors.js";
import type { Message } from "../model/schema.js";
import { checkPeerVersions } from "../peer-version.js";
import type { CompactResult } from "../policy/types.js";
import { kRecallToolName } from "../recall/index.js";
import { budgetOf, prefixKey, refuseOverBudget, SessionPool, type IntegrationOptions, type UsageEvent } from "./common.js";

export type { IntegrationOptions, SessionPool, UsageEvent } from "./common.js";
export { ctxfoldRecallTool, type CtxfoldRecallTool, type RecallResult, type RecallToolOptions } from "./ai-sdk-recall.js";

// ---------------------------------------------------------------------------------------------
// Structural types (what the AI SDK passes; no import of `ai`).

/** A message of an AI SDK prompt: a `ModelMessage`, or a provider-level (V2 / V3) prompt message. */
export interface AiSdkPromptMessage {
  role: string;
  content: unknown;
  providerOptions?: unknown;
}

/** The call options a language-model middleware's `transformParams` receives (LanguageModelV3CallOptions). */
export interface AiSdkCallParams {
  prompt: AiSdkPromptMessage[];
  providerOptions?: Record<string, Record<string, unknown> | undefined>;
  /** The tools the call offers the model (function tools by name; the recall tool turns the recall hint on). */
  tools?: ReadonlyArray<{ type?: string; name?: string }>;
}

/** What the integrations report of each compaction (`onCompact`). */
export interface CompactInfo {
  /** The session's key: `id:<caller's id>`, `thread:<Mastra thread>:<prefix key>` or `key:<prefix key>`. */
  conversation: string;
  /** The session's epoch after the call, and whether this call started it (the prompt's prefix changed). */
  epoch: number;
  newEpoch: boolean;
  /** The compactor's estimates of the prompt before and after (o200k; exact near the budget). */
  tokensBefore: number;
  tokensAfter: number;
  budget: number;
  status: CompactResult["status"];
  /** With status "budget_infeasible": the tokens of what must stay. */
  criticalTokens?: number;
  /** Messages in and out. */
  messagesBefore: number;
  messagesAfter: number;
}

/** The options every ctxfold integration takes: common.ts's, plus how to find the conversation and a report hook. */
export interface CtxfoldIntegrationOptions<Params> extends IntegrationOptions {
  /**
   * The conversation a call belongs to; undefined falls back to the next source (see the module comment).
   * @default none: the next source decides
   */
  conversationId?: (params: Params) => string | undefined;
  /** Called after every compaction (the loop's telemetry: tokens in / out, epoch changes). @default none */
  onCompact?: (info: CompactInfo) => void;
}

/** A language-model middleware (LanguageModelV3Middleware of `@ai-sdk/provider`). */
export interface CtxfoldMiddleware {
  readonly specificationVersion: "v3";
  transformParams<P extends AiSdkCallParams>(options: { type?: "generate" | "stream"; params: P; model: { readonly modelId: string } }): Promise<P>;
  /** Passes the call's result on as it is, after reading its usage (see the module comment). */
  wrapGenerate<R extends { usage?: unknown }>(options: {
    doGenerate: () => PromiseLike<R>;
    params: AiSdkCallParams;
    model: { readonly modelId: string };
  }): Promise<R>;
  /** Passes the stream on part for part, reading the usage of its `finish` part (see the module comment). */
  wrapStream<R extends { stream: ReadableStream<unknown> }>(options: {
    doStream: () => PromiseLike<R>;
    params: AiSdkCallParams;
    model: { readonly modelId: string };
  }): Promise<R>;
}

/** What generateText / streamText pass to `prepareStep` (the fields ctxfold reads). */
export interface AiSdkPrepareStepOptions {
  /** The step's prompt messages, compacted. */
  messages: AiSdkPromptMessage[];
  /** The step's model: its id names the context window when no budget is given. */
  model: string | { readonly modelId: string };
  /** The step's number (0 first): with `steps`, what the previous step's usage reports on. @default none: no usage is read */
  stepNumber?: number;
  /** The steps so far: the last one's `usage` is the previous call's report. @default none: no usage is read */
  steps?: ReadonlyArray<{ readonly usage?: unknown }>;
}

// ---------------------------------------------------------------------------------------------
// The shared engine (mastra.ts uses it too).

const kRoles: ReadonlySet<string> = new Set(["system", "user", "assistant", "tool"]);

function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/** Rejects a prompt whose messages (those in [from, to)) are not the shapes the "ai-sdk" adapter knows, naming the first that is not. */
function checkShapes(wire: unknown, path: string, from = 0, to = Infinity): asserts wire is AiSdkPromptMessage[] {
  if (!Array.isArray(wire)) throw new CtxfoldError("E_SCHEMA", `expected an array of messages, got ${kindOf(wire)}`, { path });
  for (let i = from; i < Math.min(to, wire.length); i++) {
    const m: unknown = wire[i];
    const at = `${path}[${i}]`;
    if (typeof m !== "object" || m === null || Array.isArray(m))
      throw new CtxfoldError("E_SCHEMA", `unknown message shape: ${kindOf(m)} (expected an object with a role)`, { path: at });
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== "string")
      throw new CtxfoldError(
        "E_SCHEMA",
        `unknown message shape: ${role === undefined ? "no role" : `role ${kindOf(role)}`} (expected system, user, assistant or tool)`,
        { path: at },
      );
    if (!kRoles.has(role))
      throw new CtxfoldError("E_UNKNOWN_ROLE", `unknown message shape: role ${JSON.stringify(role)} (expected system, user, assistant or tool)`, { path: at });
    const strings = role !== "tool";
    const arrays = role !== "system";
    if (typeof content === "string" && strings) continue;
    if (Array.isArray(content) && arrays) {
      for (let k = 0; k < content.length; k++) {
        const p: unknown = content[k];
        if (typeof p !== "object" || p === null || typeof (p as { type?: unknown }).type !== "string") {
          throw new CtxfoldError("E_SCHEMA", `unknown part shape: ${kindOf(p)}${typeof p === "object" && p !== null ? " without a string type" : ""}`, {
            path: `${at}.content[${k}]`,
          });
        }
      }
      continue;
    }
    const expected = !arrays ? "a string" : !strings ? "an array of parts" : "a string or an array of parts";
    throw new CtxfoldError(
      "E_SCHEMA",
      `unknown message shape: a ${role} message whose content is ${content === undefined ? "missing" : kindOf(content)} (expected ${expected})`,
      { path: at },
    );
  }
}

/** An error of the adapter's parse, its path (`messages[3].content[1]`) renamed to the caller's (`prompt[3].content[1]`). */
function repathed(e: unknown, path: string): unknown {
  if (!CtxfoldError.isInstance(e) || !e.path?.startsWith("messages") || path === "messages") return e;
  const message = e.message.startsWith(`${e.path}: `) ? e.message.slice(e.path.length + 2) : e.message;
  return new CtxfoldError(e.code, message, { path: path + e.path.slice("messages".length), cause: e });
}

/** A rendered ModelMessage in the provider prompt's shape (same object when it already is). */
function toProviderMessage(m: AiSdkPromptMessage): AiSdkPromptMessage {
  if (m.role !== "user" && m.role !== "assistant") return m;
  if (typeof m.content === "string") return { ...m, content: [{ type: "text", text: m.content }] };
  if (!Array.isArray(m.content) || !m.content.some((p: { type?: unknown }) => p.type === "image")) return m;
  const content = (m.content as Array<Record<string, unknown>>).map((p) => {
    if (p.type !== "image") return p;
    const { type, image, mediaType, mimeType, ...rest } = p;
    void type;
    // The provider prompt's file part requires a media type; a wildcard is what the SDK itself sends when it cannot tell.
    return { type: "file", data: image, mediaType: typeof mediaType === "string" ? mediaType : typeof mimeType === "string" ? mimeType : "image/*", ...rest };
  });
  return { ...m, content };
}

/** Where a call's prompt sits and which shape it has. */
export interface PromptCall {
  /** The prompt. */
  wire: unknown;
  /** Its name in errors: "prompt" (a provider prompt) or "messages" (ModelMessage[]). */
  path: string;
  /** A provider prompt (V2 / V3): rebuilt messages take its shape. */
  provider: boolean;
  /** The called model's id (for the budget). */
  modelId: string | undefined;
  /** The caller's conversation id, when it gave one. */
  id: string | undefined;
  /** A namespace the prefix key goes under when there is no id (Mastra's thread). */
  scope?: string;
  /** What the pool notes with this call's estimate, for a later report to match (prepareStep's step number). */
  tag?: unknown;
  /** A usage report for the conversation's previous call, counted when that call was noted with `tag`. */
  report?: { usage: unknown; tag: unknown };
  /** The recall hint for this call, over the options' `recallHint` (CompactCallOptions.recallHint). */
  recallHint?: boolean;
  /** Leave a prompt over its budget to the caller (Mastra's abort) instead of refuseOverBudget. */
  keepOverBudget?: boolean;
}

/**
 * The engine of the ctxfold integrations: options checked once, a SessionPool, and `compact`,
 * which compacts one call's prompt in its conversation's session. Exported for mastra.ts.
 */
export class PromptCompactor<Params> {
  readonly pool: SessionPool;
  readonly options: IntegrationOptions;
  readonly conversationId: ((params: Params) => string | undefined) | undefined;
  readonly #onCompact: ((info: CompactInfo) => void) | undefined;

  constructor(options: CtxfoldIntegrationOptions<Params> = {}) {
    if (typeof options !== "object" || options === null)
      throw new CtxfoldError("E_BAD_INPUT", `expected an options object, got ${kindOf(options)}`, { path: "options" });
    const { conversationId, onCompact, ...rest } = options;
    for (const [name, fn] of Object.entries({ conversationId, onCompact, onUsage: rest.onUsage })) {
      if (fn !== undefined && typeof fn !== "function") throw new CtxfoldError("E_BAD_INPUT", `expected a function, got ${kindOf(fn)}`, { path: name });
    }
    if (rest.budget !== undefined) budgetOf(rest); // a bad budget fails at setup, not at the first call
    this.options = rest;
    this.pool = new SessionPool(rest);
    this.conversationId = conversationId;
    this.#onCompact = onCompact;
  }

  /** The caller's id for `params`, checked. */
  idOf(params: Params): string | undefined {
    const id = this.conversationId?.(params);
    if (id !== undefined && (typeof id !== "string" || id === ""))
      throw new CtxfoldError("E_BAD_INPUT", `conversationId returned ${id === "" ? "an empty string" : kindOf(id)}, expected a non-empty string or undefined`, {
        path: "conversationId",
      });
    return id;
  }

  /**
   * Compacts one call's prompt. `changed` is false when the result is the input prompt itself
   * (every message the very object passed in, in order).
   */
  async compact(call: PromptCall): Promise<{ messages: AiSdkPromptMessage[]; changed: boolean; info: CompactInfo }> {
    // What a call reports, in this order: a bad shape, a budget that cannot be had, a schema
    // error of the adapter. Shapes are checked only where the wire cache parses messages no
    // earlier call of the conversation parsed (the rest passed then).
    const wire = call.wire;
    checkShapes(wire, call.path, 0, 0);
    const check = (from: number, to: number) => checkShapes(wire, call.path, from, to);
    let conversation: string;
    try {
      conversation = call.id !== undefined ? `id:${call.id}` : `${call.scope ?? "key"}:${prefixKey("ai-sdk", wire, check)}`;
    } catch (e) {
      checkShapes(wire, call.path);
      budgetOf(this.options, call.modelId);
      throw repathed(e, call.path);
    }
    if (call.report !== undefined && this.pool.sentTag(conversation) === call.report.tag) this.recordUsage(conversation, call.report.usage);
    const cache = this.pool.wireCache(conversation, "ai-sdk", call.provider ? (toProviderMessage as (m: unknown) => unknown) : undefined);
    let budget = 0;
    let messages: Message[];
    try {
      messages = cache.parse(wire, (from, to) => {
        check(from, to);
        budget = budgetOf(this.options, call.modelId, this.pool.usageRatio(conversation, call.modelId));
      });
    } catch (e) {
      throw repathed(e, call.path);
    }
    const session = this.pool.session(conversation, cache);
    const before = session.epoch;
    const r = await this.pool.compact(conversation, session, messages, call.recallHint === undefined ? { budget } : { budget, recallHint: call.recallHint });
    this.pool.noteSent(conversation, call.modelId, r.tokensAfter, call.tag);
    // Until its first compaction a session's output is its input (appended or passed through):
    // the prompt goes on as it came, not re-rendered.
    let out = wire;
    if (session.epoch > 0) out = cache.render(r.canonical) as AiSdkPromptMessage[];
    const changed = out.length !== wire.length || out.some((m, i) => m !== wire[i]);
    const info: CompactInfo = {
      conversation,
      epoch: session.epoch,
      newEpoch: session.epoch !== before,
      tokensBefore: r.tokensBefore,
      tokensAfter: r.tokensAfter,
      budget,
      status: r.status,
      messagesBefore: wire.length,
      messagesAfter: out.length,
    };
    if (r.infeasible) info.criticalTokens = r.infeasible.criticalTokens;
    this.#onCompact?.(info);
    if (!call.keepOverBudget) refuseOverBudget(this.options, info, call.path);
    return { messages: changed ? out : wire, changed, info };
  }

  /** Folds the provider's usage report for `conversation`'s last call into its budget (SessionPool.recordUsage). */
  recordUsage(conversation: string, usage: unknown, modelId?: string): UsageEvent | undefined {
    return this.pool.recordUsage(conversation, usage, this.options, modelId);
  }
}

/** The model id of a model value: a string id, or an object's `modelId` (or a config's `id`). */
export function modelIdOf(model: unknown): string | undefined {
  if (typeof model === "string") return model;
  if (typeof model !== "object" || model === null) return undefined;
  const m = model as { modelId?: unknown; id?: unknown };
  return typeof m.modelId === "string" ? m.modelId : typeof m.id === "string" ? m.id : undefined;
}

// ---------------------------------------------------------------------------------------------
// The AI SDK entry points.

/** Whether a call offers the model a function tool named like ctxfold's recall tool (kRecallToolName). */
function offersRecall(params: AiSdkCallParams): boolean {
  return Array.isArray(params.tools) && params.tools.some((t) => t?.name === kRecallToolName && (t.type === undefined || t.type === "function"));
}

/** `providerOptions.ctxfold.conversationId` of a call, when a string. */
function providerOptionsId(params: AiSdkCallParams): string | undefined {
  const id = params.providerOptions?.ctxfold?.conversationId;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/**
 * A language-model middleware that compacts every call's prompt:
 * `wrapLanguageModel({ model, middleware: ctxfoldMiddleware({ budget: 16_000 }) })`. The
 * params come back with the compacted prompt and every other field as it was (the same params
 * object when nothing was compacted). One session per conversation (see the module comment).
 * Each call's result (or stream) passes through unchanged, its usage read for the next budget.
 */
export function ctxfoldMiddleware(options: CtxfoldIntegrationOptions<AiSdkCallParams> = {}): CtxfoldMiddleware {
  checkPeerVersions(["ai"], "ctxfoldMiddleware of ctxfold/ai-sdk");
  const engine = new PromptCompactor<AiSdkCallParams>(options);
  // The params each compaction returned, with where its usage report goes (wrapGenerate and wrapStream get those very params).
  const calls = new WeakMap<object, { conversation: string; modelId: string | undefined }>();
  const report = (params: object, usage: unknown) => {
    const call = calls.get(params);
    if (!call) return;
    calls.delete(params);
    engine.recordUsage(call.conversation, usage, call.modelId);
  };
  // The recall hint follows the call's tools unless the options set it either way.
  const hintByTools = options.recallHint === undefined;
  return {
    specificationVersion: "v3",
    async transformParams<P extends AiSdkCallParams>({ params, model }: { params: P; model: { readonly modelId: string } }): Promise<P> {
      const id = engine.idOf(params) ?? providerOptionsId(params);
      const modelId = modelIdOf(model);
      const recallHint = hintByTools && offersRecall(params) ? true : undefined;
      const r = await engine.compact({ wire: params.prompt, path: "prompt", provider: true, modelId, id, recallHint });
      const out = r.changed ? { ...params, prompt: r.messages } : params;
      calls.set(out, { conversation: r.info.conversation, modelId });
      return out;
    },
    async wrapGenerate<R extends { usage?: unknown }>({ doGenerate, params }: { doGenerate: () => PromiseLike<R>; params: AiSdkCallParams }): Promise<R> {
      const result = await doGenerate();
      report(params, result?.usage);
      return result;
    },
    async wrapStream<R extends { stream: ReadableStream<unknown> }>({
      doStream,
      params,
    }: {
      doStream: () => PromiseLike<R>;
      params: AiSdkCallParams;
    }): Promise<R> {
      const result = await doStream();
      if (!calls.has(params)) return result;
      let seen = false;
      const stream = result.stream.pipeThrough(
        new TransformStream<unknown, unknown>({
          transform(part, controller) {
            if (!seen && typeof part === "object" && part !== null && (part as { type?: unknown }).type === "finish") {
              seen = true;
              report(params, (part as { usage?: unknown }).usage);
            }
            controller.enqueue(part);
          },
          flush() {
            // A stream that ended without a finish part reported nothing: say so.
            if (!seen) report(params, undefined);
          },
        }),
      );
      return { ...result, stream };
    },
  };
}

/**
 * A `prepareStep` for generateText / streamText that compacts the step's messages
 * (`ModelMessage[]` in, the same shape out) and returns `{ messages }`. To combine it with
 * settings of your own, call it inside your prepareStep and spread its result. One session per
 * conversation: `conversationId(options)`, else the prefix key. The previous step's `usage`
 * (in `steps`) sets the next budget (see the module comment).
 */
export function ctxfoldPrepareStep(
  options: CtxfoldIntegrationOptions<AiSdkPrepareStepOptions> = {},
): <O extends AiSdkPrepareStepOptions>(step: O) => Promise<{ messages: O["messages"] }> {
  checkPeerVersions(["ai"], "ctxfoldPrepareStep of ctxfold/ai-sdk");
  const engine = new PromptCompactor<AiSdkPrepareStepOptions>(options);
  return async <O extends AiSdkPrepareStepOptions>(step: O): Promise<{ messages: O["messages"] }> => {
    const n = step.stepNumber;
    const last = Array.isArray(step.steps) && step.steps.length > 0 ? step.steps[step.steps.length - 1] : undefined;
    // The previous step's usage is for the prompt this prepareStep compacted at step n - 1.
    const report = typeof n === "number" && n > 0 && last !== undefined ? { usage: (last as { usage?: unknown } | null)?.usage, tag: n - 1 } : undefined;
    const r = await engine.compact({
      wire: step.messages,
      path: "messages",
      provider: false,
      modelId: modelIdOf(step.model),
      id: engine.idOf(step),
      tag: n,
      report,
    });
    return { messages: r.messages as O["messages"] };
  };
}
