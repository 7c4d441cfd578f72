/**
 * The extractive summariser: within the target by construction (the counter's estimate of the
 * result never exceeds it), deterministic, salient lines kept, bounded on huge inputs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { syntheticText, TEXT_KINDS } from "../../src/gen/text.js";
import { extractiveSummarizer, kExtractive, splitUnits, summarizeExtractive } from "../../src/summarize/extractive.js";
import type { Summarizer } from "../../src/steps/summarizer.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { createRng, randomTricky, thrown } from "../helpers.js";

const counter = new TokenCounter({ encoding: "o200k_base" });
const kHeader = /^\[summary of (.+): (\d+)\/(\d+) lines, (\d+)→(\d+) tokens\]$/;

/** A log of `n` lines of plain INFO chatter, with `special` lines put in at their indices. */
function log(n: number, special: Record<number, string> = {}): string {
  return Array.from({ length: n }, (_, i) => special[i] ?? `INFO worker pool processed batch ${i} in ${(i * 37) % 1000} ms`).join("\n");
}

const lineArb = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 120 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 200, unit: "grapheme" }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 80, unit: "binary" }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "ValueError: bad",
      "Traceback (most recent call last):",
      "FAILED tests/x.py::t",
      "exit code 1",
      "error: boom",
      "api_key=sk-proj-0123456789abcdefghijABCD",
      "}",
      "日本語のテキスト。次の文です！",
      "😀🎉👍",
    ),
  },
  { weight: 1, arbitrary: fc.string({ minLength: 300, maxLength: 3000 }) },
);
const textArb = fc.oneof(
  { weight: 5, arbitrary: fc.array(lineArb, { maxLength: 120 }).map((ls) => ls.join("\n")) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...TEXT_KINDS), fc.integer({ min: 0, max: 30_000 }), fc.integer())
      .map(([k, n, seed]) => syntheticText(k, n, createRng(seed))),
  },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 20_000 }), fc.integer()).map(([n, seed]) => randomTricky(createRng(seed), n)) },
);

describe("summarizeExtractive: within target by construction", () => {
  it("estimate(out) <= target on 2,000 generated texts and targets 1..2000", () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 2000 }), fc.string({ maxLength: 30 }), (text, target, label) => {
        const out = summarizeExtractive(text, target, label, counter);
        expect(counter.estimate(out)).toBeLessThanOrEqual(target);
      }),
      { numRuns: 2000 },
    );
  });

  it("small targets on long texts (the header is dropped before the target is exceeded)", () => {
    const text = syntheticText("logs", 40_000, createRng(7));
    for (let target = 1; target <= 120; target++) {
      const out = summarizeExtractive(text, target, "tool-output:bash", counter);
      expect(counter.estimate(out), `target ${target}`).toBeLessThanOrEqual(target);
    }
  });

  it("with cl100k_base too", () => {
    const cl = new TokenCounter({ encoding: "cl100k_base" });
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 800 }), (text, target) => {
        expect(cl.estimate(summarizeExtractive(text, target, "x", cl))).toBeLessThanOrEqual(target);
      }),
      { numRuns: 300 },
    );
  });
});

