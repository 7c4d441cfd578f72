import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";

/**
 * `input`, gunzipped when its first bytes are gzip's magic (1f 8b), so gzip data is read as
 * such whatever the file is called and through pipes.
 */
export function gunzipIfGzip(input: Readable): Readable {
  return Readable.from(
    (async function* () {
      const it = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      const first = await it.next();
      if (first.done) return;
      async function* all() {
        yield first.value;
        for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
      }
      const head = first.value;
      if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) yield* Readable.from(all()).pipe(createGunzip());
      else yield* all();
    })(),
    { objectMode: false },
  );
}
