/**
 * LangChain messages to ctxfold and back, for both LangChain integrations (the Runnable in
 * langchain.ts, the agent middleware in langchain-agent.ts): a message list in, compacted in its
 * conversation's session, and the compacted list out in the caller's message classes.
 * Nothing here imports `@langchain/core` statically; its message classes are imported on first
 * need (see below).
 *
 * Decisions:
 * - Input: BaseMessage instances (of any @langchain/core copy: they are recognised by their
 *   `getType()`), the adapter's dict form (`{ type | role, content, ... }`), or a mix; a chat
 *   prompt's ChatPromptValue is read through `toChatMessages()`. Instances go through the
 *   project's langchain adapter as dicts of their fields (content, id, name, additional_kwargs,
 *   response_metadata, tool_calls, invalid_tool_calls, usage_metadata, tool_call_id, status,
 *   artifact, metadata); the adapter carries what it does not model, so a rebuilt message keeps it.
 * - Output: every message compaction left alone is the very object passed in (or an earlier
 *   call's equal one: within an epoch the session keeps the epoch's messages), and a message it
 *   changed or made is one object for the whole epoch, so within an epoch each prompt is the
 *   previous prompt's very objects plus new ones (provider caches hit). A changed or made
 *   message is a HumanMessage / AIMessage / SystemMessage / ToolMessage by its kind — the
 *   caller's own class when the input holds an instance of it (same package copy, so
 *   `instanceof` holds in the caller's code), else @langchain/core's — when the input held any
 *   instance, else a dict. A changed chunk comes back as its message class.
 * - Shapes ctxfold cannot read fail with a CtxfoldError naming the shape and `messages[i]`:
 *   ChatMessage / FunctionMessage / RemoveMessage (no canonical role), strings and
 *   `[role, content]` tuples (message-likes: coerceMessageLikeToMessage first), the serialised
 *   constructor form (`toJSON()`: revive it with load()), stored messages (`{ type, data }`).
 */
import { CtxfoldError } from "../errors.js";
import { langchainAdapter } from "../adapters/index.js";
import type { LangchainMessage } from "../adapters/langchain.js";
import { kKinds } from "../adapters/langchain-wire.js";
import type { Message, Role } from "../model/schema.js";
import type { CanonicalResult } from "../policy/types.js";
import type { CompactorSession } from "../policy/session.js";
import { budgetOf, openConversation, refuseOverBudget, type IntegrationOptions, type SessionPool } from "./common.js";

/** The options of the LangChain integrations: common.ts's, and the model and conversation ids when the call names none. */
export interface LangChainOptions extends IntegrationOptions {
  /**
   * The chat model's id, for its context window when no budget is given.
   * @default none; ctxfoldMiddleware reads the called model's id from each request
   */
  model?: string;
  /**
   * The conversation's id when the call's config names none.
   * @default none: the conversation's stable prefix (system messages and first user message) keys it
   */
  conversationId?: string;
}

/** What ctxfold reads of a RunnableConfig (and of an agent middleware's runtime). */
export interface LangChainConfigLike {
  configurable?: Record<string, unknown>;
}

/** A ChatPromptValue, what a chat prompt template produces. */
export interface PromptValueLike {
  toChatMessages(): unknown[];
}

/** A message class's constructor, as @langchain/core's are. */
type MessageClass = new (fields: Record<string, unknown>) => object;

// ---------------------------------------------------------------------------------------------
// LangChain messages to the adapter's dicts and back.

const kClassNames: Record<Role, string> = { user: "HumanMessage", assistant: "AIMessage", system: "SystemMessage", tool: "ToolMessage" };
const kFields = [
  "content",
  "id",
  "name",
  "additional_kwargs",
  "response_metadata",
  "tool_calls",
  "invalid_tool_calls",
  "usage_metadata",
  "tool_call_id",
  "status",
  "artifact",
  "metadata",
] as const;

/** The instance each dict made for an instance stands for (kept across calls: sessions hand back earlier calls' dicts). */
const instanceOf = new WeakMap<object, object>();
/** Dicts the caller passed (handed back as they are). */
const callerDicts = new WeakSet<object>();
/**
 * What each canonical message came back as. A session keeps its epoch's compacted messages (the
 * same canonical objects) across calls, so a message compaction changed comes back as the same
 * object at every call of the epoch, as kept ones do.
 */
const rendered = new WeakMap<Message, { instances: boolean; out: object[] }>();

