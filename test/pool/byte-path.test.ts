/**
 * The batch engine's byte path against the parse path it stands in for: the JSON scan kernel
 * against its TypeScript twin and against a strict decode + JSON.parse (the same verdicts, and
 * each string's estimate the estimator's for the parsed string), and byteRunTokens against the
 * compactor's measure of the parsed run wherever it answers, over the dev corpus, generated runs
 * in every format, hostile lines and random mutations of runs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderMessages, type Format } from "../../src/adapters/index.js";
import { generateRuns } from "../../src/gen/run.js";
import { createCompactor } from "../../src/policy/index.js";
import { byteRunTokens } from "../../src/pool/byte-fit.js";
import { parseLine, runOfLine, wireOf } from "../../src/pool/jsonl.js";
import { kToken, scanJson, type ScanResult } from "../../src/pool/json-scan.js";
import { TokenCounter } from "../../src/tokens/index.js";
import { ENCODING_COUNT } from "../../src/tokens/weights-table.js";
import { corpusLines } from "../helpers-corpus.js";
import { createRng, hasCorpus, kNoCorpusReason, randomTricky } from "../helpers.js";

const kFormats: Format[] = ["openai-chat", "anthropic", "openai-responses", "ai-sdk", "langchain"];
const utf8 = (s: string) => Buffer.from(s, "utf8");
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const kGenerated = generateRuns(40, 5).map((r, i) => {
  const m = renderMessages(r.messages, kFormats[i % kFormats.length]);
  const env = Array.isArray(m) ? { messages: m } : (m as object);
  return JSON.stringify(i % 2 ? { id: `run-${i}`, ...env } : m);
});
const kCorpus = hasCorpus ? corpusLines() : [];
const kCorpusSample = kCorpus.filter((_, i) => i % 7 === 0);

/** Hand-made texts at the edges of JSON and UTF-8. */
const kEdges: Buffer[] = [
  ...[
    "{}",
    "[]",
    " [ ] ",
    "0",
    "-0",
    "-0.5e-7",
    "1E+2",
    "01",
    "1.",
    ".5",
    "+1",
    "1e",
    "--1",
    "tru",
    "true",
    "nul",
    "null ",
    '\t\r\n"x"',
    '"\\u00e9\\uD83D\\uDE00"',
    '"\\ud800"',
    '"\\uDFFF x"',
    '"\\x"',
    '"\\u12g4"',
    '"a\tb"',
    '"a\\/b"',
    '{"a":1,}',
    "[1,]",
    '{"a" 1}',
    '{"a":1 "b":2}',
    "{1:2}",
    "[1 2]",
    '"unterminated',
    "[",
    "{",
    '{"a":',
    '["\\',
    "[]]",
    '{"a":[{"b":{"c":[null,true,false]}}]}',
    '{"a":1,"a":2}',
    "\uFEFF[]",
    "[]\r",
    '{"k\\u0065y":"v"}',
    '"€ 𝄞 中"',
    "x",
    "",
  ].map(utf8),
  Buffer.from([0x22, 0xff, 0x22]),
  Buffer.from([0x22, 0xc3, 0x22]),
  Buffer.from([0x22, 0xe2, 0x82, 0x22]),
  Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]),
  Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]),
  Buffer.from([0x22, 0xc0, 0xaf, 0x22]),
  Buffer.from([0x22, 0xe0, 0x80, 0xaf, 0x22]),
  Buffer.from([0x22, 0xf0, 0x9f, 0x98, 0x80, 0x22]),
  Buffer.from([0x5b, 0xc3, 0xa9, 0x5d]),
  Buffer.from([0x22, 0x01, 0x22]),
  utf8("[".repeat(64) + "]".repeat(64)),
  utf8("[".repeat(65) + "]".repeat(65)),
  utf8(`{"x":${"[".repeat(70)}${"]".repeat(70)}}`),
];

/** What a strict UTF-8 decode and JSON.parse make of `bytes`, or undefined where they refuse it. */
function parsed(bytes: Uint8Array): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(strict.decode(bytes)) };
  } catch {
    return undefined;
  }
}

const depthOf = (v: unknown): number =>
  Array.isArray(v) ? 1 + Math.max(0, ...v.map(depthOf)) : v !== null && typeof v === "object" ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;

const counter = new TokenCounter({ encoding: "o200k_base" });
const counterCl = new TokenCounter({ encoding: "cl100k_base" });

