/**
 * The batch's input as chunks of whole lines: its bytes counted as the chunker takes them (for
 * progress), cut into chunks of at least `chunkBytes` that each know their first line's number, so results
 * can be written in input order and error records name input lines. A line longer than the line
 * limit is never held whole: it comes out on its own, its bytes streamed as they are read.
 */
/** A chunk's size when the caller names none (BatchOptions.chunkBytes). */
export const kDefaultChunkBytes = 256 * 1024;

/** What the chunker gives: a chunk of whole lines, or one line over the line limit (LongLine). */
export type InputPiece = { bytes: Uint8Array; firstLine: number; long?: undefined } | { long: LongLine; firstLine: number; bytes?: undefined };

/** A line over the line limit, its bytes (without its LF) as they are read. */
export interface LongLine {
  /**
   * Its bytes, a block at a time: to be read to the end before the chunker is asked for its next
   * piece (they come from the same input), or not at all after a stop.
   */
  blocks: AsyncIterable<Uint8Array>;
  /** Whether the input had an LF after it (known once `blocks` ended: a last line may have none). */
  newline: boolean;
}

export interface ChunkLimits {
  /** A line longer than this many bytes is given as a LongLine, never held whole. @default Infinity */
  maxLineBytes?: number;
  /** Asked before each block is taken; true ends the chunks at once (an interrupt). @default never */
  stopped?: () => boolean;
}

/**
 * `input`, each block's length told to `count` as it is taken. Read only as asked (a 'data'
 * listener would set a stream flowing, and what it read before the chunker's first request,
 * across the awaits that open the output, would be lost to the chunker).
 */
export async function* counting(input: AsyncIterable<Buffer>, count: (bytes: number) => void): AsyncGenerator<Buffer> {
  for await (const data of input) {
    count(data.length);
    yield data;
  }
}

/** `bytes` as a chunk of whole lines whose first is number `firstLine`, and the number of lines it holds. */
function chunkOf(bytes: Buffer, firstLine: number): { chunk: InputPiece; lines: number } {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  let n = 0;
  for (let i = copy.indexOf(0x0a); i >= 0; i = copy.indexOf(0x0a, i + 1)) n++;
  if (copy.length > 0 && copy[copy.length - 1] !== 0x0a) n++;
  return { chunk: { bytes: copy, firstLine }, lines: n };
}

/**
 * Where in `block` the line that first runs over `max` bytes starts (0 also when it started in
 * the `open` bytes before the block), or -1 when every line in it stays within `max`.
 */
function lineOverLimit(block: Buffer, open: number, max: number): number {
  if (open + block.length <= max) return -1;
  let at = 0;
  let length = open;
  for (;;) {
    const nl = block.indexOf(0x0a, at);
    if (length + (nl < 0 ? block.length : nl) - at > max) return at;
    if (nl < 0) return -1;
    at = nl + 1;
    length = 0;
  }
}

/**
 * Whole-line chunks of the input, the first starting at line `firstLine`; a line over
 * `limits.maxLineBytes` comes out alone as a LongLine (the whole lines before it first, as a
 * chunk of whatever size they make), so memory holds at most a chunk and the limit.
 */
export async function* chunksOf(input: AsyncIterable<Buffer>, chunkBytes: number, firstLine: number, limits: ChunkLimits = {}): AsyncGenerator<InputPiece> {
  const max = limits.maxLineBytes ?? Infinity;
  const stopped = limits.stopped ?? (() => false);
  const it = input[Symbol.asyncIterator]();
  let carry: Buffer | undefined; // read past a long line's end: the next block
  const next = async (): Promise<Buffer | undefined> => {
    if (carry) {
      const block = carry;
      carry = undefined;
      return block;
    }
    const r = await it.next();
    return r.done ? undefined : r.value;
  };
  let pending: Buffer[] = [];
  let size = 0;
  let open = 0; // bytes of the unfinished line at the end of pending
  let line = firstLine;
  const cut = (all: Buffer, at: number): InputPiece => {
    const { chunk, lines } = chunkOf(all.subarray(0, at), line);
    line += lines;
    return chunk;
  };
  for (let block = await next(); block !== undefined && !stopped(); block = await next()) {
    if (block.length === 0) continue;
    const start = lineOverLimit(block, open, max);
    if (start < 0) {
      pending.push(block);
      size += block.length;
      const lf = block.lastIndexOf(0x0a);
      open = lf < 0 ? open + block.length : block.length - lf - 1;
      if (size < chunkBytes || size === open) continue; // a line longer than a chunk: keep reading
      const all = Buffer.concat(pending, size);
      yield cut(all, size - open);
      pending = open > 0 ? [all.subarray(size - open)] : [];
      size = open;
      continue;
    }
    // A line over the limit: the whole lines before it, then it, streamed from here to its LF.
    const all = Buffer.concat([...pending, block]);
    const lineStart = size + start - (start === 0 ? open : 0);
    if (lineStart > 0) yield cut(all, lineStart);
    pending = [];
    size = open = 0;
    const nl = all.indexOf(0x0a, lineStart);
    const ending = { newline: nl >= 0 };
    const long: LongLine = Object.assign(ending, { blocks: restOfLine(all.subarray(lineStart, nl < 0 ? all.length : nl), ending) });
    if (nl >= 0 && nl + 1 < all.length) carry = all.subarray(nl + 1);
    yield { long, firstLine: line++ };
  }
  /** `head`, then (unless `long` ended at its LF already) the input's blocks up to the next LF, what follows it kept for next(). */
  async function* restOfLine(head: Buffer, long: { newline: boolean }): AsyncGenerator<Uint8Array> {
    yield head;
    if (long.newline) return;
    for (let r = await it.next(); !r.done; r = await it.next()) {
      const nl = r.value.indexOf(0x0a);
      if (nl < 0) {
        yield r.value;
        continue;
      }
      yield r.value.subarray(0, nl);
      long.newline = true;
      if (nl + 1 < r.value.length) carry = r.value.subarray(nl + 1);
      return;
    }
  }
  if (size > 0 && !stopped()) yield cut(Buffer.concat(pending, size), size);
}
