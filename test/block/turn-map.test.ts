import { describe, expect, it } from "vitest";
import { getCore } from "../../src/core/core-instance.js";
import { buildTurnMapReference } from "../../src/block/turn-map.reference.js";
import { TurnMap } from "../../src/block/turn-map.js";
import { CtxfoldError } from "../../src/errors.js";
import { createRng } from "../helpers.js";

describe("TurnMap", () => {
  it("groups consecutive messages of one turn; messages without a turn id are their own group", () => {
    const map = TurnMap.fromTurnIndices(Int32Array.from([-1, 0, 0, 0, 1, 1, -1, -1, 2]));
    expect(map.turnCount()).toBe(6);
    expect(map.turnMsgRange(0)).toEqual([0, 1]);
    expect(map.turnMsgRange(1)).toEqual([1, 4]);
    expect(map.turnMsgRange(2)).toEqual([4, 6]);
    expect(map.turnMsgRange(3)).toEqual([6, 7]);
    expect(map.turnMsgRange(4)).toEqual([7, 8]);
    expect(map.turnMsgRange(5)).toEqual([8, 9]);
    expect(map.turnMsgRange(6)).toBeUndefined();
    expect(map.turnMsgRange(-1)).toBeUndefined();
    expect(Array.from(map.turnIds)).toEqual([-1, 0, 1, -1, -1, 2]);
  });

  it("messagesForRange slices an inclusive turn range, clamped", () => {
    const msgs = ["s", "u0", "a0", "u1", "a1", "u2"];
    const map = TurnMap.fromMessages([
      {},
      { turn: { index: 0 } },
      { turn: { index: 0 } },
      { turn: { index: 1 } },
      { turn: { index: 1 } },
      { turn: { index: 2 } },
    ]);
    expect(map.messagesForRange({ startTurn: 1, endTurn: 2 }, msgs)).toEqual(["u0", "a0", "u1", "a1"]);
    expect(map.messagesForRange({ startTurn: 2, endTurn: 99 }, msgs)).toEqual(["u1", "a1", "u2"]);
    expect(map.messagesForRange({ startTurn: 3, endTurn: 1 }, msgs)).toEqual([]);
  });

  it("a turn index that reappears after a gap starts a new group", () => {
    expect(TurnMap.fromTurnIndices(Int32Array.from([0, 1, 0])).turnCount()).toBe(3);
  });

  it("an empty message list has no turns", () => {
    expect(TurnMap.fromTurnIndices(new Int32Array(0)).turnCount()).toBe(0);
  });

  it("rejects a turn index below -1 with a code, in both backends", () => {
    for (const backend of ["wasm", "ts"] as const) {
      let err: unknown;
      try {
        TurnMap.fromTurnIndices(Int32Array.from([0, -2]), backend);
      } catch (e) {
        err = e;
      }
      expect(CtxfoldError.isInstance(err) && err.code).toBe("E_BAD_TURN_ID");
    }
  });

  it("differential: WASM equals the TypeScript twin on 10,000 seeded inputs", () => {
    const r = createRng(5);
    for (let i = 0; i < 10_000; i++) {
      const n = r.int(i % 500 === 0 ? 5000 : 60);
      const turns = new Int32Array(n);
      let t = 0;
      for (let j = 0; j < n; j++) {
        const k = r.next();
        if (k < 0.15) turns[j] = -1;
        else {
          if (k > 0.7) t += 1 + r.int(2);
          turns[j] = t;
        }
      }
      const a = getCore().buildTurnMap(turns);
      const b = buildTurnMapReference(turns);
      if (a.start.join() !== b.start.join() || a.end.join() !== b.end.join() || a.turn.join() !== b.turn.join()) {
        expect.fail(`input ${i}: ${turns.join(",")}`);
      }
    }
  });
});
