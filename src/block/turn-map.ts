import { coreFor, type Backend } from "../core/backend.js";
import type { TurnRange } from "../model/schema.js";
import { buildTurnMapReference } from "./turn-map.reference.js";

export type { TurnRange };

/**
 * Block compaction's TurnMap: turn ordinals (0 .. turnCount - 1, in message order) to message
 * index ranges. A turn is a maximal run of consecutive messages with the same turn index; a
 * message without a turn id (-1) is a turn of its own. Built by the WASM kernel by default.
 */
export class TurnMap {
  private constructor(
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
    /** The turn index each group came from (-1 for a message without a turn id). */
    readonly turnIds: Int32Array,
  ) {}

  /** from_messages over each message's turn index (-1 where it has none). */
  static fromTurnIndices(turns: Int32Array, backend: Backend | "auto" = "auto"): TurnMap {
    const core = coreFor(backend);
    const r = core ? core.buildTurnMap(turns) : buildTurnMapReference(turns);
    return new TurnMap(r.start, r.end, r.turn);
  }

  /** from_messages: messages carry `turn?: { index }`; those without one are their own group. */
  static fromMessages(messages: readonly { turn?: { index: number } | null }[], backend: Backend | "auto" = "auto"): TurnMap {
    const turns = new Int32Array(messages.length);
    for (let i = 0; i < messages.length; i++) turns[i] = messages[i].turn?.index ?? -1;
    return TurnMap.fromTurnIndices(turns, backend);
  }

  turnCount(): number {
    return this.starts.length;
  }

  /** Message index range [start, end) of one turn, or undefined past the end. */
  turnMsgRange(turn: number): [number, number] | undefined {
    if (!Number.isInteger(turn) || turn < 0 || turn >= this.starts.length) return undefined;
    return [this.starts[turn], this.ends[turn]];
  }

  /** The messages of an inclusive turn range, clamped to the turns that exist. */
  messagesForRange<T>(range: TurnRange, all: readonly T[]): T[] {
    const first = Math.max(0, range.startTurn);
    const last = Math.min(this.starts.length - 1, range.endTurn);
    if (last < first) return [];
    return all.slice(this.starts[first], this.ends[last]);
  }
}
