/**
 * The chunker: whole lines in input order, each line in exactly one chunk or alone as a line over
 * the limit, whatever the blocks the input arrives in; a line over the limit streamed, never held.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunksOf, type InputPiece } from "../../src/pool/chunks.js";

async function* blocksOf(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < bytes.length)].sort((a, b) => a - b)) {
    yield bytes.subarray(at, c);
    at = c;
  }
  yield bytes.subarray(at);
}

/** Every piece as [first line, its lines' bytes, whether it is a long line]; long lines read to their end. */
async function pieces(input: AsyncIterable<Buffer>, chunkBytes: number, maxLineBytes: number) {
  const out: { firstLine: number; text: string; long: boolean; newline?: boolean }[] = [];
  for await (const p of chunksOf(input, chunkBytes, 1, { maxLineBytes }) as AsyncGenerator<InputPiece>) {
    if (p.long) {
      const parts: Buffer[] = [];
      for await (const b of p.long.blocks) parts.push(Buffer.from(b));
      out.push({ firstLine: p.firstLine, text: Buffer.concat(parts).toString("latin1"), long: true, newline: p.long.newline });
    } else out.push({ firstLine: p.firstLine, text: Buffer.from(p.bytes).toString("latin1"), long: false });
  }
  return out;
}

describe("chunksOf with a line limit", () => {
  it("gives every line once, in order, whatever the blocks: those over the limit alone and whole, the others in chunks of whole lines", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 30 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 200 }),
        async (lengths, lastNewline, cuts, maxLine, chunkBytes) => {
          const lines = lengths.map((n, i) => String.fromCharCode(97 + (i % 26)).repeat(n));
          const text = lines.join("\n") + (lastNewline ? "\n" : "");
          const got = await pieces(blocksOf(Buffer.from(text, "latin1"), cuts), chunkBytes, maxLine);
          // Lines come back in order, numbered from 1.
          const seen: string[] = [];
          for (const p of got) {
            expect(p.firstLine).toBe(seen.length + 1);
            if (p.long) {
              expect(p.text.length).toBeGreaterThan(maxLine);
              seen.push(p.text);
            } else {
              const body = p.text.endsWith("\n") ? p.text.slice(0, -1) : p.text;
              for (const l of body.split("\n")) {
                expect(l.length).toBeLessThanOrEqual(maxLine);
                seen.push(l);
              }
            }
          }
          expect(seen).toEqual(lastNewline || lines.at(-1) !== "" ? lines : lines.slice(0, -1));
          const last = got.at(-1);
          if (last?.long) expect(last.newline).toBe(text.endsWith("\n"));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("streams a line far over the limit in blocks as they are read, and stops when asked", async () => {
    let read = 0;
    let stop = false;
    async function* noNewline(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 512; i++) {
        read += 1 << 16;
        yield Buffer.alloc(1 << 16, 0x30);
      }
    }
    const it = chunksOf(noNewline(), 1 << 16, 1, { maxLineBytes: 1 << 20, stopped: () => stop });
    const first = (await it.next()).value as InputPiece;
    expect(first.long).toBeDefined();
    let streamed = 0;
    for await (const b of first.long!.blocks) {
      streamed += b.length;
      if (streamed > 8 << 20) break;
    }
    // What was read was handed on: never more than the limit and a block behind.
    expect(read - streamed).toBeLessThanOrEqual((1 << 20) + (1 << 16));
    stop = true;
    expect((await it.next()).done).toBe(true);
  });
});
