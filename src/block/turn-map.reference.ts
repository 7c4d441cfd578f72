import { CtxfoldError } from "../errors.js";

/** Twin of assembly/turn-map.ts: same groups, same error for a turn index below -1. */
export function buildTurnMapReference(turns: Int32Array): { start: Int32Array; end: Int32Array; turn: Int32Array } {
  const n = turns.length;
  const start: number[] = [];
  const end: number[] = [];
  const turn: number[] = [];
  let i = 0;
  while (i < n) {
    const t = turns[i];
    if (t < -1) throw new CtxfoldError("E_BAD_TURN_ID", `turn index ${t} below -1 (use -1 for a message without a turn id)`, { path: `turns[${i}]` });
    let j = i + 1;
    if (t >= 0) while (j < n && turns[j] === t) j++;
    start.push(i);
    end.push(j);
    turn.push(t);
    i = j;
  }
  return { start: Int32Array.from(start), end: Int32Array.from(end), turn: Int32Array.from(turn) };
}
