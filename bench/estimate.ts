import { countTokens as gptCount } from "gpt-tokenizer/encoding/o200k_base";
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";
import { estimateTokenCount } from "tokenx";
import { getCore } from "../src/core/core-instance.js";
import { bpeCounter } from "../src/tokens/bpe.js";
import { TokenCounter } from "../src/tokens/token-counter.js";
import { WEIGHT_TABLE } from "../src/tokens/weights-table.js";
import type { Case } from "./lib.js";
import { batchOf, kindText, kSizes, mixedText, totalBytes } from "./inputs.js";
import { kBatch } from "./hash.js";

/**
 * Counting and estimating tokens: the WASM estimator against its TypeScript twin, the exact
 * tokenizers users would otherwise call (js-tiktoken, gpt-tokenizer) and tokenx's heuristic.
 */
export function estimateCases(options: { quick: boolean }): Case[] {
  const core = getCore();
  const twin = new TokenCounter({ backend: "ts" });
  const tiktoken = new Tiktoken(o200k);
  const cases: Case[] = [];
  for (const size of kSizes) {
    const group = `estimate ${size.label}`;
    const texts = size.bytes <= 200 ? batchOf(kBatch, size.bytes, 41) : [mixedText(size.bytes, 43)];
    const bytes = totalBytes(texts);
    const items = texts.length;
    const each = (f: (s: string) => unknown) => () => {
      for (const t of texts) f(t);
    };
    cases.push(
      { group, name: "ctxfold wasm", bytes, items, fn: () => core.estimateStrings(texts, WEIGHT_TABLE) },
      { group, name: "ctxfold ts twin", bytes, items, fn: () => twin.estimateMany(texts) },
      { group, name: "tokenx (heuristic)", bytes, items, fn: each((t) => estimateTokenCount(t)) },
    );
    // Exact tokenizers take ~1 s per MB: skip them at 1 MB in a quick run.
    if (!(options.quick && size.bytes >= 1_000_000)) {
      cases.push(
        { group, name: "js-tiktoken (exact)", bytes, items, fn: each((t) => tiktoken.encode(t, [], []).length) },
        { group, name: "gpt-tokenizer (exact)", bytes, items, fn: each((t) => gptCount(t)) },
      );
    }
  }
  // Exact counts of one long piece (a base64-like run of lowercase letters, one pre-token):
  // 4× the bytes should take 4× the time, so the two throughputs match (their ratio is 1 when
  // the long-piece merge is linear; a heap of every pair made the larger one ~0.7× as fast).
  // The BPE counter under TokenCounter (which remembers each text's count) counts afresh every call.
  const bpe = bpeCounter("o200k_base");
  for (const size of [64 * 1024, 256 * 1024]) {
    const piece = letterRun(size, 53);
    cases.push({ group: "exact count, one long piece", name: `ctxfold exact ${size / 1024} KB`, bytes: size, items: 1, fn: () => bpe.count(piece) });
  }
  if (!options.quick) {
    for (const kind of ["prose", "code", "json", "logs", "cjk", "emoji", "intl"] as const) {
      const text = kindText(kind, 1_000_000, 47);
      cases.push({
        group: "estimate 1 MB by class",
        name: `ctxfold wasm ${kind}`,
        bytes: Buffer.byteLength(text),
        fn: () => core.estimateStrings([text], WEIGHT_TABLE),
      });
    }
  }
  return cases;
}

/** `bytes` lowercase letters at random (seeded): one pre-token of o200k_base, merged as a long piece. */
function letterRun(bytes: number, seed: number): string {
  let s = "";
  let x = seed;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += String.fromCharCode(97 + ((x >>> 16) % 26));
  }
  return s;
}
