/**
 * Every command reads its input through one line reader (src/pool/input.ts), so a line gets the
 * same verdict whichever command reads it: compact (in-process and in the pool's workers),
 * validate, stats, explain, eval and count --jsonl.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { kExit } from "../../src/cli/common.js";
import type { StatsReport } from "../../src/cli/commands/stats.js";
import type { ValidateReport } from "../../src/cli/commands/validate.js";
import type { EvalReport } from "../../src/eval/index.js";
import { runBatch } from "../../src/pool/engine.js";
import { decodeLine, gunzipIfGzip, isBlankLine, readLines } from "../../src/pool/input.js";
import type { ErrorRecord } from "../../src/pool/job.js";
import { fakeIo } from "./fake-io.js";

let dir: string;
/** A BOM line, a line with a lone CR between JSON tokens, an invalid-UTF-8 line, a CRLF line. */
let file: string;
let input: Buffer;
/** Where the invalid byte sits in its line. */
let badOffset: number;

const runLine = (id: string, text: string) =>
  JSON.stringify({
    id,
    messages: [
      { role: "user", content: text },
      { role: "assistant", content: "done" },
    ],
  });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ctxfold-input-"));
  const bad = Buffer.from(runLine("bad", "café X"));
  badOffset = bad.indexOf("X");
  bad[badOffset] = 0xff;
  input = Buffer.concat([
    Buffer.from("\uFEFF" + runLine("bom", "héllo") + "\n"),
    Buffer.from(runLine("cr", "hi").replace(`"messages"`, `\r"messages"`) + "\n"),
    bad,
    Buffer.from("\n"),
    Buffer.from(runLine("crlf", "bye") + "\r\n"),
  ]);
  file = join(dir, "lines.jsonl");
  writeFileSync(file, input);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[], stdin?: Readable) {
  const f = fakeIo(stdin);
  const code = await runCli(argv, f.io);
  return { code, out: f.stdout(), err: f.stderr() };
}