/** Checks the kernel's scan of `bytes` against the twin's and against JSON.parse. */
function checkScan(bytes: Uint8Array): ScanResult {
  const wasm = scanJson(bytes);
  const snapshot = wasm.tape ? { count: wasm.tape.count, words: [...wasm.tape.words], estimates: [...wasm.tape.estimates] } : wasm.reason;
  const twin = scanJson(bytes, { backend: "ts" });
  expect(twin.reason, `twin's verdict on ${Buffer.from(bytes).toString("latin1").slice(0, 80)}`).toBe(wasm.reason);
  const p = parsed(bytes);
  if (!wasm.tape) {
    // Refused: JSON.parse refuses it too, or it is past the depth limit.
    if (p) expect(depthOf(p.value)).toBeGreaterThan(64);
    return wasm;
  }
  expect(p, "scanned, so JSON.parse takes it").toBeDefined();
  const t = twin.tape!;
  const s = snapshot as { count: number; words: number[]; estimates: number[] };
  expect(t.count).toBe(s.count);
  expect([...t.words]).toEqual(s.words);
  for (let i = 0; i < s.count; i++) {
    if ((s.words[i * 4] & 0xff) !== kToken.string) continue;
    const [start, end] = [s.words[i * 4 + 1], s.words[i * 4 + 2]];
    const text = JSON.parse(`"${strict.decode(bytes.subarray(start, end))}"`) as string;
    const want = [counter.estimateMany([text])[0], counterCl.estimateMany([text])[0]];
    for (let row = 0; row < ENCODING_COUNT; row++) {
      expect(s.estimates[i * ENCODING_COUNT + row]).toBe(want[row]);
      expect(t.estimates[i * ENCODING_COUNT + row]).toBe(want[row]);
    }
  }
  return wasm;
}

describe("the JSON scan kernel", () => {
  it("agrees with its twin and with a strict decode + JSON.parse on the edges of JSON and UTF-8", () => {
    const verdicts = kEdges.map((b) => checkScan(b).reason ?? "scanned");
    expect(verdicts).toContain("not UTF-8");
    expect(verdicts).toContain("nested too deep");
    expect(verdicts.filter((v) => v === "scanned").length).toBeGreaterThan(10);
  });

  it("agrees on generated runs in every format, and on corpus runs", () => {
    for (const line of [...kGenerated, ...kCorpusSample.slice(0, 12)]) expect(checkScan(utf8(line)).tape).toBeDefined();
  });

  it("agrees on random JSON, random text in strings, and their byte mutations", () => {
    const r = createRng(11);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(), fc.nat(255), (v, at, byte) => {
        const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === "string" ? `${x}${randomTricky(r, 12)}` : x)) ?? "null";
        const b = utf8(text);
        checkScan(b);
        const mutated = Buffer.from(b);
        if (mutated.length > 0) mutated[at % mutated.length] = byte;
        checkScan(mutated);
        checkScan(b.subarray(0, at % (b.length + 1)));
      }),
      { numRuns: 400, seed: 3 },
    );
  });

  it("says a text has too many tokens rather than cut its tape", () => {
    expect(scanJson(utf8("[1,2,3,4]"), { maxTokens: 3 }).reason).toBe("too many tokens");
    expect(scanJson(utf8("[1,2,3,4]"), { maxTokens: 3, backend: "ts" }).reason).toBe("too many tokens");
    expect(scanJson(utf8("[1,2,3,4]"), { maxTokens: 5 }).tape?.count).toBe(5);
  });
});

const compactor = createCompactor({});

/** byteRunTokens of a line where it answers, checked against the parse path: the run parses, and the compactor measures the same tokens. */
function checkRun(line: Uint8Array, format: Format | "auto" = "auto"): number | undefined {
  const { tape } = scanJson(line);
  const tokens = tape && byteRunTokens(tape, line, format, 0);
  if (tokens === undefined) return undefined;
  const run = runOfLine(parseLine(line), 1);
  const { format: f, messages } = compactor.parse(wireOf(run), format === "auto" ? undefined : format);
  expect(f).toBe("openai-chat");
  expect(tokens).toBe(compactor.measure(messages, f));
  return tokens;
}

