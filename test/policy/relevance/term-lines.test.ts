import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TermSet, termLines } from "../../../src/policy/relevance/term-lines.js";
import { containsTerm } from "../../../src/model/terms.js";
import { createRng, randomTricky, thrown } from "../../helpers.js";

/** What termLines means, spelled out: per text, per line, the terms containsTerm finds there. */
function naive(texts: readonly string[], terms: readonly string[]): number[][] {
  return texts.map((t) =>
    t.split("\n").flatMap((line, i) => {
      const n = terms.filter((term) => containsTerm(line, term)).length;
      return n > 0 ? [i, n] : [];
    }),
  );
}

/** termLines' flat result, per text. */
function perText(texts: readonly string[], terms: readonly string[], backend: "wasm" | "ts"): number[][] {
  const { pairs, ends } = termLines(texts, terms, { backend });
  return texts.map((_, i) => [...pairs.slice(2 * (i > 0 ? ends[i - 1] : 0), 2 * ends[i])]);
}

/** Which terms occur in some text, as containsTerm says. */
const naiveFound = (texts: readonly string[], terms: readonly string[]) => terms.map((term) => (texts.some((t) => containsTerm(t, term)) ? 1 : 0));

const both = (texts: string[], terms: string[]) => {
  const want = naive(texts, terms);
  expect(perText(texts, terms, "wasm")).toEqual(want);
  expect(perText(texts, terms, "ts")).toEqual(want);
  for (const backend of ["wasm", "ts"] as const) expect([...termLines(texts, terms, { backend }).found]).toEqual(naiveFound(texts, terms));
};

describe("termLines known answers (wasm and the TypeScript twin)", () => {
  it("finds lines holding terms as wholes, counting distinct terms per line", () => {
    const text = "open /repo/foo/bar.py\nfoobar here\nfoo/bar.py and bar_baz and foo/bar.py\n\nbar_baz";
    const terms = ["foo/bar.py", "bar_baz", "bar"];
    expect(perText([text], terms, "wasm")).toEqual([[0, 2, 2, 3, 4, 1]]);
    both([text], terms);
  });

  it("applies the boundary rule only at a term's word-character ends", () => {
    both(["x--verbose\nrun --verbose\n$HOME_DIR/x\nuse./src/a.ts"], ["--verbose", "$HOME_DIR", "./src/a.ts"]);
    expect(perText(["a_b1 xa_b1 a_b1x a_b1."], ["a_b1"], "wasm")).toEqual([[0, 1]]);
    expect(perText(["xa_b1 a_b1x"], ["a_b1"], "wasm")).toEqual([[]]);
  });

  it("non-ASCII neighbours: letters block, punctuation and characters outside the BMP do not", () => {
    both(["éfoo_bar\n—foo_bar—\n𝑥foo_bar𝑥\n中foo_bar\nfoo_bar²\n😀foo_bar"], ["foo_bar"]);
    expect(perText(["éfoo_bar\n—foo_bar—\n𝑥foo_bar𝑥\n中foo_bar"], ["foo_bar"], "wasm")).toEqual([[1, 1, 2, 1]]);
  });

  it("non-English terms and texts", () => {
    both(["функция обработать_данные вызвана\n処理_関数 が失敗\nobrígado_1 ok"], ["обработать_данные", "処理_関数", "obrígado_1"]);
  });

  it("empty texts, no terms, a trailing newline, no newline at all", () => {
    both(["", "\n", "abc_1\n", "abc_1"], ["abc_1"]);
    both(["abc_1\nabc_1"], []);
    expect(termLines([], ["abc_1"], { backend: "wasm" })).toEqual({ pairs: new Uint32Array(0), ends: new Uint32Array(0), found: new Uint8Array(1) });
  });

  it("a text over 64 KiB and a batch over the batch size", () => {
    const big = Array.from({ length: 20_000 }, (_, i) => (i % 997 === 0 ? `line ${i} calls parse_args()` : `line ${i} nothing here`)).join("\n");
    both([big], ["parse_args"]);
    const many = Array.from({ length: 12 }, (_, i) => big.replace(/nothing/g, `n${i}`).repeat(i === 5 ? 3 : 1));
    expect(perText(many, ["parse_args", "n5_x"], "wasm")).toEqual(naive(many, ["parse_args", "n5_x"]));
  });

  it("every BMP code point as a neighbour decides as containsTerm does", () => {
    const lines: string[] = [];
    for (let c = 0; c < 0x10000; c++)
      if (c !== 0x0a && (c < 0xd800 || c > 0xdfff)) lines.push(`${String.fromCharCode(c)}ab_1`, `ab_1${String.fromCharCode(c)}`);
    const text = lines.join("\n");
    const got = perText([text], ["ab_1"], "wasm")[0];
    expect(got).toEqual(naive([text], ["ab_1"])[0]);
  });

  it("rejects a bad term naming it", () => {
    expect(thrown(() => new TermSet(["ok_1", "x"]), "E_BAD_INPUT").message).toMatch(/^terms\[1\]: expected a term of at least 2 UTF-8 bytes/);
    expect(thrown(() => new TermSet(["a_b\nc"]), "E_BAD_INPUT").message).toMatch(/^terms\[0\]/);
    expect(thrown(() => new TermSet(["a_b", "a_b"]), "E_BAD_INPUT").message).toMatch(/^terms\[1\]/);
  });
});

describe("termLines differential: the kernel equals its twin and the definition", () => {
  it("fast-check: random lines over a small alphabet with planted terms", () => {
    const alphabet = fc.constantFrom("a", "b", "_", "1", "/", ".", " ", "\n", "é", "中", "😀", "-", "$");
    const term = fc.stringMatching(/^[ab_1/.$-]{2,6}$/);
    fc.assert(
      fc.property(
        fc.array(
          fc.array(alphabet, { maxLength: 200 }).map((a) => a.join("")),
          { maxLength: 5 },
        ),
        fc.uniqueArray(term, { maxLength: 8 }),
        (texts, terms) => {
          both(texts, terms);
        },
      ),
      { numRuns: 400, seed: 18 },
    );
  });

  it("seeded tricky UTF-16 (astral pairs, lone surrogates), terms cut from the texts", () => {
    const r = createRng(18);
    for (let i = 0; i < 300; i++) {
      const texts = Array.from({ length: 1 + r.int(4) }, () => randomTricky(r, i % 50 === 0 ? 70_000 : 400));
      const terms = new Set<string>();
      for (const t of texts) {
        for (let k = 0; k < 4 && t.length > 4; k++) {
          const at = r.int(t.length - 3);
          const cut = t.slice(at, at + 2 + r.int(6));
          if (!cut.includes("\n") && !/[\ud800-\udfff]/.test(cut) && new TextEncoder().encode(cut).length >= 2) terms.add(cut);
        }
      }
      const list = [...terms];
      const wasm = perText(texts, list, "wasm");
      if (JSON.stringify(wasm) !== JSON.stringify(perText(texts, list, "ts")) || JSON.stringify(wasm) !== JSON.stringify(naive(texts, list))) {
        expect.fail(`input ${i}: ${JSON.stringify({ texts: texts.map((t) => t.slice(0, 200)), list })}`);
      }
    }
  });
});