describe("summarizeExtractive: behaviour", () => {
  it("is deterministic (same call, and a fresh counter)", () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 500 }), (text, target) => {
        const a = summarizeExtractive(text, target, "label", counter);
        expect(summarizeExtractive(text, target, "label", counter)).toBe(a);
        expect(summarizeExtractive(text, target, "label", new TokenCounter())).toBe(a);
      }),
      { numRuns: 200 },
    );
  });

  it("returns a text already within the target unchanged", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        const t = counter.estimate(text);
        fc.pre(!/key|token|secret|passw|pwd|sk-|bearer|basic /i.test(text));
        expect(summarizeExtractive(text, t + 1, "x", counter)).toBe(text);
        if (t > 0) expect(summarizeExtractive(text, t, "x", counter)).toBe(text);
      }),
    );
    const big = syntheticText("prose", 5000, createRng(1));
    expect(summarizeExtractive(big, counter.estimate(big), "x", counter)).toBe(big);
  });

  it("edge cases: target 0 or below, empty text, fractional targets", () => {
    expect(summarizeExtractive("hello world", 0, "x", counter)).toBe("");
    expect(summarizeExtractive("hello world", -5, "x", counter)).toBe("");
    expect(summarizeExtractive("", 100, "x", counter)).toBe("");
    expect(summarizeExtractive("hello world", 2.9, "x", counter)).toBe("hello world");
    expect(summarizeExtractive("\n\n   \n".repeat(5000), 10, "x", counter)).toBe("");
    thrown(() => summarizeExtractive(42 as unknown as string, 10, "x", counter), "E_NOT_STRING");
    thrown(() => summarizeExtractive("x", Number.NaN, "x", counter), "E_BAD_INPUT");
  });

  it("keeps an error line preferentially (500-line log, ValueError at line 250, target 60)", () => {
    const text = log(500, { 249: "ValueError: bad" });
    const out = summarizeExtractive(text, 60, "tool-output:bash", counter);
    expect(counter.estimate(out)).toBeLessThanOrEqual(60);
    expect(out.split("\n")).toContain("ValueError: bad");
    // The first and last lines too, and gap markers where lines were left out.
    expect(out).toContain("INFO worker pool processed batch 0 ");
    expect(out).toContain("INFO worker pool processed batch 499 ");
    expect(out.split("\n")).toContain(kExtractive.gapMarker);
  });

  it("keeps a traceback's cause line, FAILED and exit-code lines over chatter", () => {
    const text = log(800, {
      300: "Traceback (most recent call last):",
      301: '  File "/app/main.py", line 12, in <module>',
      302: "    run()",
      303: "KeyError: 'user_id'",
      500: "tests/test_api.py::test_login FAILED",
      799: "Process exited with code 2",
    });
    const out = summarizeExtractive(text, 90, "tool-output:bash", counter);
    expect(counter.estimate(out)).toBeLessThanOrEqual(90);
    const lines = out.split("\n");
    expect(lines).toContain("KeyError: 'user_id'");
    expect(lines).toContain("tests/test_api.py::test_login FAILED");
    expect(lines).toContain("Process exited with code 2");
  });

  it("keeps lines in their original order", () => {
    const text = log(300, { 100: "error: first", 200: "fatal: second", 250: "FAILED third" });
    const out = summarizeExtractive(text, 80, "x", counter);
    const at = ["error: first", "fatal: second", "FAILED third"].map((s) => out.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it("begins with a header naming the label, the lines kept and the tokens", () => {
    const text = log(400, { 10: "ERROR something broke" });
    const out = summarizeExtractive(text, 150, "tool-output:read_file", counter);
    const m = kHeader.exec(out.split("\n")[0]);
    expect(m, out).not.toBeNull();
    const [, label, kept, total, orig, tokens] = m!;
    expect(label).toBe("tool-output:read_file");
    expect(Number(total)).toBe(400);
    expect(Number(kept)).toBeGreaterThan(0);
    expect(Number(kept)).toBeLessThan(400);
    expect(Number(orig)).toBe(counter.estimate(text));
    expect(Number(tokens)).toBe(counter.estimate(out));
    expect(Number(tokens)).toBeLessThanOrEqual(150);
  });

  it("drops the header when it would take more than half the target", () => {
    const out = summarizeExtractive(log(400), 20, "tool-output:bash", counter);
    expect(out).not.toMatch(/^\[summary of/);
    expect(out.length).toBeGreaterThan(0);
    expect(counter.estimate(out)).toBeLessThanOrEqual(20);
  });

  it("a one-line label: whitespace collapsed, long labels shortened, secrets redacted", () => {
    const out = summarizeExtractive(log(300), 200, "tool\noutput  sk-proj-0123456789abcdefghijABCD " + "x".repeat(200), counter);
    const first = out.split("\n")[0];
    expect(first).toMatch(/^\[summary of tool output \[REDACTED:openai-key\] x+…: /);
    expect(first).not.toContain("0123456789abcdefghij");
  });

  it("redacts secrets in what it keeps", () => {
    const text = log(300, {
      0: "$ curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' https://api.example.com",
      150: "ERROR auth failed for api_key=sk-proj-0123456789abcdefghijABCDEFGH",
      299: "done: password=hunter2hunter2",
    });
    const out = summarizeExtractive(text, 120, "x", counter);
    expect(out).toContain("[REDACTED:");
    expect(out).not.toContain("abcdefghijklmnopqrstuvwxyz012345");
    expect(out).not.toContain("0123456789abcdefghij");
    expect(out).not.toContain("hunter2");
    // A private key spanning lines is redacted whole, its body included.
    const pem = [
      "-----BEGIN RSA PRIVATE KEY-----",
      ...Array.from({ length: 20 }, (_, i) => `MIIEpAIBAAKCAQEA${i}xyzSECRETBODY`),
      "-----END RSA PRIVATE KEY-----",
    ].join("\n");
    const out2 = summarizeExtractive(`${log(100)}\n${pem}\n${log(100)}`, 300, "x", counter);
    expect(out2).not.toContain("SECRETBODY");
  });

  it("cuts a salient line too long for the room at a word boundary, with …", () => {
    const long = "ValueError: " + Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
    const out = summarizeExtractive(log(200, { 100: long }), 60, "x", counter);
    expect(counter.estimate(out)).toBeLessThanOrEqual(60);
    const kept = out.split("\n").find((l) => l.startsWith("ValueError: "));
    expect(kept).toBeDefined();
    expect(kept!).toMatch(/ word\d+…$/);
  });

  it("CJK and emoji text without newlines splits on 。！？ and on length", () => {
    const sentences = Array.from({ length: 200 }, (_, i) =>
      i === 120 ? "错误：数据库连接失败。" : `这是第${i}个句子，内容比较普通${i % 3 === 0 ? "！" : "。"}`,
    );
    const cjk = sentences.join("");
    const out = summarizeExtractive(cjk, 100, "cjk", counter);
    expect(counter.estimate(out)).toBeLessThanOrEqual(100);
    expect(out).toContain("这是第0个句子");
    expect(out).toContain("这是第199个句子");
    expect(kHeader.test(out.split("\n")[0])).toBe(true);

    const emoji = "😀🎉👍🔥✨".repeat(3000);
    const e = summarizeExtractive(emoji, 80, "emoji", counter);
    expect(counter.estimate(e)).toBeLessThanOrEqual(80);
    expect(e.length).toBeGreaterThan(0);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(e)).toBe(false); // no split pair
  });

  it("splitUnits: sentences, CJK punctuation, length cuts outside surrogate pairs", () => {
    expect(splitUnits("short. line.", 100)).toEqual([{ text: "short. line.", sep: "" }]);
    const units = splitUnits("First one. Second one! Third? 第一句。第二句！尾", 12);
    expect(units.map((u) => u.text)).toEqual(["First one.", "Second one!", "Third?", "第一句。", "第二句！", "尾"]);
    expect(units.map((u) => u.text + u.sep).join("")).toBe("First one. Second one! Third? 第一句。第二句！尾");
    const emoji = splitUnits("😀".repeat(100), 9);
    expect(emoji.every((u) => u.text.length <= 9 && !/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(u.text))).toBe(true);
    expect(emoji.map((u) => u.text).join("")).toBe("😀".repeat(100));
  });

  // How fast these two are is the bench gate's ("summary 1 MB log + 1 MB line" in
  // bench/enormous.ts: against counting the lines of the same texts).
  it("a single enormous line (1 MB, no newline) is summarised within target", () => {
    const line = Array.from({ length: 150_000 }, (_, i) => `tok${i % 977}`)
      .join(" ")
      .slice(0, 1 << 20);
    const out = summarizeExtractive(line, 200, "one-line", counter);
    expect(counter.estimate(out)).toBeLessThanOrEqual(200);
    expect(out).toMatch(/^\[summary of one-line: 1\/1 lines, /);
    expect(out).toContain("tok0 tok1 tok2");
  });

  it("a 1 MB log is summarised within target", () => {
    const text = syntheticText("logs", 1 << 20, createRng(11));
    const middle = text.length >> 1;
    const cut = text.indexOf("\n", middle) + 1;
    const withError = `${text.slice(0, cut)}DatabaseError: connection refused to db-7 at 10.0.0.7:5432\n${text.slice(cut)}`;
    for (const target of [60, 500, 2000]) {
      const out = summarizeExtractive(withError, target, "tool-output:bash", counter);
      expect(counter.estimate(out)).toBeLessThanOrEqual(target);
      expect(kHeader.test(out.split("\n")[0])).toBe(true);
    }
    // The middle error line is among the candidates (the keyword scan finds it).
    expect(summarizeExtractive(log(30_000, { 15000: "DatabaseError: connection refused" }), 100, "x", counter)).toContain("DatabaseError: connection refused");
  });
});

describe("extractiveSummarizer", () => {
  it("is a synchronous Summarizer over its counter", () => {
    const s: Summarizer = extractiveSummarizer();
    const out = s(log(500, { 249: "ValueError: bad" }), 60, "tool-output:bash");
    expect(typeof out).toBe("string");
    expect(out as string).toContain("ValueError: bad");
    const cl = new TokenCounter({ encoding: "cl100k_base" });
    const s2 = extractiveSummarizer({ counter: cl });
    expect(cl.estimate(s2(log(500), 50, "x"))).toBeLessThanOrEqual(50);
    const s3 = extractiveSummarizer({ encoding: "cl100k_base" });
    expect(s3(log(500), 50, "x")).toBe(s2(log(500), 50, "x"));
  });

  it("rejects a counter whose encoding contradicts `encoding`", () => {
    thrown(() => extractiveSummarizer({ counter, encoding: "cl100k_base" }), "E_BAD_INPUT");
    thrown(() => extractiveSummarizer({ counter: {} as TokenCounter }), "E_BAD_INPUT");
  });
});
