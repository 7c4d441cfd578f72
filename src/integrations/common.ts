/**
 * What every integration shares: the options, the budget a call compacts to, and the
 * compactor sessions kept per conversation so epochs (and provider prompt caches) work across
 * the calls of an agent loop.
 *
 * Budget: budget.ts's budgetOf — `budget` when given; else the model's context window (its
 * profile's, tokens/models.ts, or `contextWindow`) minus `reserveTokens`, in ctxfold's measure,
 * corrected by the input tokens the provider reports for the conversation (its UsageFeedback,
 * kept with its session here).
 *
 * Sessions: one CompactorSession per conversation, found by the caller's id when given, else by
 * the conversation's stable prefix (its system messages and first user message: what stays the
 * same across the calls of one agent run). At most `maxSessions` are kept (least recently used
 * go first), and at most `maxSessionTokens` of their last calls' inputs (what a session and its
 * wire cache hold on to; least recently used go first, the latest call's own conversation never);
 * a forgotten conversation only loses its epoch (its next call compacts afresh) and, in the pool's
 * own store, its originals.
 *
 * Store: the options' `store` when given (the caller's, to read originals from and to bound);
 * else the pool's own, in memory and bounded by `maxStoreBytes` (pool-store.ts).
 * Each session keeps a wire cache (adapters/wire-cache.ts), so a call parses and renders only its new
 * messages, and the prefix key is computed from the conversation's first messages alone.
 */
import { createHash } from "node:crypto";
import { badValueError } from "../errors.js";
import type { Message } from "../model/schema.js";
import { createCompactor, type Compactor, type CompactorConfig } from "../policy/index.js";
import { UsageFeedback, type IntegrationOptions, type UsageEvent } from "./budget.js";
import type { CompactorSession } from "../policy/session.js";
import type { CanonicalResult, CompactCallOptions } from "../policy/types.js";
import { ConversationStore } from "./pool-store.js";
import { kAdapters, type Format } from "../adapters/index.js";
import { WireCache, type WireCheck } from "../adapters/wire-cache.js";
import { sameWire } from "../adapters/wire-equal.js";
import { parsePrefix, wireHead, wireMessages } from "../adapters/wire-formats.js";

export { budgetOf, refuseOverBudget } from "./budget.js";
export type { BudgetOutcome, IntegrationOptions, UsageEvent } from "./budget.js";

/**
 * The key of a conversation by its stable prefix: its system messages and its first user
 * message, their parts without `meta` — provider options such as cache breakpoints or a
 * framework's timestamps change between calls of one conversation, its text does not.
 */
export function conversationKey(messages: readonly Message[]): string {
  const h = createHash("sha256");
  for (const m of messages) {
    if (m.role !== "system" && m.role !== "user") continue;
    h.update(m.role)
      .update("\0")
      .update(JSON.stringify(m.parts.map(({ meta, ...p }) => (void meta, p))))
      .update("\0");
    if (m.role === "user") break;
  }
  return h.digest("base64url");
}

/**
 * conversationKey of the messages `input` parses to, computed from a bounded prefix of its wire
 * messages: the first ones up to one holding a user message (a slice doubled until it does).
 * `check` sees each wire range before it is parsed. The keys of recent prefixes are kept
 * (kKeyMemo): a call whose first messages are those of a recent call (the same objects, or equal
 * ones parsed afresh) takes its key without parsing or hashing anything.
 */
export function prefixKey(format: Format, input: unknown, check?: WireCheck): string {
  const wire = wireMessages(format, input);
  if (!wire) return conversationKey(kAdapters[format].parse(input));
  const head = wireHead(format, input);
  const hit = recentKeys.find((e) => e.format === format && e.prefix.length <= wire.length && sameWire(e.head, head) && samePrefix(e.prefix, wire));
  if (hit) {
    recentKeys.splice(recentKeys.indexOf(hit), 1);
    recentKeys.unshift(hit);
    return hit.key;
  }
  for (let from = 0, to = Math.min(wire.length, 4); ; from = to, to = Math.min(wire.length, to * 2)) {
    check?.(from, to);
    const messages = parsePrefix(format, input, wire, to);
    const user = messages.some((m) => m.role === "user");
    if (!user && to < wire.length) continue;
    const key = conversationKey(messages);
    // Only a prefix that holds its user message decides the key of longer lists too.
    if (user) {
      recentKeys.unshift({ format, head, prefix: wire.slice(0, to), key });
      recentKeys.length = Math.min(recentKeys.length, kKeyMemo);
    }
    return key;
  }
}

/** Whether `wire` starts with `prefix`, compared last message first (where conversations sharing a system prompt differ). */
function samePrefix(prefix: readonly unknown[], wire: readonly unknown[]): boolean {
  for (let j = prefix.length - 1; j >= 0; j--) if (!sameWire(wire[j], prefix[j])) return false;
  return true;
}

