import { describe, expect, it } from "vitest";
import { getCore, kEstimateRows } from "../../src/core/core-instance.js";
import { coreFor } from "../../src/tokens/estimator-core.js";
import { ENCODING_COUNT, FEATURE_COUNT, WEIGHT_TABLE } from "../../src/tokens/weights-table.js";

describe("the estimator's view of the WASM core", () => {
  it("the weight table has the kernel's shape: a row per encoding, a weight per feature it counts", () => {
    expect(ENCODING_COUNT).toBe(kEstimateRows);
    expect(getCore().featureCount).toBe(FEATURE_COUNT);
    expect(WEIGHT_TABLE.length).toBe(ENCODING_COUNT * FEATURE_COUNT);
  });

  it("estimates and measures with the estimator's weight table", () => {
    const texts = ["alpha beta", "", "βγδ 123", "x".repeat(5000)];
    const core = coreFor("wasm")!;
    expect(core.host).toBe(getCore());
    expect(core.estimateStrings(texts)).toEqual(getCore().estimateStrings(texts, WEIGHT_TABLE));
    expect(core.measureStrings(texts, 5n)).toEqual(getCore().measureStrings(texts, WEIGHT_TABLE, 5n));
    expect(core.hashStrings(texts)).toEqual(getCore().hashStrings(texts));
  });

  it("is one object per thread core, and none where the TypeScript twins run", () => {
    expect(coreFor("wasm")).toBe(coreFor("auto"));
    expect(coreFor("ts")).toBeUndefined();
  });
});
