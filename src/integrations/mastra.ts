/**
 * The Mastra integration: `CtxfoldProcessor`, an input processor for
 * `new Agent({ inputProcessors: [new CtxfoldProcessor({ budget })] })` with the request-time
 * contract of Mastra's own TokenLimiter (`TokenLimiterProcessor` of @mastra/core 1.x).
 *
 * Decisions:
 * - The hook is `processLLMRequest({ prompt, model, requestContext, abort, … })`, as
 *   TokenLimiter's: the agent loop calls it after the message list became the provider prompt
 *   (LanguageModelV2Prompt) and right before the model call, on every step. It returns
 *   `{ prompt }` with the compacted prompt in the same shape, or undefined when the prompt goes on
 *   as it came (TokenLimiter's "no change"). Like TokenLimiter's trimming there, the change is
 *   transient: stored messages, memory and the UI keep everything. The prompt goes through the
 *   AI SDK integration's engine (ai-sdk.ts), which explains the shape handling and sessions.
 * - No `processInput`. TokenLimiter's processInput does nothing in its default trim modes
 *   ("best-fit", "contiguous"): it returns the message list untouched, and its
 *   `processInputStep` also defers to processLLMRequest whenever the runner will call it
 *   (`llmRequestStage`). Only its "memory-only" mode acts there, by deleting stored history
 *   messages (MastraDBMessage, by id) from the thread. ctxfold has no faithful counterpart of
 *   that: it rewrites messages (shortened tool outputs carrying refs, merged old turns) rather
 *   than dropping them, and writing rewritten messages back into memory would replace the
 *   originals users and later turns see. So this processor acts only where the model's prompt
 *   is built; a caller that never runs processLLMRequest (legacy generate / stream, processor
 *   workflows) gets no compaction from it.
 * - Sessions: the caller's `conversationId(args)` when given; else, inside a memory thread
 *   (`requestContext` "mastra__threadId", or the "MastraMemory" context's thread id), the thread
 *   plus the prompt's prefix key, so two agents sharing a thread (a supervisor and its
 *   sub-agent) keep separate sessions; else the prefix key alone.
 * - Prefix stability follows the prompts Mastra builds. Within one generate / stream the prompts
 *   of successive steps only append, and epochs hold. Passing the whole history to every
 *   `agent.generate` call without memory makes Mastra restamp each message
 *   (`providerOptions.mastra.createdAt`) and regroup tool steps, so each such call shows the
 *   session a changed prefix and compacts afresh (still within budget; the prefix key ignores
 *   the stamps, so the session is still the one conversation's).
 * - Errors: a bad shape or an unknown context size is the CtxfoldError the AI SDK integration
 *   throws (paths `prompt[3]`, `budget`), which the agent surfaces as the call's error. A budget
 *   even the messages that must stay cannot meet is TokenLimiter's typed refusal: the call's
 *   `abort(reason, { retry: false, metadata })`, which Mastra turns into a TripWire (the run
 *   ends with a tripwire result instead of a provider error); without an `abort` it is the
 *   AI SDK integration's E_OVER_BUDGET. `onOverBudget: "return"` lets the best prompt go on
 *   either way.
 * - No import of @mastra/core: the processor is a plain class whose shape Mastra accepts (the
 *   tests assign it to `InputProcessor`, the type of an agent's `inputProcessors`). The
 *   constructor checks the installed @mastra/core's version when it resolves (peer-version.ts).
 */
import { checkPeerVersions } from "../peer-version.js";
import { type AiSdkPromptMessage, type CtxfoldIntegrationOptions, modelIdOf, PromptCompactor } from "./ai-sdk.js";

/** What Mastra passes to `processLLMRequest` (the fields ctxfold reads; ProcessLLMRequestArgs). */
export interface MastraLLMRequestArgs {
  /** The provider prompt of this model call (LanguageModelV2Prompt). */
  prompt: AiSdkPromptMessage[];
  /** The model the prompt goes to: a model object (`modelId`), a router id string or a config (`id`). */
  model?: unknown;
  requestContext?: { get(key: string): unknown };
  /** Ends the run with a TripWire (Mastra's typed refusal). */
  abort?: (reason?: string, options?: { retry?: boolean; metadata?: unknown }) => never;
  stepNumber?: number;
}

export type CtxfoldProcessorOptions = CtxfoldIntegrationOptions<MastraLLMRequestArgs>;

/** The memory thread of a call: Mastra's reserved request-context key, else its memory context. */
function threadOf(args: MastraLLMRequestArgs): string | undefined {
  const rc = args.requestContext;
  if (!rc || typeof rc.get !== "function") return undefined;
  const direct = rc.get("mastra__threadId");
  if (typeof direct === "string" && direct !== "") return direct;
  const memory = rc.get("MastraMemory") as { thread?: { id?: unknown } } | undefined;
  const id = memory?.thread?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/**
 * A Mastra input processor that compacts the prompt of every model call to a budget
 * (`budget`, or the model's known context window minus `reserveTokens`), keeping one compactor
 * session per conversation so the prompt's prefix stays byte-identical between epochs.
 */
export class CtxfoldProcessor {
  readonly id = "ctxfold";
  readonly name = "ctxfold";
  readonly #engine: PromptCompactor<MastraLLMRequestArgs>;

  constructor(options: CtxfoldProcessorOptions = {}) {
    checkPeerVersions(["@mastra/core"], "CtxfoldProcessor of ctxfold/mastra");
    this.#engine = new PromptCompactor<MastraLLMRequestArgs>(options);
  }

  /** The compacted prompt of this call, or undefined when it goes on unchanged (see the module comment). */
  async processLLMRequest<A extends MastraLLMRequestArgs>(args: A): Promise<{ prompt: A["prompt"] } | undefined> {
    const id = this.#engine.idOf(args);
    const thread = id === undefined ? threadOf(args) : undefined;
    const abort = typeof args.abort === "function";
    const r = await this.#engine.compact({
      wire: args.prompt,
      path: "prompt",
      provider: true,
      modelId: modelIdOf(args.model),
      id,
      scope: thread === undefined ? undefined : `thread:${thread}`,
      keepOverBudget: abort,
    });
    if (r.info.status === "budget_infeasible" && abort && this.#engine.options.onOverBudget !== "return") {
      const { budget, tokensBefore, tokensAfter, criticalTokens } = r.info;
      args.abort?.(`ctxfold: the prompt cannot be brought within the budget of ${budget} tokens: what must stay takes ${criticalTokens ?? tokensAfter}`, {
        retry: false,
        metadata: { budget, tokensBefore, tokensAfter, criticalTokens },
      });
    }
    return r.changed ? { prompt: r.messages as A["prompt"] } : undefined;
  }

  /** The sessions kept (one per conversation seen, up to `maxSessions`). */
  get sessions(): number {
    return this.#engine.pool.size;
  }
}
