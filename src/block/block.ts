import { hashText, hashToHex } from "../core/hash.js";
import { TurnMap } from "./turn-map.js";
import type { CompactedSection, CompactionBlock, Loop, Message, TurnRange } from "../model/schema.js";
import { createMemoryStore, type OffloadStore } from "../store/index.js";
import { TokenCounter } from "../tokens/token-counter.js";
import type { BlockCompactionStrategy, SessionCompactionConfig } from "./config.js";
import { mergeAdjacent } from "../model/adjacent.js";
import { summarizeTurns, summaryMessage, truncateToolOutputs } from "./turns.js";

export type { BlockCompactionStrategy };

/** A content hash of a run of messages (their canonical JSON): what a block's `source` records. */
export function blockSourceHash(messages: readonly Message[]): string {
  return hashToHex(hashText(JSON.stringify(messages)));
}

/** Whether a block still matches its loop: its covered messages hash as they did. */
export function blockMatches(block: CompactionBlock, loop: Loop): boolean {
  if (!block.source) return true;
  if (block.source.messages > loop.messages.length) return false;
  return blockSourceHash(loop.messages.slice(0, block.source.messages)) === block.source.hash;
}

/** System and pinned messages: never summarised away, loaded verbatim in every case. */
export const isKeptVerbatim = (m: Message): boolean => m.role === "system" || m.pinned === true;

/** The turns of a loop; runners tag messages with `turn`, untagged messages are turns of their own. */
export function turnMapOf(record: Loop): TurnMap {
  return TurnMap.fromMessages(record.messages);
}

/** Message index range [start, end) of an inclusive turn range. */
function messageRange(turnMap: TurnMap, range: TurnRange): [number, number] {
  return [turnMap.turnMsgRange(range.startTurn)![0], turnMap.turnMsgRange(range.endTurn)![1]];
}

/** Call ids answered by results in messages[a, b), and call ids made there. */
function pairs(messages: readonly Message[], a: number, b: number): { calls: Set<string>; results: Set<string> } {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (let i = a; i < b; i++) {
    for (const p of messages[i].parts) {
      if (p.type === "tool-call") calls.add(p.id);
      else if (p.type === "tool-result") results.add(p.callId);
    }
  }
  return { calls, results };
}

/** Whether every call in [a, b) is answered there and every result answers a call there. */
function closed(messages: readonly Message[], a: number, b: number): boolean {
  const { calls, results } = pairs(messages, a, b);
  for (const c of calls) if (!results.has(c)) return false;
  for (const r of results) if (!calls.has(r)) return false;
  return true;
}

export interface DefaultBlockCompactionOptions {
  /** Where cut tool outputs go (each cut names its ref). @default an in-memory store */
  store?: OffloadStore;
  /** Estimates for the summary budget. @default a new TokenCounter (o200k_base) */
  counter?: TokenCounter;
  /** The clock for createdAt. @default () => new Date() */
  now?: () => Date;
}

/**
 * Block compaction's DefaultBlockCompaction, stateless apart from where cut outputs are stored; every
 * parameter comes from SessionCompactionConfig.
 *
 * - keep_first: turns 0..keepFirstTurns−1, extended forward until no tool call in it waits
 *   for a result outside it.
 * - keep_recent: the last keepRecent turns after keep_first, extended back to a turn
 *   boundary where no result in it answers a call before it ("extended to turn boundary"),
 *   with tool outputs cut to toolOutputMaxLines lines; every cut output is stored whole and
 *   the cut names its ref.
 * - keep_compacted: one user message of per-turn one-line summaries ("Turn 3: user: …;
 *   bash: exit 0, 12 lines output") within maxSummaryTokens; turns past the budget are dropped
 *   with a count, as the design's basic strategy does (an LLM strategy can do better). System
 *   and pinned messages are not summarised: loading keeps them verbatim.
 */
export class DefaultBlockCompaction implements BlockCompactionStrategy {
  readonly store: OffloadStore;
  readonly #counter: TokenCounter;
  readonly #now: () => Date;

  constructor(options: DefaultBlockCompactionOptions = {}) {
    this.store = options.store ?? createMemoryStore();
    this.#counter = options.counter ?? new TokenCounter();
    this.#now = options.now ?? (() => new Date());
  }

  keepFirst(record: Loop, turnMap: TurnMap, config: SessionCompactionConfig): TurnRange | undefined {
    const count = turnMap.turnCount();
    if (config.keepFirstTurns === 0 || count === 0) return undefined;
    let end = Math.min(config.keepFirstTurns, count) - 1;
    while (end < count - 1 && !closed(record.messages, 0, turnMap.turnMsgRange(end)![1])) end++;
    return { startTurn: 0, endTurn: end };
  }

