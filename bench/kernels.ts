import { getCore } from "../src/core/core-instance.js";
import { buildTurnMapReference } from "../src/block/turn-map.reference.js";
import { groupCategoriesReference, kGroupSimilar } from "../src/steps/group-categories.reference.js";
import { createRng } from "../src/gen/text.js";
import type { Case } from "./lib.js";

/**
 * TurnMap building and category grouping, WASM against the TypeScript twin, on the inputs a
 * long run gives: 300 messages (a median long run) and 100,000 (a batch of runs at once).
 * `bytes` is the input array's size, so MB/s compares like with like.
 */
export function kernelCases(): Case[] {
  const core = getCore();
  const cases: Case[] = [];
  for (const n of [300, 100_000]) {
    const r = createRng(n);
    const turns = new Int32Array(n);
    let t = 0;
    for (let i = 0; i < n; i++) {
      if (r.next() < 0.3) t++;
      turns[i] = r.next() < 0.05 ? -1 : t;
    }
    const steps = new Uint8Array(n);
    let cat = 0;
    for (let i = 0; i < n; i++) {
      if (r.next() < 0.4) cat = r.int(5);
      steps[i] = cat | (r.next() < 0.1 ? 0x80 : 0);
    }
    cases.push(
      { group: `turn map ${n} msgs`, name: "ctxfold wasm", bytes: n * 4, items: n, fn: () => core.buildTurnMap(turns) },
      { group: `turn map ${n} msgs`, name: "ctxfold ts twin", bytes: n * 4, items: n, fn: () => buildTurnMapReference(turns) },
      { group: `group steps ${n}`, name: "ctxfold wasm", bytes: n, items: n, fn: () => core.groupCategories(steps, kGroupSimilar) },
      { group: `group steps ${n}`, name: "ctxfold ts twin", bytes: n, items: n, fn: () => groupCategoriesReference(steps, kGroupSimilar) },
    );
  }
  return cases;
}
