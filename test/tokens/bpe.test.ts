import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kEncodings, type Encoding } from "../../src/tokens/weights-table.js";
import { syntheticText, type TextKind } from "../../src/gen/text.js";
import { BpeCounter, bpeCounter, packRankTable } from "../../src/tokens/bpe.js";
import { SharedRanks } from "../../src/tokens/shared-ranks.js";
import { corpusLines } from "../helpers-corpus.js";
import { createRng, hasCorpus, kNoCorpusReason, randomTricky } from "../helpers.js";

const require = createRequire(import.meta.url);
const { Tiktoken } = require("js-tiktoken/lite") as { Tiktoken: new (ranks: unknown) => { encode(t: string, a: string[], d: string[]): number[] } };
const reference = new Map<Encoding, { encode(t: string, a: string[], d: string[]): number[] }>();
function tiktoken(encoding: Encoding): (text: string) => number {
  let t = reference.get(encoding);
  if (!t) {
    const ranks = require(`js-tiktoken/ranks/${encoding}`) as { default?: unknown };
    reference.set(encoding, (t = new Tiktoken(ranks.default ?? ranks)));
  }
  return (text) => t.encode(text, [], []).length;
}

const kEdgeCases = [
  "",
  "a",
  " ",
  "hello world",
  "<|endoftext|> and <|endofprompt|> are text here",
  "I'm sure they'll say it's theirs; WE'VE SEEN IT'S 'RE",
  "1234567890 3.14159 1e-9 0x7fffffff",
  "   leading and trailing   \r\n\r\n\n\t\t",
  "naïve café — “quotes” … 日本語のテキスト 中文 한국어 עברית العربية",
  "emoji 👩‍👩‍👧‍👦 🏳️‍🌈 🇫🇷 and ZWJ",
  "lone \ud800 high and \udc00 low surrogates",
  "\u0000\u0001\u001f control \u007f\u0080\u00ff",
  "x".repeat(1200),
  "ab".repeat(600),
  " ".repeat(4000) + "end",
  Buffer.from(Array.from({ length: 900 }, (_, i) => (i * 7919) % 256)).toString("base64"),
  "/usr/local/lib/node_modules/some-package/dist/index.js:1234:56",
  "def f(x):\n    return {'a': [1, 2, 3]}\n\n\nclass C:\n\tpass\n",
];

/** A counter as a pool's worker has it: reading the table another thread packed (packRankTable), through its own memo. */
function packedCounter(encoding: Encoding): BpeCounter {
  const table = packRankTable(encoding);
  return new BpeCounter(new SharedRanks(table.buffer), table.patStr);
}

const kSources = [
  ["built here", bpeCounter],
  ["packed for workers", packedCounter],
] as const;

describe.each(kEncodings.flatMap((e) => kSources.map(([source, make]) => [e, source, make] as const)))(
  "BpeCounter(%s, %s) equals js-tiktoken",
  (encoding, _source, make) => {
    const ours = make(encoding);
    const theirs = tiktoken(encoding);

    it("on edge cases: empty, specials as text, contractions, digits, whitespace runs, scripts, emoji, surrogates, long pieces", () => {
      for (const text of kEdgeCases) expect(ours.count(text), JSON.stringify(text.slice(0, 60))).toBe(theirs(text));
    });

    it("on every kind of generated text", () => {
      for (const kind of ["prose", "code", "json", "logs", "cjk", "emoji", "intl"] satisfies TextKind[]) {
        for (const seed of [1, 2]) {
          const text = syntheticText(kind, 20_000, createRng(seed));
          expect(ours.count(text), kind).toBe(theirs(text));
        }
      }
    });

    it("on long one-piece words (the heap merge, over 256 bytes) as on short ones (the quadratic merge)", () => {
      fc.assert(
        fc.property(fc.string({ unit: fc.constantFrom("a", "b", "e", "r", "s", "t", "é", "ß"), minLength: 1, maxLength: 700 }), (word) => {
          expect(ours.count(word)).toBe(theirs(word));
        }),
        { numRuns: 120 },
      );
    });

    it("on random UTF-16 (astral pairs, lone surrogates, CJK, controls)", () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
          const text = randomTricky(createRng(seed), 400);
          expect(ours.count(text)).toBe(theirs(text));
        }),
        { numRuns: 300 },
      );
    });
  },
);

