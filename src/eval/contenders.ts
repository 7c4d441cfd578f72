/**
 * The contenders of `ctxfold eval` and `npm run bench:quality`: one protocol (OpenAI Chat
 * Completions messages in, the same out, a token budget), and an adapter per peer that converts
 * to the peer's own message type, runs it configured as its documentation suggests for keeping a
 * prompt under a budget, and converts back. Peers are optional plugins: each is imported only
 * when asked for (`--against`), and a peer whose package is not installed is a one-line note
 * (loadPeers), never a crash. They are devDependencies here and optional peerDependencies of the
 * published package.
 *
 * - "no compaction": the input unchanged (the baseline).
 * - "tail baseline" (tail-baseline.ts): system / developer messages and the task, then the
 *   newest whole tool-call units that fit; what a careful hand-written trimmer does.
 * - LangChain `trimMessages` (@langchain/core/messages): strategy "last", includeSystem, startOn
 *   human or ai, the token counter this bench measures with (exact o200k with OpenAI's message
 *   overheads). Messages go in as SystemMessage / HumanMessage / AIMessage (with tool_calls) /
 *   ToolMessage and come back as the very OpenAI messages they were made from (trimMessages only
 *   drops messages without allowPartial, so nothing is re-serialised).
 * - Mastra `TokenLimiter` (@mastra/core/processors, `TokenLimiterProcessor`, exported as
 *   `TokenLimiter` too): the input processor's request-time hook `processLLMRequest({ prompt })`,
 *   which is what an agent with `inputProcessors: [new TokenLimiter(limit)]` runs before every
 *   model call; default trim mode "best-fit", tool calls grouped with their results, system
 *   messages always kept. It counts with its bundled tokenx estimate: 1.x has no way to give it
 *   another counter on this path (the `encoding` option is ignored, `tokenCounter` is for memory
 *   trimming only). Its TripWire ("system messages alone exceed", "no messages fit") is its typed
 *   refusal and counts as infeasible.
 * - AI SDK `pruneMessages` recipe (ai): the AI SDK cookbook's "Compact Agent Context": when the
 *   prompt is over the threshold, `pruneMessages({ reasoning: "all", toolCalls:
 *   "before-last-3-messages", emptyMessages: "remove" })`. The threshold is the budget, counted
 *   with exact o200k (the recipe's estimate is JSON length / 4 and it says to use a real tokenizer
 *   for tighter accounting). It has no budget of its own: what it prunes is what it prunes.
 *   Messages go through the project's adapters (openai-chat → canonical → ai-sdk ModelMessage and
 *   back), which round-trip every dev-corpus message exactly.
 * - ctxfold: `createCompactor({ store }).session().compact(messages, { budget, format:
 *   "openai-chat" })`: one session per run and budget, called at the run's prompt points in order
 *   (epochs keep the prefix stable between compactions, as in a runner).
 */
import type { Message } from "../model/schema.js";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { OpenAIChatMessage, OpenAIChatToolCall } from "../adapters/openai-chat.js";
import { parseMessages, renderMessages } from "../adapters/index.js";
import { createCompactor, type CompactorConfig } from "../policy/index.js";
import { packageRoot } from "../package-root.js";
import { peerMismatches, peerVersionError } from "../peer-version.js";
import { createMemoryStore } from "../store/index.js";
import { CtxfoldError } from "../errors.js";
import { contentText } from "./metrics.js";
import type { CompactOutput, Contender } from "./protocol.js";
import { tailBaseline } from "./tail-baseline.js";
import { promptTokens } from "./tokens.js";

export { kCounter, messageTokens, promptTokens } from "./tokens.js";
export type { CompactOutput, Contender } from "./protocol.js";

async function versionOf(pkg: string): Promise<string> {
  try {
    const { createRequire } = await import("node:module");
    const require = createRequire(import.meta.url);
    return `${pkg} ${(require(`${pkg}/package.json`) as { version: string }).version}`;
  } catch {
    return pkg;
  }
}

// ---------------------------------------------------------------------------------------------

export function noCompaction(): Contender {
  return {
    name: "no compaction",
    version: "baseline",
    note: "the input unchanged",
    compact: async (messages) => ({ messages }),
  };
}

// ---------------------------------------------------------------------------------------------
// LangChain.

/** The LangChain messages module, loaded only when the peer is asked for. */
type LangChain = typeof import("@langchain/core/messages");

