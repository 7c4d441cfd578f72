import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareGolden, kGoldenFile, measureGolden, type Golden } from "../scripts/golden.js";
import { hasCorpus, kNoCorpusReason } from "./helpers.js";

// The quick version of `npm run golden`: a sample of the dev corpus and of the generated runs
// through `ctxfold compact` and `ctxfold eval`, byte for byte as recorded.
describe.skipIf(!hasCorpus)(`golden outputs (quick sample)${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  it("compact and eval outputs are byte-identical to the recorded ones", () => {
    const recorded = JSON.parse(readFileSync(kGoldenFile, "utf8")) as Golden;
    const now = measureGolden(true);
    expect(Object.keys(now.corpus["8000"].runs).length).toBeGreaterThan(20);
    expect(compareGolden(now, recorded, true)).toEqual([]);
  });
});
