/**
 * The batch's input as chunks of whole lines: its bytes counted as the chunker takes them (for
 * progress), cut into chunks of at least `chunkBytes` that each know their first line's number, so results
 * can be written in input order and error records name input lines.
 */
/** A chunk's size when the caller names none (BatchOptions.chunkBytes). */
export const kDefaultChunkBytes = 256 * 1024;

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

/** Whole-line chunks of the input, the first starting at line `firstLine`. */
export async function* chunksOf(input: AsyncIterable<Buffer>, chunkBytes: number, firstLine: number): AsyncGenerator<{ bytes: Uint8Array; firstLine: number }> {
  let pending: Buffer[] = [];
  let size = 0;
  let line = firstLine;
  const take = (all: Buffer, cut: number) => {
    const bytes = new Uint8Array(cut);
    bytes.set(all.subarray(0, cut));
    let n = 0;
    for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) n++;
    if (cut > 0 && bytes[cut - 1] !== 0x0a) n++;
    const chunk = { bytes, firstLine: line };
    line += n;
    return chunk;
  };
  for await (const buf of input) {
    if (buf.length === 0) continue;
    pending.push(buf);
    size += buf.length;
    if (size < chunkBytes) continue;
    const all = Buffer.concat(pending, size);
    const cut = all.lastIndexOf(0x0a) + 1;
    if (cut === 0) continue; // one line longer than a chunk: keep reading
    yield take(all, cut);
    pending = cut < all.length ? [all.subarray(cut)] : [];
    size = all.length - cut;
  }
  if (size > 0) {
    const all = Buffer.concat(pending, size);
    yield take(all, all.length);
  }
}