/** Prefixes whose keys are kept, most recent first (a few per live conversation of a busy process). */
const kKeyMemo = 64;
const recentKeys: { format: Format; head: unknown[]; prefix: unknown[]; key: string }[] = [];

/**
 * Options the integrations read themselves (budget, conversation keys, callbacks, the pool's
 * size): never the compactor's, whose config rejects unknown keys.
 */
const kIntegrationKeys: ReadonlySet<string> = new Set([
  "budget",
  "contextWindow",
  "reserveTokens",
  "maxSessions",
  "maxSessionTokens",
  "maxStoreBytes",
  "model",
  "conversationId",
  "cacheBreakpoint",
  "onCompact",
  "modelProfile",
  "usageFeedback",
  "onUsage",
  "onOverBudget",
]);

/** A conversation's session, the wire cache of its calls, and its usage feedback. */
interface Conversation {
  session: CompactorSession;
  wire?: WireCache;
  usage?: UsageFeedback;
  /** The tokens of its last call's input (what its session and wire cache hold on to). */
  tokens?: number;
}

/** The default of IntegrationOptions.maxSessionTokens: 32M tokens, ~128 MB of message text. */
export const kDefaultMaxSessionTokens = 32_000_000;

/** One compactor and its sessions, per conversation (see the module comment). */
export class SessionPool {
  readonly compactor: Compactor;
  readonly #conversations = new Map<string, Conversation>();
  readonly #max: number;
  readonly #maxTokens: number;
  /** The tokens of the conversations held (their last calls' inputs). */
  #tokens = 0;
  /** The pool's own store when the options name none (bounded: pool-store.ts). */
  readonly #store: ConversationStore | undefined;

  /** `options` may hold any integration's own options too (kIntegrationKeys): only the rest configures the compactor. */
  constructor(options: IntegrationOptions = {}) {
    const config = Object.fromEntries(Object.entries(options).filter(([k]) => !kIntegrationKeys.has(k))) as CompactorConfig;
    if (config.store === undefined) {
      const max = options.maxStoreBytes;
      if (max !== undefined && (typeof max !== "number" || !Number.isSafeInteger(max) || max < 0))
        throw badValueError("maxStoreBytes", "a non-negative integer (bytes)", max);
      config.store = this.#store = new ConversationStore(max);
    }
    this.compactor = createCompactor(config);
    // The exact counter's table and the code's first runs happen now, between the caller's turns, not inside its first call.
    void this.compactor.warmup();
    this.#max = options.maxSessions ?? 1000;
    const maxTokens = options.maxSessionTokens;
    if (maxTokens !== undefined && (typeof maxTokens !== "number" || !Number.isSafeInteger(maxTokens) || maxTokens < 0))
      throw badValueError("maxSessionTokens", "a non-negative integer (tokens)", maxTokens);
    this.#maxTokens = maxTokens ?? kDefaultMaxSessionTokens;
  }

  /** Tokens of the conversations the pool holds (their last calls' inputs): at most `maxSessionTokens`, the latest call's aside. */
  get sessionTokens(): number {
    return this.#tokens;
  }

  /** Bytes of originals the pool's own store holds (at most `maxStoreBytes`); undefined with a caller's store. */
  get storeBytes(): number | undefined {
    return this.#store?.bytes;
  }

  /**
   * Compacts conversation `key`'s messages in its `session`, the originals it removes kept as
   * that conversation's (the pool's own store, see pool-store.ts). Every integration compacts
   * through here.
   */
  async compact(key: string, session: CompactorSession, messages: readonly Message[], options: CompactCallOptions): Promise<CanonicalResult> {
    const run = () => session.compactCanonical(messages, options);
    const r = await (this.#store ? this.#store.run(key, run) : run());
    this.#hold(key, r.tokensBefore);
    return r;
  }

  /** Notes what conversation `key` holds, then forgets the least recently used others past `maxSessionTokens`. */
  #hold(key: string, tokens: number): void {
    const c = this.#conversations.get(key);
    if (!c) return;
    this.#tokens += tokens - (c.tokens ?? 0);
    c.tokens = tokens;
    for (const other of this.#conversations.keys()) {
      if (this.#tokens <= this.#maxTokens) return;
      if (other !== key) this.#forget(other);
    }
  }

  /** Drops conversation `key`: its session, wire cache, usage feedback and, in the pool's own store, its originals. */
  #forget(key: string): void {
    const c = this.#conversations.get(key);
    if (!c) return;
    this.#conversations.delete(key);
    this.#tokens -= c.tokens ?? 0;
    this.#store?.drop(key);
  }