describe.skipIf(!hasCorpus)(`BpeCounter equals js-tiktoken on the corpus${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  it.each(kSources)("o200k_base (%s), every message text of every tenth run of each corpus file", (_source, make) => {
    const ours = make("o200k_base");
    const theirs = tiktoken("o200k_base");
    const lines = corpusLines({ stride: 10 });
    let texts = 0;
    const walk = (v: unknown): void => {
      if (typeof v === "string") {
        texts++;
        if (ours.count(v) !== theirs(v)) expect(ours.count(v), JSON.stringify(v.slice(0, 80))).toBe(theirs(v));
      } else if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") Object.values(v).forEach(walk);
    };
    for (const l of lines) walk(JSON.parse(l));
    expect(texts).toBeGreaterThan(5000);
  });
});

describe("the long-piece merge takes work linear in the piece's length", () => {
  // One piece of 256 KB and one of 1 MB (a run of one letter, lowercase or uppercase letters at
  // random): 4× the bytes may take 4× the steps, not 4× and a log factor more.
  const kinds: [string, (n: number) => string][] = [
    ["a run of one letter", (n) => "x".repeat(n)],
    [
      "random lowercase letters",
      (n) => {
        let s = "";
        let x = 12345;
        for (let i = 0; i < n; i++) {
          x = (x * 1103515245 + 12345) >>> 0;
          s += String.fromCharCode(97 + ((x >>> 16) % 26));
        }
        return s;
      },
    ],
    [
      "random uppercase letters",
      (n) => {
        let s = "";
        let x = 777;
        for (let i = 0; i < n; i++) {
          x = (x * 1103515245 + 12345) >>> 0;
          s += String.fromCharCode(65 + ((x >>> 16) % 26));
        }
        return s;
      },
    ],
  ];
  it.each(kinds)(
    "%s",
    (_, make) => {
      const counter = bpeCounter("o200k_base");
      const work = (n: number) => {
        const s = make(n);
        const before = counter.longMergeWork;
        expect(counter.count(s)).toBeGreaterThan(0);
        return counter.longMergeWork - before;
      };
      const small = work(1 << 18);
      const large = work(1 << 20);
      expect(small).toBeGreaterThan(1 << 18);
      expect(large / small, `steps ${small} → ${large}`).toBeLessThanOrEqual(4.05);
    },
    120_000,
  );

  it("long pieces are not remembered (their text would stay alive), short ones are", () => {
    const counter = bpeCounter("o200k_base");
    const before = counter.rememberedPieces;
    expect(typeof before).toBe("number");
    counter.count("zzqxqvkjwq"); // a short piece of several tokens: remembered
    expect(counter.rememberedPieces).toBe(before + 1);
    for (let i = 0; i < 40; i++) counter.count("q".repeat(1000 + i)); // 40 distinct long pieces
    expect(counter.rememberedPieces).toBe(before + 1);
    // A repeated long piece still counts the same.
    expect(counter.count("q".repeat(1000))).toBe(counter.count("q".repeat(1000)));
  });
});

describe("a rank table packed for workers", () => {
  it("answers every token of the table with its rank, and no other key", () => {
    const built = new Map<string, number>();
    // The table a thread builds for itself, read back through the counter's own lookups.
    const table = packRankTable("o200k_base");
    const shared = new SharedRanks(table.buffer);
    const ranks = require("js-tiktoken/ranks/o200k_base") as { default?: { bpe_ranks: string }; bpe_ranks: string };
    for (const line of (ranks.default ?? ranks).bpe_ranks.split("\n")) {
      const f = line.split(" ");
      for (let i = 2; i < f.length; i++) built.set(atob(f[i]), Number(f[1]) + i - 2);
    }
    expect(shared.size).toBe(built.size);
    for (const [key, rank] of built) if (shared.get(key) !== rank) expect(shared.get(key), JSON.stringify(key)).toBe(rank);
    for (const key of ["", "\u0100", "not-a-token-at-all-xyzzy", "\u00ff\u00fe\u00fd\u00fc\u00fb\u00fa"])
      expect(shared.has(key), JSON.stringify(key)).toBe(false);
  });

  it("keeps the later rank of a token listed twice, as a Map's set does", async () => {
    const { packRankFile } = await import("../../src/tokens/shared-ranks.js");
    // A rank file of two lines, "ab" (YWI=) listed in both: rank 1, then rank 7.
    const shared = new SharedRanks(packRankFile("first 1 YWI= Y2Q=\nsecond 7 YWI="));
    expect([shared.get("ab"), shared.get("cd"), shared.size]).toEqual([7, 2, 2]);
  });
});
