import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { getCore } from "../../src/core/core-instance.js";
import { ENCODING_COUNT, WEIGHT_TABLE, WEIGHTS_STALE } from "../../src/tokens/weights-table.js";
import { countFeatures, estimateFromFeatures, FEATURE_COUNT, FEATURE_NAMES } from "../../src/tokens/estimator.js";
import { emitAssembly, emitTypeScript, kGeneratedFiles } from "../../scripts/gen-estimator.js";
import { syntheticText, TEXT_KINDS } from "../../src/gen/text.js";
import { createRng, randomTricky } from "../helpers.js";

function tsCounts(s: string): Uint32Array {
  const c = new Uint32Array(FEATURE_COUNT);
  countFeatures(s, 0, s.length, c, 0);
  return c;
}

describe("estimator kernel vs its TypeScript twin", () => {
  it("generated files match the feature spec (run `npm run gen` after editing it)", () => {
    const root = new URL("../../", import.meta.url);
    expect(readFileSync(new URL(kGeneratedFiles.assembly, root), "utf8")).toBe(emitAssembly());
    expect(readFileSync(new URL(kGeneratedFiles.typescript, root), "utf8")).toBe(emitTypeScript());
  });

  it("the fitted weights match the features (run `npm run calibrate` after a spec change)", () => {
    expect(WEIGHTS_STALE).toBe(false);
    expect(WEIGHT_TABLE.every((w) => Number.isFinite(w) && w >= 0)).toBe(true);
  });

  it("differential: identical feature counts and bit-identical estimates on 10,000 seeded inputs", () => {
    const r = createRng(99);
    const texts: string[] = ["", "a", "\ud800", "\udc00x", "😀", "\n\n", "  x"];
    for (let i = 0; i < 10_000; i++) {
      const k = r.next();
      if (k < 0.5) texts.push(randomTricky(r, i % 97 === 0 ? 3000 : 130));
      else texts.push(syntheticText(TEXT_KINDS[r.int(TEXT_KINDS.length)], 1 + r.int(i % 89 === 0 ? 5000 : 300), r));
    }
    // Long inputs cross the kernel's counter flushes; dense CJK takes its SIMD wide-class path.
    texts.push(
      "q".repeat(70_000),
      randomTricky(createRng(2), 100_000),
      syntheticText("code", 80_000, createRng(4)),
      syntheticText("cjk", 80_000, createRng(5)),
      syntheticText("intl", 40_000, createRng(6)),
    );
    const counts = getCore().featureCounts(texts);
    const est = getCore().estimateStrings(texts, WEIGHT_TABLE);
    for (let i = 0; i < texts.length; i++) {
      const want = tsCounts(texts[i]);
      for (let f = 0; f < FEATURE_COUNT; f++) {
        if (counts[i * FEATURE_COUNT + f] !== want[f]) {
          expect.fail(`texts[${i}] (length ${texts[i].length}) feature ${FEATURE_NAMES[f]}: wasm ${counts[i * FEATURE_COUNT + f]} ts ${want[f]}`);
        }
      }
      for (let k = 0; k < ENCODING_COUNT; k++) {
        const ts = estimateFromFeatures(want, 0, WEIGHT_TABLE, k * FEATURE_COUNT);
        if (!Object.is(est[i * ENCODING_COUNT + k], ts)) expect.fail(`texts[${i}] encoding ${k}: wasm ${est[i * ENCODING_COUNT + k]} ts ${ts}`);
      }
    }
  });

  it("counts the same at every block boundary (lengths 0..200 of one text)", () => {
    const base = syntheticText("code", 400, createRng(11)) + "日本語😀\ud800";
    for (let n = 0; n <= 200; n++) {
      const s = base.slice(base.length - n);
      expect(Array.from(getCore().featureCounts([s]))).toEqual(Array.from(tsCounts(s)));
    }
  });

  it("measureStrings gives the hashes and estimates of the separate calls", () => {
    const texts = ["alpha", "", "βγδ", "x".repeat(5000)];
    const m = getCore().measureStrings(texts, WEIGHT_TABLE);
    expect(m.hashes).toEqual(getCore().hashStrings(texts));
    expect(m.estimates).toEqual(getCore().estimateStrings(texts, WEIGHT_TABLE));
  });
});