  /**
   * The wire cache of conversation `key` in `format` (rendering through `finish`): the one kept
   * with its session, else a new one that `session(key, cache)` then keeps. Looking it up does
   * not make a session (a call whose input fails to parse leaves the pool as it was).
   * @internal
   */
  wireCache(key: string, format: Format, finish?: (wire: unknown) => unknown): WireCache {
    const w = this.#conversations.get(key)?.wire;
    return w && w.format === format && w.finish === finish ? w : new WireCache(format, finish);
  }

  /** @internal The session of conversation `key`, made on first use (keeping `wire` as its wire cache when given); the most recently used go last. */
  session(key: string, wire?: WireCache): CompactorSession {
    let c = this.#conversations.get(key);
    if (c) this.#conversations.delete(key);
    else c = { session: this.compactor.session() };
    if (wire) c.wire = wire;
    this.#conversations.set(key, c);
    while (this.#conversations.size > this.#max) this.#forget(this.#conversations.keys().next().value!);
    return c.session;
  }

  get size(): number {
    return this.#conversations.size;
  }

  /**
   * The observed ratio of reported to estimated input tokens for conversation `key` and
   * `modelId` (budgetOf's `usageRatio`); undefined before the first report, or for a
   * conversation the pool does not hold.
   */
  usageRatio(key: string, modelId: string | undefined): number | undefined {
    return this.#conversations.get(key)?.usage?.ratio(modelId);
  }

  /**
   * Notes what conversation `key`'s call sent: its model and ctxfold's estimate of its tokens
   * (with `tag`, what the caller matches the report to). A later report (recordUsage) applies
   * to it. For a conversation the pool does not hold, nothing.
   */
  noteSent(key: string, modelId: string | undefined, estimate: number, tag?: unknown): void {
    const c = this.#conversations.get(key);
    if (c) (c.usage ??= new UsageFeedback()).noteSent(modelId, estimate, tag);
  }

  /** The tag noted with conversation `key`'s last call (noteSent). */
  sentTag(key: string): unknown {
    return this.#conversations.get(key)?.usage?.sentTag;
  }

  /**
   * Folds the provider's usage report for conversation `key`'s last call into its ratio, and
   * reports what it did to `options.onUsage`. `usage` is any provider's usage (or a bare
   * count: inputTokensOf); `modelId`, when given, names the model the call went to. The entry
   * point of every integration's feedback (budget.ts). Never throws (a failing onUsage aside);
   * undefined when `options.usageFeedback` is false.
   */
  recordUsage(key: string, usage: unknown, options: IntegrationOptions = {}, modelId?: string): UsageEvent | undefined {
    if (options.usageFeedback === false) return undefined;
    const c = this.#conversations.get(key);
    const event = (c ? (c.usage ??= new UsageFeedback()) : new UsageFeedback()).record(key, usage, modelId, options);
    options.onUsage?.(event);
    return event;
  }
}

let sharedPool: SessionPool | undefined;
const pools = new WeakMap<object, SessionPool>();

/**
 * The SessionPool for calls made with `options`: one module-wide pool when the options configure
 * neither the compactor nor the pool (only the integrations' own keys, maxSessions aside), so
 * options written inline on every call still keep their epochs; else one per options object
 * (which the caller must then reuse across calls).
 */
export function sessionPoolFor(options: IntegrationOptions): SessionPool {
  const own = Object.entries(options).some(
    ([k, v]) => v !== undefined && (k === "maxSessions" || k === "maxSessionTokens" || k === "maxStoreBytes" || !kIntegrationKeys.has(k)),
  );
  if (!own) return (sharedPool ??= new SessionPool());
  let pool = pools.get(options);
  if (!pool) pools.set(options, (pool = new SessionPool(options)));
  return pool;
}

/**
 * One call's conversation in `format` (its own scope), found by the caller's id, else by its
 * stable prefix: its key in the pool, its session, its wire cache, and the call's canonical messages parsed through
 * that cache (only what the previous call did not have). An input that does not parse fails
 * before any session is made or touched, and before a bad `conversationId` is reported.
 */
export function openConversation(
  pool: SessionPool,
  format: Format,
  input: unknown,
  conversationId: string | undefined,
): { key: string; session: CompactorSession; cache: WireCache; messages: Message[] } {
  if (conversationId !== undefined && (typeof conversationId !== "string" || conversationId === "")) {
    kAdapters[format].parse(input);
    throw badValueError("conversationId", "a non-empty string", conversationId);
  }
  const key = `${format}\0${conversationId ?? prefixKey(format, input)}`;
  const cache = pool.wireCache(key, format);
  const messages = cache.parse(input);
  return { key, session: pool.session(key, cache), cache, messages };
}
