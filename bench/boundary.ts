import { getCore, type StringBatch } from "../src/core/core-instance.js";
import { ENCODING_COUNT, WEIGHT_TABLE } from "../src/tokens/weights-table.js";
import type { Case } from "./lib.js";
import { batchOf, totalBytes } from "./inputs.js";
import { kBatch } from "./hash.js";

/**
 * The cost of crossing into WASM: the same 1000 strings of 200 B, end to end from JS strings
 * (copy in, call, copy results out) and as the bare kernel over a batch already in memory.
 * The difference per string is what the boundary costs.
 */
export function boundaryCases(): Case[] {
  const core = getCore();
  const texts = batchOf(kBatch, 200, 53);
  const bytes = totalBytes(texts);
  const laid = (outBytes: number): [StringBatch, number] => {
    let captured: [StringBatch, number] | undefined;
    core.forEachStringBatch(texts, outBytes, (b, out) => (captured = [b, out]));
    if (!captured || captured[0].count !== texts.length) throw new Error("boundary bench: batch did not fit one call");
    return captured;
  };
  // Kernel-only cases lay the batch out on their first call (tinybench's warmup) and then run
  // the bare export over it; nothing else touches the arena while a case runs. The weight table
  // is put in place first: copying it in moves the arena above it.
  const kernelOnly = (outBytes: number, call: (b: StringBatch, out: number) => unknown) => {
    let at: [StringBatch, number] | undefined;
    return () => {
      if (!at) {
        core.weightTablePtr(WEIGHT_TABLE);
        at = laid(outBytes);
      }
      return call(at[0], at[1]);
    };
  };
  const group = "boundary 200 B x1000";
  // The boundary by itself: lay the batch out, call into WASM, copy n results out — what every
  // batched kernel call pays on top of its kernel, measured directly rather than as the
  // difference of two noisy figures.
  const results = new Float64Array(texts.length * ENCODING_COUNT);
  const boundaryOnly = () =>
    core.forEachStringBatch(texts, 8 * ENCODING_COUNT, (b, out) => {
      core.run("boundary", (e) => e.abiVersion());
      results.set(new Float64Array(core.exports.memory.buffer, out, b.count * ENCODING_COUNT), b.first * ENCODING_COUNT);
    });
  return [
    { group, name: "hash end to end", bytes, items: kBatch, fn: () => core.hashStrings(texts) },
    { group, name: "hash kernel only", bytes, items: kBatch, fn: kernelOnly(8, (b, out) => core.exports.hashBatch(b.data, b.offsets, b.count, 0n, out)) },
    { group, name: "estimate end to end", bytes, items: kBatch, fn: () => core.estimateStrings(texts, WEIGHT_TABLE) },
    {
      group,
      name: "estimate kernel only",
      bytes,
      items: kBatch,
      fn: kernelOnly(8 * ENCODING_COUNT, (b, out) => core.exports.estimateBatch(b.data, b.offsets, b.count, core.weightTablePtr(WEIGHT_TABLE), out)),
    },
    { group, name: "boundary only (layout, call, results)", bytes, items: kBatch, fn: boundaryOnly },
  ];
}