/** An OpenAI message as the LangChain message of its role, under `id` (its index in the prompt). */
function toLangchain(lc: LangChain, m: OpenAIChatMessage, id: string): BaseMessage {
  const content = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? (m.content as { type: string; [k: string]: unknown }[]) : "";
  switch (m.role) {
    case "system":
    case "developer":
      return new lc.SystemMessage({ content, id });
    case "user":
      return new lc.HumanMessage({ content, id });
    case "assistant":
      return new lc.AIMessage({ content, id, tool_calls: langchainToolCalls(m.tool_calls ?? []) });
    case "tool":
      return new lc.ToolMessage({ content, id, tool_call_id: m.tool_call_id });
    default:
      return new lc.HumanMessage({ content: contentText(m), id });
  }
}

/** OpenAI function calls as LangChain tool calls: arguments parsed, kept as `{ input }` when they are not a JSON object. */
function langchainToolCalls(calls: readonly OpenAIChatToolCall[]) {
  return calls.flatMap((c) => {
    const f = (c as { function?: { name: string; arguments: string } }).function;
    if (!f) return [];
    let args: unknown;
    try {
      args = JSON.parse(f.arguments);
    } catch {
      args = undefined;
    }
    const obj = args && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : { input: f.arguments };
    return [{ id: (c as { id?: string }).id ?? "", name: f.name, args: obj, type: "tool_call" as const }];
  });
}

/** The OpenAI message a LangChain message was made from, when it still holds what the original did, else undefined. */
function originalOf(m: BaseMessage, byId: ReadonlyMap<string, OpenAIChatMessage>): OpenAIChatMessage | undefined {
  const o = m.id !== undefined ? byId.get(m.id) : undefined;
  if (!o) return undefined;
  const c = m.content;
  const same =
    typeof c === "string"
      ? c === (typeof o.content === "string" ? o.content : o.content == null ? "" : undefined)
      : JSON.stringify(c) === JSON.stringify(o.content);
  return same ? o : undefined;
}