/** The one message every command gives for line 3, located at file:3. */
const badLine = () =>
  expect.stringMatching(
    new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3: not UTF-8: byte 0xff at offset ${badOffset} of the line starts no valid sequence`),
  );

describe("one line reader for every command", () => {
  it("validate: a BOM line and a lone CR are valid, invalid UTF-8 is a bad line naming file:line and the offset", async () => {
    const r = await cli(["validate", file, "--json"]);
    expect(r.code).toBe(kExit.failed);
    const report = JSON.parse(r.out) as ValidateReport;
    expect(report.runs).toBe(3);
    expect(report.badLines).toEqual([{ line: 3, code: "E_BAD_INPUT", message: badLine() }]);
    expect(r.err).toEqual(badLine());
  });

  it("stats: the same runs and the same bad line", async () => {
    const r = await cli(["stats", file, "--json"]);
    expect(r.code).toBe(kExit.partial);
    expect(JSON.parse(r.out) as StatsReport).toMatchObject({ runs: 3, badLines: 1 });
    expect(r.err).toEqual(badLine());
  });

  it("explain: finds the BOM line's run, and reports the bad line when asked for it", async () => {
    const ok = await cli(["explain", file, "--run", "bom", "--budget", "100000", "--json"]);
    expect(ok.code, ok.err).toBe(kExit.ok);
    expect(JSON.parse(ok.out)).toMatchObject({ id: "bom", line: 1 });
    const bad = await cli(["explain", file, "--run", "line 3", "--budget", "100000"]);
    expect(bad.code).toBe(kExit.failed);
    expect(bad.err).toContain(`${file}:3: not UTF-8: byte 0xff at offset ${badOffset} of the line starts no valid sequence`);
  });

  it("eval: the bad line is left out with the same reason", async () => {
    const r = await cli(["eval", file, "--budget", "100000", "--points", "2", "--json", "--no-report"]);
    expect(r.code, r.err).toBe(kExit.ok);
    const report = JSON.parse(r.out) as EvalReport;
    expect(report.corpus.runs).toBe(3);
    expect(report.failedRuns).toEqual([{ line: 3, code: "E_BAD_INPUT", reason: badLine() }]);
  });

  it("count --jsonl: counts the runs up to the bad line, then fails on it", async () => {
    const r = await cli(["count", file, "--jsonl"]);
    expect(r.code).toBe(kExit.failed);
    expect(r.out).toMatch(/^\d+\tbom\n\d+\tcr\n$/);
    expect(r.err).toContain(`${file}:3: not UTF-8: byte 0xff at offset ${badOffset} of the line starts no valid sequence`);
  });

  it("compact, in-process and in the pool: the same runs, the bad line written through with that reason", async () => {
    const records = (out: string) =>
      readFileSync(`${out}.errors.jsonl`, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as ErrorRecord);
    const want = [{ line: 3, code: "E_BAD_INPUT", reason: `not UTF-8: byte 0xff at offset ${badOffset} of the line starts no valid sequence` }];

    const inProcess = join(dir, "in-process.jsonl");
    const r = await cli(["compact", file, "-o", inProcess, "--budget", "100000", "--workers", "1", "--json"]);
    expect(r.code, r.err).toBe(kExit.partial);
    expect(JSON.parse(r.out)).toMatchObject({ runs: 4, fit: 3, errors: 1, workers: 0 });
    expect(records(inProcess)).toEqual(want);
    expect(readFileSync(inProcess)).toEqual(input); // every run fits: written through byte for byte

    const pooled = join(dir, "pooled.jsonl");
    const s = await runBatch({ input: file, output: pooled, budget: 100000, format: "auto", mode: "tiered", workers: 2, inProcessBelow: 0, chunkBytes: 64 });
    expect(s).toMatchObject({ runs: 4, fit: 3, errors: 1, workers: 2 });
    expect(records(pooled)).toEqual(want);
    expect(readFileSync(pooled)).toEqual(input);
  });
});

describe("the line policy", () => {
  const bytes = (...b: number[]) => Uint8Array.from(b);
  const offsetOf = (raw: Uint8Array) => {
    try {
      decodeLine(raw);
    } catch (err) {
      return /at offset (\d+)/.exec((err as Error).message)?.[1];
    }
    return "decoded";
  };

  it("decodes strict UTF-8, a leading BOM ignored and a trailing CR stripped", () => {
    expect(decodeLine(Buffer.from('\uFEFF["é€😀"]\r'))).toBe('["é€😀"]');
    expect(decodeLine(Buffer.from("\uFEFF\uFEFF[]"))).toBe("\uFEFF[]"); // only the line's first BOM is no content
  });

  it("names the offset where well-formed UTF-8 breaks: stray, overlong, surrogate, above U+10FFFF, cut short", () => {
    expect(offsetOf(bytes(0x61, 0x80))).toBe("1");
    expect(offsetOf(bytes(0x61, 0x62, 0xc0, 0x80))).toBe("2");
    expect(offsetOf(bytes(0xe0, 0x80, 0x80))).toBe("0");
    expect(offsetOf(bytes(0x20, 0xed, 0xa0, 0x80))).toBe("1");
    expect(offsetOf(bytes(0xf4, 0x90, 0x80, 0x80))).toBe("0");
    expect(offsetOf(bytes(0x61, 0xe2, 0x82, 0x0d))).toBe("1");
    expect(() => decodeLine(bytes(0xff))).toThrow(expect.objectContaining({ code: "E_BAD_INPUT" }));
  });

  it("counts a line of spaces, tabs and CRs, after an optional BOM, as blank", () => {
    expect(isBlankLine(Buffer.from(" \t\r"))).toBe(true);
    expect(isBlankLine(Buffer.from("\uFEFF \r"))).toBe(true);
    expect(isBlankLine(Buffer.from("\f"))).toBe(false); // not JSON whitespace: a bad line, in every command
  });

  it("cuts a stream at LFs only, joining lines split across reads", async () => {
    const e = Buffer.from("é"); // two bytes, read apart
    const chunks = [
      Buffer.from("a"),
      Buffer.from("b\nc\r"),
      Buffer.from("\r\n"),
      Buffer.alloc(0),
      e.subarray(0, 1),
      Buffer.concat([e.subarray(1), Buffer.from("\nlast")]),
    ];
    const text = (raw: Uint8Array) => Buffer.from(raw).toString("utf8");
    const lines: [number, string][] = [];
    for await (const { raw, n } of readLines(Readable.from(chunks))) lines.push([n, text(raw)]);
    expect(lines).toEqual([
      [1, "ab"],
      [2, "c\r\r"],
      [3, "é"],
      [4, "last"],
    ]);
  });
});

describe("an input that cannot be read is named, by every command", () => {
  /** Each command reading `input` (its name in argv), and the error it stops with. */
  const commands = (input: string) => [
    ["validate", input],
    ["stats", input],
    ["explain", input, "--run", "x", "--budget", "1000"],
    ["eval", input, "--budget", "1000"],
    ["count", input, "--jsonl"],
    ["compact", input, "-o", join(dir, "unread.jsonl"), "--budget", "1000", "--workers", "1"],
  ];
  const gz = () => gzipSync([runLine("a", "hi"), runLine("b", "bye")].join("\n") + "\n");

  it("a truncated .gz: Z_BUF_ERROR at the file's name, in-process and in the pool", async () => {
    const truncated = join(dir, "truncated.jsonl.gz");
    writeFileSync(truncated, gz().subarray(0, -12));
    for (const argv of commands(truncated)) {
      const r = await cli(argv);
      expect(r.code, argv[0]).toBe(kExit.failed);
      expect(r.err, argv[0]).toBe(`ctxfold ${argv[0]}: ${truncated}: cannot decompress: unexpected end of file (Z_BUF_ERROR)\n`);
    }
    const pooled = runBatch({
      input: truncated,
      output: join(dir, "unread-pool.jsonl"),
      budget: 1000,
      format: "auto",
      mode: "tiered",
      workers: 2,
      inProcessBelow: 0,
      chunkBytes: 64,
    });
    await expect(pooled).rejects.toMatchObject({ code: "E_BAD_INPUT", path: truncated, message: expect.stringContaining("(Z_BUF_ERROR)") });
  });

  it("a corrupt .gz on stdin: Z_DATA_ERROR at stdin", async () => {
    const corrupt = Buffer.concat([gz().subarray(0, 10), Buffer.from("not deflate data")]);
    for (const argv of commands("-")) {
      const r = await cli(argv, Readable.from([corrupt]));
      expect(r.code, argv[0]).toBe(kExit.failed);
      expect(r.err, argv[0]).toMatch(new RegExp(`^ctxfold ${argv[0]}: stdin: cannot decompress: .* \\(Z_DATA_ERROR\\)\n$`));
    }
  });

  it("a read failing inside gzip data: named, not an unhandled stream error", async () => {
    const failing = Readable.from(
      (async function* () {
        yield gz().subarray(0, 20);
        throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO", syscall: "read" });
      })(),
    );
    const read = async () => {
      for await (const chunk of gunzipIfGzip(failing, "runs.jsonl.gz")) void chunk;
    };
    await expect(read()).rejects.toMatchObject({ code: "E_BAD_INPUT", message: "runs.jsonl.gz: cannot read it: EIO: i/o error, read" });
  });

  it("count and hash, which read a text file whole, name a failed read too, and read the command's stdin", async () => {
    const folder = join(dir, "folder.txt");
    mkdirSync(folder);
    for (const argv of [
      ["count", folder],
      ["hash", folder],
    ]) {
      const r = await cli(argv);
      expect(r.code, argv[0]).toBe(kExit.failed);
      expect(r.err, argv[0]).toBe(`ctxfold ${argv[0]}: ${folder}: cannot read it: EISDIR: illegal operation on a directory, read\n`);
    }
    const text = join(dir, "text.txt");
    writeFileSync(text, "some text to count\n");
    for (const command of ["count", "hash"]) {
      const [fromFile, fromStdin] = [await cli([command, text]), await cli([command, "-"], Readable.from([readFileSync(text)]))];
      expect(fromFile.code).toBe(kExit.ok);
      expect(fromStdin).toEqual(fromFile);
    }
  });

  it("a directory: its read fails naming it", async () => {
    const folder = join(dir, "folder.jsonl");
    mkdirSync(folder);
    for (const argv of commands(folder)) {
      const r = await cli(argv);
      expect(r.code, argv[0]).toBe(kExit.failed);
      expect(r.err, argv[0]).toBe(`ctxfold ${argv[0]}: ${folder}: cannot read it: EISDIR: illegal operation on a directory, read\n`);
    }
  });
});

describe("the line limit of the other commands' reader", () => {
  it("gives every line within the limit whole and every line over it as its length only, in order, whatever the blocks", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { maxLength: 10 }),
        fc.integer({ min: 1, max: 30 }),
        async (lengths, cuts, limit) => {
          const text = Buffer.from(lengths.map((n, i) => "ab"[i % 2].repeat(n)).join("\n"));
          const blocks = [...new Set(cuts.filter((c) => c < text.length))].sort((a, b) => a - b);
          const got = [];
          for await (const l of readLines(Readable.from([0, ...blocks].map((c, i, all) => text.subarray(c, all[i + 1] ?? text.length))), limit)) got.push(l);
          const want = lengths.map((n, i) => (n > limit ? { n: i + 1, tooLong: n } : { n: i + 1, raw: "ab"[i % 2].repeat(n) }));
          // A last empty line (the text ended on an LF) is no line.
          if (lengths.at(-1) === 0) want.pop();
          expect(got.map((l) => (l.raw === undefined ? { n: l.n, tooLong: l.tooLong } : { n: l.n, raw: Buffer.from(l.raw).toString() }))).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });
});
