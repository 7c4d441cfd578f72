import { CtxfoldError } from "../errors.js";
import type { Loop, Message, Session } from "../model/schema.js";
import { defaultTokenCounter, type TokenCounter } from "../tokens/token-counter.js";
import { DefaultBlockCompaction, joinPieces, loadLoop, type BlockCompactionStrategy } from "./block.js";
import { DefaultCompaction } from "./legacy.js";
import { resolveSessionConfig, type SessionCompactionInput, type CompactionInfo, type CompactionScope } from "./config.js";
import { compactionBlockStale, compactionEnded, compactionStarted, type EventSink } from "./events.js";
import { estimateMessages } from "./tracker.js";

export interface OrchestrationOptions {
  /** Estimates for scopes and events. @default a shared TokenCounter (o200k_base) */
  counter?: TokenCounter;
  /** Receives compaction_started / compaction_ended / compaction_block_stale events. @default none */
  onEvent?: EventSink;
  /** The clock for event timestamps. @default () => new Date() */
  now?: () => Date;
}

const counterOf = (o: OrchestrationOptions) => (o.counter ??= defaultTokenCounter());

// Scopes and events count as the ContextTracker does: its estimate, re-exported for callers of this module.
export { estimateMessages };

/** The loops of the active chain: the session's loops up to and including the current one. */
export function activeChain(session: Session, currentLoopId: string | number): Loop[] {
  const at = session.loops.findIndex((l) => l.id === currentLoopId);
  if (at < 0)
    throw new CtxfoldError("E_BAD_INPUT", `no loop ${JSON.stringify(currentLoopId)} in session ${JSON.stringify(session.id)}`, { path: "currentLoopId" });
  return session.loops.slice(0, at + 1);
}

/**
 * Block compaction's resolve_scope: how many loops before the current one compaction and loading take
 * in. FixedCount(n): n, at most the loops there are. TokenBudget: walk back from the loop before
 * the current one adding each loop's raw estimate, and take a loop while the total before it is
 * still under maxContextTokens — so the loop that crosses the budget is taken, even one whose
 * raw messages alone exceed it (block compaction's design: its summaries fit even when its originals do not).
 */
export function resolveScope(
  _session: Session,
  chain: readonly Loop[],
  scope: CompactionScope,
  maxContextTokens: number,
  options: OrchestrationOptions = {},
): number {
  const earlier = chain.length - 1;
  if (scope.kind === "fixed-count") return Math.min(scope.count, Math.max(0, earlier));
  const counter = counterOf(options);
  let total = 0;
  let n = 0;
  for (let i = earlier - 1; i >= 0 && total < maxContextTokens; i--) {
    total += estimateMessages(chain[i].messages, counter);
    n++;
  }
  return n;
}

/**
 * Block compaction's build_context_from_session: walks the active chain — the current loop and the
 * earlier loops its scope takes in — and loads each from its CompactionBlock where it has a
 * valid one (loadLoop), raw messages otherwise. A block that no longer matches its loop is
 * skipped with a compaction_block_stale event. The system messages of the chain's first loop
 * are always loaded, even when that loop is out of scope: the agent's instructions never drop
 * out of context. Where two loaded pieces put same-role messages side by side they are merged.
 */
export function buildContextFromSession(
  session: Session,
  currentLoopId: string | number,
  config: SessionCompactionInput = {},
  maxContextTokens = Infinity,
  options: OrchestrationOptions = {},
): Message[] {
  const cfg = resolveSessionConfig(config);
  const chain = activeChain(session, currentLoopId);
  const n = resolveScope(session, chain, cfg.compactionScope, maxContextTokens, options);
  const first = chain.length - 1 - n;
  const now = options.now ?? (() => new Date());
  const pieces: Message[][] = [];
  if (first > 0) pieces.push(chain[0].messages.filter((m) => m.role === "system"));
  for (let i = first; i < chain.length; i++) {
    const { messages, stale } = loadLoop(chain[i], i === chain.length - 1);
    if (stale)
      options.onEvent?.(
        compactionBlockStale(
          { sessionId: session.id, loopId: chain[i].id, reason: "the loop's messages changed after its block was made (source hash differs)" },
          now(),
        ),
      );
    pieces.push(messages);
  }
  return joinPieces(pieces.filter((p) => p.length > 0));
}