/** A LangChain message as a new OpenAI message (for one trimMessages changed). */
function fromLangchain(m: BaseMessage): OpenAIChatMessage {
  const content = typeof m.content === "string" ? m.content : (m.content as OpenAIChatMessage["content"]);
  const type = m.getType();
  if (type === "system") return { role: "system", content };
  if (type === "ai") {
    const calls = (m as AIMessage).tool_calls ?? [];
    const out: OpenAIChatMessage = { role: "assistant", content };
    if (calls.length)
      out.tool_calls = calls.map((c) => ({ id: c.id ?? "", type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    return out;
  }
  if (type === "tool") return { role: "tool", tool_call_id: (m as ToolMessage).tool_call_id, content };
  return { role: "user", content };
}

/**
 * One prompt through trimMessages: converted to LangChain messages, trimmed with this bench's
 * token count, and converted back (the very OpenAI messages wherever trimMessages kept one whole).
 */
async function trimWithLangchain(lc: LangChain, messages: OpenAIChatMessage[], budget: number): Promise<CompactOutput> {
  const byId = new Map<string, OpenAIChatMessage>();
  const input = messages.map((m, i) => {
    byId.set(String(i), m);
    return toLangchain(lc, m, String(i));
  });
  // The OpenAI message each LangChain message stands for, made once per object (the measure memoises per object).
  const asOpenAI = new WeakMap<BaseMessage, OpenAIChatMessage>();
  const openaiOf = (m: BaseMessage): OpenAIChatMessage => {
    let o = asOpenAI.get(m);
    if (o === undefined) asOpenAI.set(m, (o = originalOf(m, byId) ?? fromLangchain(m)));
    return o;
  };
  const tokenCounter = (ms: BaseMessage[]): number => promptTokens(ms.map(openaiOf));
  const out = await lc.trimMessages(input, { maxTokens: budget, strategy: "last", includeSystem: true, startOn: ["human", "ai"], tokenCounter });
  // When nothing after the system message can start the tail, trimMessages returns [undefined].
  const kept = out.filter((m): m is BaseMessage => m !== undefined && m !== null);
  const anomaly = kept.length < out.length ? "trimMessages returned undefined entries (dropped)" : undefined;
  return { messages: kept.map((m) => originalOf(m, byId) ?? fromLangchain(m)), anomaly };
}

export async function langchainTrim(): Promise<Contender> {
  const lc = await import("@langchain/core/messages");
  const version = await versionOf("@langchain/core");
  return {
    name: "LangChain trimMessages",
    version,
    note: 'strategy "last", includeSystem: true, startOn: ["human", "ai"] (so a tail never opens on an orphan tool result; with startOn "human" alone, the docs\' chat advice, a tail without a human message, as in every agent run whose only human message is its task, comes back as [undefined], system message included), tokenCounter: this bench\'s exact o200k with OpenAI overheads',
    compact: (messages, budget) => trimWithLangchain(lc, messages, budget),
  };
}

// ---------------------------------------------------------------------------------------------
// AI SDK ModelMessages through the project's adapters.

function toAiSdk(messages: OpenAIChatMessage[]): unknown[] {
  const { messages: canonical } = parseMessages(messages, { format: "openai-chat" });
  return renderMessages(canonical, "ai-sdk") as unknown[];
}

function fromAiSdk(messages: unknown[]): OpenAIChatMessage[] {
  const { messages: canonical } = parseMessages(messages, { format: "ai-sdk" });
  return renderMessages(canonical as Message[], "openai-chat") as OpenAIChatMessage[];
}

// ---------------------------------------------------------------------------------------------
// Mastra.

interface PromptPart {
  type: string;
  [k: string]: unknown;
}
interface PromptMessage {
  role: string;
  content: string | PromptPart[];
  [k: string]: unknown;
}

export async function mastraTokenLimiter(): Promise<Contender> {
  const { TokenLimiterProcessor } = await import("@mastra/core/processors");
  const version = await versionOf("@mastra/core");
  const limiters = new Map<number, InstanceType<typeof TokenLimiterProcessor>>();
  return {
    name: "Mastra TokenLimiter",
    version,
    note: 'TokenLimiterProcessor ({ limit: budget }, trimMode "best-fit") at processLLMRequest, the hook an agent runs on the provider prompt before each model call; counts with its bundled tokenx estimate (no o200k counter can be given on this path); its TripWire counts as infeasible',
    async compact(messages, budget) {
      let limiter = limiters.get(budget);
      if (!limiter) limiters.set(budget, (limiter = new TokenLimiterProcessor({ limit: budget })));
      // ModelMessage → the provider prompt shape: user and assistant content as part lists.
      const model = toAiSdk(messages) as PromptMessage[];
      const origin = new Map<PromptMessage, OpenAIChatMessage>();
      let modelAt = 0;
      const prompt = model.map((m) => {
        const p: PromptMessage = m.role !== "system" && typeof m.content === "string" ? { ...m, content: [{ type: "text", text: m.content }] } : m;
        // One OpenAI message is one ModelMessage for the corpus (tool messages one result each).
        origin.set(p, messages[modelAt++]);
        return p;
      });
      if (model.length !== messages.length) origin.clear();
      let result: { prompt?: PromptMessage[] } | undefined;
      try {
        const args = {
          prompt,
          model: undefined,
          stepNumber: 0,
          steps: [],
          state: {},
          abort: (reason?: string) => {
            throw new Error(reason);
          },
        };
        result = (await limiter.processLLMRequest(args as unknown as Parameters<typeof limiter.processLLMRequest>[0])) as
          | { prompt?: PromptMessage[] }
          | undefined;
      } catch (e) {
        const name = (e as { constructor?: { name?: string } })?.constructor?.name;
        if (name === "TripWire" || /^TokenLimiterProcessor:/.test(String((e as Error)?.message))) return { messages: [], infeasible: true };
        throw e;
      }
      const kept = result?.prompt ?? prompt;
      if (kept.every((p) => origin.has(p))) return { messages: kept.map((p) => origin.get(p)!) };
      return { messages: fromAiSdk(kept) };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// AI SDK.

export async function aiSdkPruneRecipe(): Promise<Contender> {
  const ai = await import("ai");
  const version = await versionOf("ai");
  return {
    name: "AI SDK pruneMessages recipe",
    version,
    note: 'the cookbook\'s "Compact Agent Context": over the budget (exact o200k), pruneMessages({ reasoning: "all", toolCalls: "before-last-3-messages", emptyMessages: "remove" }); no budget of its own',
    async compact(messages, budget) {
      if (promptTokens(messages) <= budget) return { messages };
      const model = toAiSdk(messages) as Parameters<typeof ai.pruneMessages>[0]["messages"];
      const pruned = ai.pruneMessages({ messages: model, reasoning: "all", toolCalls: "before-last-3-messages", emptyMessages: "remove" });
      return { messages: fromAiSdk(pruned as unknown[]) };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// ctxfold.

/**
 * The ctxfold contender: one compactor session per run and budget (`compactor.session()`), the
 * way a runner uses it, so epochs keep the rendered prefix stable between compactions. `config`
 * is createCompactor's (validated by it: a bad field throws E_BAD_INPUT naming it); its store is
 * replaced by a fresh memory store per run, whose refs the metrics resolve.
 */
export async function ctxfold(config: Omit<CompactorConfig, "store"> = {}, name = "ctxfold"): Promise<Contender> {
  createCompactor({ ...config }); // validates the config before any run
  let store = createMemoryStore();
  let session = createCompactor({ ...config, store }).session();
  let lastEpoch = 0;
  return {
    name,
    version: `ctxfold ${packageRoot()?.version ?? "(version unknown)"}`,
    note: `createCompactor(${Object.keys(config).length ? `${JSON.stringify(config)} + ` : ""}{ store: createMemoryStore() }).session().compact(messages, { budget, format: "openai-chat" }), one session per run and budget; status "budget_infeasible" is its typed refusal; refs resolve through the store`,
    startRun() {
      store = createMemoryStore();
      session = createCompactor({ ...config, store }).session();
      lastEpoch = 0;
    },
    async compact(messages, budget) {
      const r = await session.compact(messages, { budget, format: "openai-chat" });
      const s = store;
      const newEpoch = r.epoch !== lastEpoch;
      lastEpoch = r.epoch;
      return {
        messages: r.messages as OpenAIChatMessage[],
        infeasible: r.status === "budget_infeasible",
        refs: r.refs,
        resolve: (ref) => s.getText(ref),
        epoch: r.epoch,
        newEpoch,
        stages: r.stages,
        compactorTokens: { tokensBefore: r.tokensBefore, tokensAfter: r.tokensAfter },
        canonical: r.canonical,
      };
    },
  };
}

/** The peers `--against` names, with the package each needs. */
export const kPeers = {
  langchain: { name: "LangChain trimMessages", package: "@langchain/core", load: langchainTrim },
  mastra: { name: "Mastra TokenLimiter", package: "@mastra/core", load: mastraTokenLimiter },
  "ai-sdk": { name: "AI SDK pruneMessages recipe", package: "ai", load: aiSdkPruneRecipe },
} as const;
export type PeerName = keyof typeof kPeers;

const isMissingModule = (e: unknown) => {
  const code = (e as { code?: unknown })?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED";
};

/**
 * The peers named, in the order named; a peer whose package is not installed, is installed at a
 * version outside ctxfold's range for it (peerMismatches: the E_PEER_VERSION line, unloaded, so
 * no figure of an old peer is reported as the peer's), or fails to load gives a one-line note
 * instead. An unknown name throws E_BAD_INPUT listing the known ones.
 */
export async function loadPeers(
  names: readonly string[],
  registry: Readonly<Record<string, { name: string; package: string; load: () => Promise<Contender> }>> = kPeers,
): Promise<{ contenders: Contender[]; notes: string[] }> {
  const contenders: Contender[] = [];
  const notes: string[] = [];
  for (const n of names) {
    if (!Object.hasOwn(registry, n))
      throw new CtxfoldError("E_BAD_INPUT", `unknown peer ${JSON.stringify(n)} (one of ${Object.keys(registry).join(", ")})`, { path: "against" });
    const peer = registry[n];
    const old = peerMismatches([peer.package]);
    if (old.length > 0) {
      notes.push(`${peer.name} skipped: ${peerVersionError(`eval --against ${n}`, old).message}`);
      continue;
    }
    try {
      contenders.push(await peer.load());
    } catch (e) {
      notes.push(
        isMissingModule(e)
          ? `${peer.name} skipped: ${peer.package} is not installed (npm install ${peer.package})`
          : `${peer.name} skipped: ${String((e as Error)?.message ?? e).split("\n")[0]}`,
      );
    }
  }
  return { contenders, notes };
}

/**
 * The quality bench's contenders, in table order: ctxfold, the "no compaction" and "tail
 * baseline" baselines, then every peer that loads (loadPeers: a note for each one that does not).
 * `only` keeps those whose names contain one of its words.
 */
export async function loadContenders(only?: readonly string[]): Promise<{ contenders: Contender[]; notes: string[] }> {
  const want = (name: string) => !only || only.some((o) => name.toLowerCase().includes(o.toLowerCase()));
  const own = [
    ...(want("ctxfold") ? [await ctxfold()] : []),
    ...(want("no compaction") ? [noCompaction()] : []),
    ...(want("tail baseline") ? [tailBaseline()] : []),
  ];
  const peers = await loadPeers((Object.keys(kPeers) as PeerName[]).filter((k) => want(kPeers[k].name)));
  return { contenders: [...own, ...peers.contenders], notes: peers.notes };
}