  keepRecent(record: Loop, turnMap: TurnMap, config: SessionCompactionConfig): CompactedSection | undefined {
    const count = turnMap.turnCount();
    const first = this.keepFirst(record, turnMap, config);
    const floor = first ? first.endTurn + 1 : 0;
    if (config.keepRecent === 0 || floor >= count) return undefined;
    let start = Math.max(floor, count - config.keepRecent);
    const end = turnMap.turnMsgRange(count - 1)![1];
    while (start > floor && !closed(record.messages, turnMap.turnMsgRange(start)![0], end)) start--;
    const range = { startTurn: start, endTurn: count - 1 };
    const [a, b] = messageRange(turnMap, range);
    const { messages } = truncateToolOutputs(record.messages.slice(a, b), config.toolOutputMaxLines, this.store);
    return { range, messages };
  }

  keepCompacted(record: Loop, turnMap: TurnMap, config: SessionCompactionConfig, isMostRecent: boolean): CompactedSection | undefined {
    const count = turnMap.turnCount();
    let startTurn = 0;
    let endTurn = count - 1;
    if (isMostRecent) {
      const first = this.keepFirst(record, turnMap, config);
      const recent = this.keepRecent(record, turnMap, config);
      startTurn = first ? first.endTurn + 1 : 0;
      endTurn = recent ? recent.range.startTurn - 1 : count - 1;
    }
    if (endTurn < startTurn) return undefined;
    const turns: { label: string; messages: Message[] }[] = [];
    for (let t = startTurn; t <= endTurn; t++) {
      const [a, b] = turnMap.turnMsgRange(t)!;
      const messages = record.messages.slice(a, b).filter((m) => !isKeptVerbatim(m));
      if (messages.length > 0) turns.push({ label: `Turn ${t}`, messages });
    }
    const range = { startTurn, endTurn };
    if (turns.length === 0) return { range, messages: [] };
    const { lines } = summarizeTurns(turns, config.maxSummaryTokens, (text) => this.#counter.estimate(text));
    const header = `[Summary of turns ${startTurn}–${endTurn} of loop ${String(record.id)}; the original messages are kept in the session]`;
    const id = `ctxfold-summary-${String(record.id)}-${startTurn}-${endTurn}-${blockSourceHash(record.messages.slice(...messageRange(turnMap, range))).slice(0, 8)}`;
    return { range, messages: [summaryMessage(lines, header, id)] };
  }

  compact(record: Loop, config: SessionCompactionConfig, isMostRecent: boolean): CompactionBlock {
    const turnMap = turnMapOf(record);
    const block: CompactionBlock = {
      createdAt: this.#now().toISOString(),
      source: { messages: record.messages.length, hash: blockSourceHash(record.messages) },
    };
    const keepCompacted = this.keepCompacted(record, turnMap, config, isMostRecent);
    if (isMostRecent) {
      const keepFirst = this.keepFirst(record, turnMap, config);
      const keepRecent = this.keepRecent(record, turnMap, config);
      if (keepFirst) block.keepFirst = keepFirst;
      if (keepRecent) block.keepRecent = keepRecent;
    }
    if (keepCompacted) block.keepCompacted = keepCompacted;
    return block;
  }
}

/**
 * Block compaction's loading logic for one loop: with no block (or a stale one, see blockMatches) the
 * raw messages; for the most recent loop keep_first's original messages + keep_compacted's
 * summaries + keep_recent's truncated messages; for an older loop keep_compacted only. System
 * and pinned messages of the covered range are always loaded verbatim where they stood (before
 * the summaries), and messages appended after the block was made follow it raw.
 */
export function loadLoop(loop: Loop, isMostRecent: boolean): { messages: Message[]; stale: boolean } {
  const block = loop.compaction;
  if (!block) return { messages: [...loop.messages], stale: false };
  if (!blockMatches(block, loop)) return { messages: [...loop.messages], stale: true };
  const covered = block.source?.messages ?? loop.messages.length;
  const turnMap = TurnMap.fromMessages(loop.messages.slice(0, covered));
  // A block built while its loop was the most recent one summarises only the middle: loaded as
  // an older loop it would lose the first and recent turns, so it loads whole until the
  // orchestrator rebuilds it as an older loop's block.
  const full = isMostRecent || block.keepFirst !== undefined || block.keepRecent !== undefined;
  let firstEnd = 0;
  if (full && block.keepFirst) firstEnd = messageRange(turnMap, block.keepFirst)[1];
  const recentStart = full && block.keepRecent ? messageRange(turnMap, block.keepRecent.range)[0] : covered;
  const pieces = [
    loop.messages.slice(0, firstEnd),
    loop.messages.slice(firstEnd, recentStart).filter(isKeptVerbatim),
    block.keepCompacted?.messages ?? [],
    full && block.keepRecent ? block.keepRecent.messages : [],
    loop.messages.slice(covered),
  ];
  return { messages: joinPieces(pieces), stale: false };
}

/**
 * Joins loaded pieces, merging user+user and assistant+assistant where two pieces meet (an
 * overlay's summary beside an original user turn), so role alternation holds wherever it held
 * before. The earlier message keeps its id and gains the later one's parts.
 */
export function joinPieces(pieces: readonly (readonly Message[])[]): Message[] {
  const gapBefore: boolean[] = [];
  for (const piece of pieces) piece.forEach((_, j) => gapBefore.push(j === 0));
  return mergeAdjacent(pieces.flat(), gapBefore);
}