/** The kind of a BaseMessage instance (`getType()`, `_getType()` before @langchain/core 1), or undefined for a non-instance. */
export function instanceKind(m: Record<string, unknown>): string | undefined {
  const get = typeof m.getType === "function" ? m.getType : typeof m._getType === "function" ? m._getType : undefined;
  if (!get) return undefined;
  const kind = (get as () => unknown).call(m);
  return typeof kind === "string" ? kind : String(kind);
}

function className(m: object): string {
  const ctor = (m as { constructor?: { name?: unknown; lc_name?: unknown } }).constructor;
  const name = typeof ctor?.lc_name === "function" ? (ctor.lc_name as () => unknown)() : ctor?.name;
  return typeof name === "string" && name !== "" ? name : "message";
}

function shapeError(what: string, i: number): CtxfoldError {
  return new CtxfoldError("E_SCHEMA", what, { path: `messages[${i}]` });
}

/** The adapter's dict for message i, and whether it came from an instance (see the module comment). */
function toDict(m: unknown, i: number, classes: Map<Role, MessageClass>): { dict: LangchainMessage; instance: boolean } {
  if (typeof m === "string")
    throw shapeError(
      `a string is a LangChain message-like, not a message: pass BaseMessage instances or { type, content } dicts (coerceMessageLikeToMessage converts it)`,
      i,
    );
  if (Array.isArray(m))
    throw shapeError(
      `a [role, content] tuple is a LangChain message-like, not a message: pass BaseMessage instances or { type, content } dicts (coerceMessageLikeToMessage converts it)`,
      i,
    );
  if (typeof m !== "object" || m === null)
    throw shapeError(`expected a LangChain message (a BaseMessage or a { type, content } dict), got ${m === null ? "null" : typeof m}`, i);
  const o = m as Record<string, unknown>;
  const kind = instanceKind(o);
  if (kind === undefined) {
    if (o.lc === 1 && o.type === "constructor") {
      const id = Array.isArray(o.id) ? String(o.id[o.id.length - 1]) : "?";
      throw shapeError(
        `a serialised LangChain ${id} ({ lc: 1, type: "constructor" }, what toJSON() gives): revive it with load() from @langchain/core/load`,
        i,
      );
    }
    if (typeof o.type === "string" && isPlain(o.data) && !("content" in o)) {
      throw shapeError(
        `a stored LangChain message ({ type: ${JSON.stringify(o.type)}, data }): mapStoredMessagesToChatMessages turns it back into a message`,
        i,
      );
    }
    callerDicts.add(o);
    return { dict: o as LangchainMessage, instance: false };
  }
  const role = kKinds.get(kind);
  if (role === undefined) {
    throw new CtxfoldError(
      "E_UNKNOWN_ROLE",
      `a LangChain ${className(o)} (type ${JSON.stringify(kind)}) has no ctxfold form: use HumanMessage, AIMessage, SystemMessage or ToolMessage`,
      { path: `messages[${i}]` },
    );
  }
  const ctor = (o as { constructor?: unknown }).constructor;
  if (typeof ctor === "function" && className(o) === kClassNames[role] && !classes.has(role)) classes.set(role, ctor as MessageClass);
  const dict: Record<string, unknown> = { type: kind };
  for (const k of kFields) if (o[k] !== undefined) dict[k] = o[k];
  instanceOf.set(dict, o);
  return { dict: dict as LangchainMessage, instance: true };
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

let coreMessages: Promise<Record<string, unknown>> | undefined;

/** @langchain/core's message classes, imported on first need. */
async function coreClass(role: Role): Promise<MessageClass> {
  let mod: Record<string, unknown>;
  try {
    mod = await (coreMessages ??= import("@langchain/core/messages") as Promise<Record<string, unknown>>);
  } catch (err) {
    coreMessages = undefined;
    throw new CtxfoldError("E_BAD_INPUT", "@langchain/core is not installed (npm install @langchain/core): it makes the messages compaction changed", {
      path: "@langchain/core",
      cause: err,
    });
  }
  return mod[kClassNames[role]] as MessageClass;
}

/** A message of the caller's classes (or @langchain/core's) from a dict the adapter rendered. */
async function fromDict(d: LangchainMessage, classes: Map<Role, MessageClass>): Promise<object> {
  const { type, role: roleKey, ...fields } = d;
  const role = kKinds.get(String(roleKey ?? type))!;
  let cls = classes.get(role);
  if (!cls) classes.set(role, (cls = await coreClass(role)));
  return new cls(fields);
}

/** The message list of a chain input: an array, or a ChatPromptValue's messages. */
export function messageList(input: unknown): readonly unknown[] {
  if (Array.isArray(input)) return input;
  if (isPlain(input) && typeof (input as { toChatMessages?: unknown }).toChatMessages === "function")
    return (input as unknown as PromptValueLike).toChatMessages();
  const got = input === null ? "null" : isPlain(input) ? `an object with keys ${Object.keys(input).slice(0, 5).join(", ") || "(none)"}` : typeof input;
  throw new CtxfoldError("E_SCHEMA", `expected an array of LangChain messages or a ChatPromptValue, got ${got}`, { path: "messages" });
}

/** The conversation a run's config names: `configurable.conversationId`, else LangGraph's `thread_id`. */
export function configuredId(config: LangChainConfigLike | undefined): string | undefined {
  const c = config?.configurable;
  const id = c?.conversationId ?? c?.thread_id;
  return id === undefined || id === null ? undefined : String(id);
}

/** One compaction's output: the messages, and the session and result they came from. */
export interface LangChainCompaction<M extends object> {
  messages: M[];
  /** The conversation's key in its pool (SessionPool.recordUsage takes it). */
  key: string;
  session: CompactorSession;
  result: CanonicalResult;
}

/** What one LangChain compaction is for, beside its messages (compactLangChain). */
export interface LangChainCall {
  /** The model the call goes to: its budget (budgetOf) and its usage feedback. */
  modelId: string | undefined;
  /** The caller's id of the conversation; undefined: its stable prefix keys it. */
  conversationId: string | undefined;
  /** Read the previous call's usage from its reply in the list (the Runnable's feedback: see langchain.ts). */
  replyUsage?: boolean;
  /** The recall hint for this call, over the options' `recallHint` (the agent middleware's, when the call offers the recall tool). */
  recallHint?: boolean;
}

/**
 * One compaction: `list` (LangChain messages) compacted in its conversation's session to the
 * budget of `options` and the call's model (budgetOf, with the conversation's usage ratio), in
 * the caller's classes (see the module comment). With `replyUsage`, the reply to the previous
 * call found in `list` reports that call's usage first; a caller that sees the reply itself
 * (the agent middleware) records it with the returned `key`.
 */
export async function compactLangChain<M extends object>(
  pool: SessionPool,
  list: readonly unknown[],
  options: LangChainOptions,
  call: LangChainCall,
): Promise<LangChainCompaction<M>> {
  const { modelId, conversationId, replyUsage, recallHint } = call;
  const classes = new Map<Role, MessageClass>();
  const dicts = new Array<LangchainMessage>(list.length);
  let instances = false;
  for (let i = 0; i < list.length; i++) {
    const r = toDict(list[i], i, classes);
    dicts[i] = r.dict;
    if (r.instance) instances = true;
  }
  const { key, session, messages } = openConversation(pool, "langchain", dicts, conversationId);
  if (replyUsage) {
    const previous = pool.sentTag(key);
    if (typeof previous === "number" && previous < dicts.length) {
      const reply = dicts[previous] as Record<string, unknown>;
      if (kKinds.get(String(reply.role ?? reply.type)) === "assistant") pool.recordUsage(key, reply.usage_metadata, options, modelId);
    }
  }
  const budget = budgetOf(options, modelId, pool.usageRatio(key, modelId));
  const r = await pool.compact(
    key,
    session,
    messages,
    recallHint === undefined ? { budget, format: "langchain" } : { budget, format: "langchain", recallHint },
  );
  pool.noteSent(key, modelId, r.tokensAfter, dicts.length);
  refuseOverBudget(options, { status: r.status, budget, tokensAfter: r.tokensAfter, criticalTokens: r.infeasible?.criticalTokens }, "messages");
  const result: object[] = [];
  for (const m of r.canonical) {
    const memo = rendered.get(m);
    if (memo && memo.instances === instances) {
      for (const o of memo.out) result.push(o);
      continue;
    }
    // The langchain adapter renders each canonical message on its own (one or more dicts).
    const out: object[] = [];
    for (const d of langchainAdapter.render([m])) out.push(instanceOf.get(d) ?? (callerDicts.has(d) || !instances ? d : await fromDict(d, classes)));
    rendered.set(m, { instances, out });
    for (const o of out) result.push(o);
  }
  return { messages: result as M[], key, session, result: r };
}
