import { describe, expect, it } from "vitest";
import { CoreInstance, kEstimateRows } from "../../src/core/core-instance.js";
import { CtxfoldError } from "../../src/errors.js";
import { createRng, randomTricky } from "../helpers.js";

/** A table whose row k weighs feature f by `weight(k, f)`. */
function tableOf(core: CoreInstance, weight: (row: number, feature: number) => number): Float64Array {
  const n = core.featureCount;
  const t = new Float64Array(kEstimateRows * n);
  for (let k = 0; k < kEstimateRows; k++) for (let f = 0; f < n; f++) t[k * n + f] = weight(k, f);
  return t;
}

/** What the kernel must give with `table`: the dot products of the feature counts with its rows. */
function expected(core: CoreInstance, texts: string[], table: Float64Array): Float64Array {
  const n = core.featureCount;
  const counts = core.featureCounts(texts);
  const out = new Float64Array(texts.length * kEstimateRows);
  for (let i = 0; i < texts.length; i++) {
    for (let k = 0; k < kEstimateRows; k++) {
      let sum = 0;
      for (let f = 0; f < n; f++) sum += counts[i * n + f] * table[k * n + f];
      out[i * kEstimateRows + k] = sum;
    }
  }
  return out;
}

function texts(seed: number): string[] {
  const r = createRng(seed);
  return Array.from({ length: 300 }, (_, i) => randomTricky(r, i % 60 === 0 ? 5000 : 120));
}

describe("the estimator's weight table, handed to the host by its caller", () => {
  it("estimates with the rows of the table it is given, switching when another table comes", () => {
    const core = new CoreInstance();
    const ones = tableOf(core, (k) => k + 1);
    const ramp = tableOf(core, (k, f) => (k === 0 ? f : 0.5));
    const t = texts(3);
    expect(core.estimateStrings(t, ones)).toEqual(expected(core, t, ones));
    expect(core.estimateStrings(t, ramp)).toEqual(expected(core, t, ramp));
    expect(core.estimateStrings(t, ones)).toEqual(expected(core, t, ones));
    const m = core.measureStrings(t, ramp);
    expect(m.estimates).toEqual(expected(core, t, ramp));
    expect(m.hashes).toEqual(core.hashStrings(t));
  });

  it("copies the table once per table object: later calls with the same object reuse the copy", () => {
    const core = new CoreInstance();
    const table = tableOf(core, () => 1);
    const t = ["some text 123", "更多的文字"];
    const first = core.estimateStrings(t, table);
    table.fill(7); // changing a table in place after handing it over is not seen (documented)
    expect(core.estimateStrings(t, table)).toEqual(first);
    expect(core.estimateStrings(t, Float64Array.from(table))).toEqual(expected(core, t, table));
  });

  it("copies the table again into a fresh instance after a trap, and after memory was given back", () => {
    const core = new CoreInstance();
    const table = tableOf(core, (k, f) => (f % 3) + k);
    const t = texts(5);
    const want = expected(core, t, table);
    expect(core.estimateStrings(t, table)).toEqual(want);
    expect(() => core.run("probe", (e) => Number(e.hashBytes(0xffff_fff0, 64, 0n)))).toThrowError(/E_WASM_TRAP|trapped/);
    expect(core.estimateStrings(t, table)).toEqual(want);
    expect(core.instantiations).toBe(2);
    core.hashStrings(["ab".repeat(50_000_000)]); // grows memory past the retention limit
    expect(core.estimateStrings(t, table)).toEqual(want);
    expect(core.instantiations).toBe(3);
  });

  it("lays batches out above the table, also when the table comes after other calls", () => {
    const core = new CoreInstance();
    const t = texts(9);
    const before = core.hashStrings(t);
    const table = tableOf(core, (k, f) => f + k);
    expect(core.estimateStrings(t, table)).toEqual(expected(core, t, table));
    expect(core.hashStrings(t)).toEqual(before);
    const at = core.weightTablePtr(table);
    expect(Array.from(new Float64Array(core.exports.memory.buffer, at, table.length))).toEqual(Array.from(table));
  });

  it("rejects a table of another shape, naming `weights`", () => {
    const core = new CoreInstance();
    const n = core.featureCount;
    for (const bad of [new Float64Array(n), new Float64Array(kEstimateRows * n + 1), Array.from({ length: kEstimateRows * n }, () => 1), undefined]) {
      let err: unknown;
      try {
        core.estimateStrings(["x"], bad as unknown as Float64Array);
      } catch (e) {
        err = e;
      }
      expect(CtxfoldError.isInstance(err) && err.code).toBe("E_BAD_INPUT");
      expect((err as CtxfoldError).message).toMatch(
        new RegExp(`^weights: expected the estimator's weight table, a Float64Array of ${kEstimateRows} rows of ${n} weights; got `),
      );
    }
    expect(() => core.measureStrings(["x"], new Float64Array(3))).toThrowError(/^weights: /);
  });
});
