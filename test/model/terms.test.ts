import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { containsTerm, specificTerms, specificTermsByRegex, termsWithin } from "../../src/model/terms.js";
import { corpusLines } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";

describe("specificTerms: the ASCII scan equals the candidate regex", () => {
  it("known cases: leads, :: pairs, trailing separators, flags", () => {
    const cases = [
      "open ../src/a.py and ./b/c.ts then ~/x/y, /usr/lib/x.so.1 or .../d/e",
      "std::vector<int> Foo::bar a:::b a::: ::x x:: a::b::c",
      "--verbose ---x -rf -k_x -O2 --- -- - x- x-- foo.bar. foo/bar/ foo\\bar\\ $HOME_DIR/x",
      "v1.2.3 3.14 1e-5 8080 42 e.g i.e HTTPServer camelCase snake_case",
      "",
      ".",
      "/",
      "--",
      "a",
      "ab",
      "a.b",
      "./",
      "../",
      "~/",
      "-a",
      "--a",
      ".a",
      "...",
      "a..b..",
    ];
    for (const t of cases) expect(specificTerms(t)).toEqual(specificTermsByRegex(t));
    expect(specificTerms("see ../src/a.py and foo::bar.")).toEqual(["../src/a.py", "foo::bar"]);
  });

  it("random ASCII over the characters that decide a candidate's edges", () => {
    const alphabet = fc.constantFrom("a", "Z", "b", "B", "e", "E", "_", "$", "1", "0", ".", "/", "\\", "-", "+", ":", "~", " ", "\n", "(", ",", "x", "9");
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 120 }).map((a) => a.join("")),
        (text) => {
          expect(specificTerms(text)).toEqual(specificTermsByRegex(text));
        },
      ),
      { numRuns: 3000, seed: 19 },
    );
  });

  it("the kernel (texts from 256 characters) equals the TypeScript scan and the regex, on random long texts", () => {
    const alphabet = fc.constantFrom(
      "a",
      "Z",
      "b",
      "B",
      "e",
      "E",
      "_",
      "$",
      "1",
      "0",
      ".",
      "/",
      "\\",
      "-",
      "+",
      ":",
      "~",
      " ",
      "\n",
      "(",
      ",",
      "x",
      "9",
      "src/a.py ",
      "Foo::bar ",
      "--flag ",
    );
    fc.assert(
      fc.property(
        fc.array(alphabet, { minLength: 120, maxLength: 1500 }).map((a) => a.join("")),
        fc.boolean(),
        (text, wide) => {
          const t = wide ? `${text}é` : text;
          const kernel = specificTerms(t);
          expect(kernel).toEqual(specificTerms(t, { backend: "ts" }));
          expect(kernel).toEqual(specificTermsByRegex(t));
        },
      ),
      { numRuns: 400, seed: 23 },
    );
  });

  it("non-ASCII text goes through the regex (astral letters join a term, as \\p{L} says)", () => {
    for (const t of ["𝑥foo_1 бар_1 処理_関数", "é/a.py", "x—y_1"]) expect(specificTerms(t)).toEqual(specificTermsByRegex(t));
  });

  it("text whose only non-ASCII characters are neither letters nor numbers equals the regex, on both backends and either side of the kernel's length", () => {
    // Arrows, dashes, emoji (astral), a combining mark, box drawing, a lone surrogate; and, to
    // hold the regex path too, a letter and a number outside ASCII.
    const unit = fc.constantFrom("a", "Z", "1", "_", "$", ".", "/", "\\", "-", ":", " ", "\n", "→", "—", "😀", "\u0301", "│", "\ud800", "é", "²");
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 400 }), (t) => {
        const regex = specificTermsByRegex(t);
        expect(specificTerms(t)).toEqual(regex);
        expect(specificTerms(t, { backend: "ts" })).toEqual(regex);
      }),
      { numRuns: 1500, seed: 31 },
    );
  });

  it.skipIf(!hasCorpus)(`every message text of every tenth corpus run${hasCorpus ? "" : ` (${kNoCorpusReason})`}`, () => {
    const lines = corpusLines();
    let texts = 0;
    for (let i = 0; i < lines.length; i += 10) {
      const run = JSON.parse(lines[i]) as { messages: { content?: unknown; tool_calls?: { function: { arguments: string } }[] }[] };
      for (const m of run.messages) {
        const all = [typeof m.content === "string" ? m.content : "", ...(m.tool_calls ?? []).map((c) => c.function.arguments)];
        for (const t of all) {
          texts++;
          const regex = specificTermsByRegex(t);
          expect(specificTerms(t)).toEqual(regex);
          expect(specificTerms(t, { backend: "ts" })).toEqual(regex);
        }
      }
    }
    expect(texts).toBeGreaterThan(1000);
  });
});

describe("termsWithin: every term a text holds as a whole", () => {
  /** What it means, spelled out: each substring that containsTerm finds in the text. */
  const byContainsTerm = (text: string) => {
    const out = new Set<string>();
    for (let a = 0; a < text.length; a++) for (let e = a + 1; e <= text.length; e++) if (containsTerm(text, text.slice(a, e))) out.add(text.slice(a, e));
    return out;
  };

  it("known cases: a dotted name holds its dotted prefixes and parts, not a part of a word", () => {
    const t = termsWithin("django.conf.settings");
    for (const x of ["django", "django.conf", "conf.settings", "settings", "django.conf.settings", "."]) expect(t.has(x), x).toBe(true);
    for (const x of ["djan", "conf.set", "ettings"]) expect(t.has(x), x).toBe(false);
    expect([...termsWithin("--verbose")].sort()).toEqual([...byContainsTerm("--verbose")].sort());
  });

  it("equals containsTerm over every substring, on random names of word and separator characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "b", "_", "1", ".", "/", "-", ":", "é", " "), maxLength: 14 }), (text) => {
        expect([...termsWithin(text)].sort()).toEqual([...byContainsTerm(text)].sort());
      }),
      { numRuns: 2000 },
    );
  });
});