/**
 * Block compaction's compact_session_loops: a new block for the current loop (all three sections) and
 * for each earlier loop in scope (keep_compacted only), made by `strategy` (the config's
 * blockStrategy, else DefaultBlockCompaction). Returns a new Session; the loops' original
 * messages are the same objects, never modified. Fires beforeCompactionStart and
 * afterCompactionEnd and emits compaction_started / compaction_ended with the estimated tokens
 * of the built context before and after.
 */
export function compactSessionLoops(
  session: Session,
  currentLoopId: string | number,
  strategy: BlockCompactionStrategy | undefined,
  config: SessionCompactionInput = {},
  maxContextTokens = Infinity,
  options: OrchestrationOptions = {},
): Session {
  const cfg = resolveSessionConfig(config);
  const block = strategy ?? cfg.blockStrategy ?? new DefaultBlockCompaction({ counter: counterOf(options) });
  const chain = activeChain(session, currentLoopId);
  const n = resolveScope(session, chain, cfg.compactionScope, maxContextTokens, options);
  const now = options.now ?? (() => new Date());
  const counter = counterOf(options);
  const targets = chain.slice(chain.length - 1 - n).reverse();
  const info: CompactionInfo = {
    sessionId: session.id,
    loopId: currentLoopId,
    loopIds: targets.map((l) => l.id),
    maxContextTokens,
    tokensBefore: estimateMessages(buildContextFromSession(session, currentLoopId, cfg, maxContextTokens, { ...options, onEvent: undefined }), counter),
  };
  const started = Date.now();
  cfg.beforeCompactionStart?.(info);
  options.onEvent?.(compactionStarted(info, now()));
  const blocks = new Map(targets.map((l, i) => [l.id, block.compact(l, cfg, i === 0)]));
  const next: Session = { ...session, loops: session.loops.map((l) => (blocks.has(l.id) ? { ...l, compaction: blocks.get(l.id) } : l)) };
  const tokensAfter = estimateMessages(buildContextFromSession(next, currentLoopId, cfg, maxContextTokens, options), counter);
  cfg.afterCompactionEnd?.({ ...info, tokensAfter });
  options.onEvent?.(compactionEnded({ ...info, tokensAfter }, Date.now() - started, now()));
  return next;
}

/** What compactContext works on: a session (the block path) or bare messages (the legacy path). */
export type CompactionTarget =
  | { session: Session; currentLoopId: string | number; messages?: undefined }
  | { messages: readonly Message[]; session?: undefined };

export interface CompactContextResult {
  /** The context to send. */
  messages: Message[];
  /** The session with its new overlays (block path only); store it to survive a restart. */
  session?: Session;
  path: "block" | "in-memory";
}

/**
 * Block compaction's "legacy vs modern": with a session, block compaction (compactSessionLoops, then
 * buildContextFromSession from the overlays); without one, the in-memory strategy (the config's
 * inMemoryStrategy, else DefaultCompaction) rewrites the messages. The callbacks and the
 * compaction_started / compaction_ended events fire on both paths.
 */
export function compactContext(
  target: CompactionTarget,
  config: SessionCompactionInput = {},
  maxContextTokens = Infinity,
  options: OrchestrationOptions = {},
): CompactContextResult {
  const cfg = resolveSessionConfig(config);
  if (target.session) {
    const session = compactSessionLoops(target.session, target.currentLoopId, undefined, cfg, maxContextTokens, options);
    return { session, messages: buildContextFromSession(session, target.currentLoopId, cfg, maxContextTokens, options), path: "block" };
  }
  const counter = counterOf(options);
  const now = options.now ?? (() => new Date());
  const strategy = cfg.inMemoryStrategy ?? new DefaultCompaction({ counter });
  const info: CompactionInfo = { loopIds: [], maxContextTokens, tokensBefore: estimateMessages(target.messages, counter) };
  const started = Date.now();
  cfg.beforeCompactionStart?.(info);
  options.onEvent?.(compactionStarted(info, now()));
  const messages = strategy.compact(target.messages, cfg, maxContextTokens);
  const tokensAfter = estimateMessages(messages, counter);
  cfg.afterCompactionEnd?.({ ...info, tokensAfter });
  options.onEvent?.(compactionEnded({ ...info, tokensAfter }, Date.now() - started, now()));
  return { messages, path: "in-memory" };
}
