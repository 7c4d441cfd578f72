import { describe, expect, it } from "vitest";
import { getCore } from "../../src/core/core-instance.js";
import { createDebugCore } from "../../src/core/debug-core.js";
import { WEIGHT_TABLE } from "../../src/tokens/weights-table.js";
import { createRng, randomTricky } from "../helpers.js";

describe("debug build through @assemblyscript/loader", () => {
  const debug = createDebugCore();

  it("agrees with the release build on hashes, features and turn maps", () => {
    const r = createRng(31);
    const texts = Array.from({ length: 500 }, (_, i) => randomTricky(r, i % 50 === 0 ? 4000 : 150));
    expect(debug.hashStrings(texts)).toEqual(getCore().hashStrings(texts));
    expect(debug.featureCounts(texts)).toEqual(getCore().featureCounts(texts));
    expect(debug.estimateStrings(texts, WEIGHT_TABLE)).toEqual(getCore().estimateStrings(texts, WEIGHT_TABLE));
    const turns = Int32Array.from([0, 0, -1, 1, 1, 1, 2]);
    expect(debug.buildTurnMap(turns)).toEqual(getCore().buildTurnMap(turns));
  });

  it("reports a failed kernel assert with its message and source position", () => {
    let err: unknown;
    try {
      debug.run("probe", (e) => e.hashBatch(3, 0, 0, 0n, 0)); // misaligned data: asserted in debug builds
    } catch (e) {
      err = e;
    }
    expect(String((err as Error).cause)).toMatch(/abort: hashBatch: data and out must be 8-byte aligned at assembly\/hash\.ts:\d+:\d+/);
  });
});