describe("byteRunTokens", () => {
  it.skipIf(!hasCorpus)(`equals the compactor's measure on every corpus run, and answers for all of them${hasCorpus ? "" : ` (${kNoCorpusReason})`}`, () => {
    const answered = kCorpus.filter((l) => checkRun(utf8(l)) !== undefined).length;
    expect(answered).toBe(kCorpus.length);
  });

  it("answers only for OpenAI chat runs, equal to the measure, with the format given or detected", () => {
    kGenerated.forEach((l, i) => {
      const format = kFormats[i % kFormats.length];
      const auto = checkRun(utf8(l));
      if (format === "openai-chat") expect(auto).toBeDefined();
      else expect(auto).toBeUndefined();
      expect(checkRun(utf8(l), format)).toBe(format === "openai-chat" ? auto : undefined);
    });
  });

  it("declines what the parse path refuses or reads otherwise", () => {
    const run = (messages: unknown[], extra: Record<string, unknown> = {}) => utf8(JSON.stringify({ id: "x", ...extra, messages }));
    const call = { id: "c1", type: "function", function: { name: "bash", arguments: "{}" } };
    const declined = [
      run([{ role: "wizard", content: "hi" }]),
      run([{ role: "user", content: 7 }]),
      run([{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }]),
      run([{ role: "user", content: [{ type: "text", text: "a", cache_control: {} }] }]),
      run([{ role: "user", content: "a", type: "message" }]),
      run([{ role: "user", content: "a", name: 5 }]),
      run([{ role: "assistant", content: null, tool_calls: [{ ...call, args: {} }] }]),
      run([{ role: "assistant", content: null, tool_calls: [{ ...call, function: { name: "bash", arguments: {} } }] }]),
      run([{ role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }]),
      run([{ role: "tool", content: "out" }]),
      run([{ role: "user", content: "a", tool_calls: [call] }]),
      run([{ role: "user", content: "hi" }], { system: "s" }),
      utf8('{"messages":[{"role":"user","content":"a","content":"b"}]}'),
      utf8('{"messages":[{"rol\\u0065":"user","content":"a"}]}'),
      utf8('{"messages":[],"messages":[{"role":"user","content":"a"}]}'),
      utf8('{"messages":{"role":"user"}}'),
      utf8('"just a string"'),
    ];
    for (const b of declined) expect(checkRun(b), b.toString()).toBeUndefined();
    const answered = [
      run([]),
      run([
        { role: "developer", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "a\\u00e9 😀" },
            { type: "text", text: "" },
          ],
        },
      ]),
      run([
        { role: "assistant", content: null, tool_calls: [call, { ...call, id: "c2" }], refusal: null, reasoning_content: { any: ["thing"] } },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "ok" }] },
        { role: "tool", tool_call_id: "c2" },
      ]),
      run([
        { role: "assistant", content: "", tool_calls: [] },
        { role: "user", content: "x", name: "ann" },
      ]),
      utf8('[{"role":"user","content":"esc\\u0061ped \\ud800 lone"}]'),
    ];
    for (const b of answered) expect(checkRun(b), b.toString()).toBeDefined();
  });

  it("equals the measure wherever it answers on random mutations of runs", () => {
    const r = createRng(5);
    const kinds = ["system", "developer", "user", "assistant", "tool", "function"];
    const message = fc.record(
      {
        role: fc.constantFrom(...kinds),
        content: fc.oneof(
          fc.constant(null),
          fc.constant(undefined),
          fc.string().map((s) => s + randomTricky(r, 20)),
          fc.array(fc.record({ type: fc.constantFrom("text", "refusal"), text: fc.string() }), { maxLength: 3 }),
        ),
        tool_calls: fc.option(
          fc.array(
            fc.record({ id: fc.string(), type: fc.constantFrom("function", "custom"), function: fc.record({ name: fc.string(), arguments: fc.string() }) }),
            { maxLength: 2 },
          ),
          { nil: undefined },
        ),
        tool_call_id: fc.option(fc.string(), { nil: undefined }),
        name: fc.option(fc.oneof(fc.string(), fc.integer()), { nil: undefined }),
        extra: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
      },
      { requiredKeys: ["role"] },
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 6 }), fc.boolean(), (messages, bare) => {
        const line = utf8(JSON.stringify(bare ? messages : { id: "r", messages }));
        let parses = true;
        try {
          compactor.parse(wireOf(runOfLine(parseLine(line), 1)));
        } catch {
          parses = false;
        }
        const tokens = checkRun(line);
        if (tokens !== undefined) expect(parses).toBe(true);
      }),
      { numRuns: 500, seed: 9 },
    );
  });
});
