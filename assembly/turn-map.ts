import { E_BAD_LENGTH, E_BAD_TURN_ID } from "./errors";

/**
 * Block compaction's TurnMap.from_messages over a batch of turn indices (i32 per message, -1 for a
 * message without a turn id). A turn group is a maximal run of consecutive messages with the
 * same non-negative turn index; a message with -1 is a group of its own. Group g covers
 * messages [outStart[g], outEnd[g]) and carries its turn index in outTurn[g]. A turn index that
 * reappears after another group starts a new group: groups follow message order, never merge
 * across a gap. Returns the group count, or a negative E_* code.
 */
export function buildTurnMap(turns: usize, n: i32, outStart: usize, outEnd: usize, outTurn: usize): i32 {
  if (n < 0) return E_BAD_LENGTH;
  let groups = 0;
  let i = 0;
  while (i < n) {
    const t = load<i32>(turns + (<usize>i << 2));
    if (t < -1) return E_BAD_TURN_ID;
    let j = i + 1;
    if (t >= 0) {
      while (j < n && load<i32>(turns + (<usize>j << 2)) == t) j++;
    }
    const at = <usize>groups << 2;
    store<i32>(outStart + at, i);
    store<i32>(outEnd + at, j);
    store<i32>(outTurn + at, t);
    groups++;
    i = j;
  }
  return groups;
}
