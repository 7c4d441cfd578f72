/**
 * How every command reads its input — compact's engine and its workers, validate, stats,
 * explain, eval and count --jsonl — so that a line gets one verdict whichever command reads it:
 *
 * - Bytes: a file or stdin, gunzipped when they start with gzip's magic (1f 8b), whatever the
 *   name and through pipes; a failure to read them (a truncated or corrupt .gz, a failed read)
 *   is an E_BAD_INPUT naming the input.
 * - Lines: the bytes between LFs, numbered from 1; a last line without its LF counts. A CR is a
 *   line end only before an LF (it is JSON whitespace anywhere else).
 * - Blank: a line of spaces, tabs and CRs only, after an optional BOM, is no run (compact writes
 *   it through, the other commands skip it).
 * - Text, one policy (decodeLine): strict UTF-8 — a byte that is not part of well-formed UTF-8
 *   is an E_BAD_INPUT naming its offset in the line, never replaced by U+FFFD, since compact
 *   writes lines back and offloads originals, and a replaced byte would be a changed original;
 *   a BOM at the start of a line is ignored (editors write one per file, and concatenated
 *   files carry one per line); a trailing CR is stripped (CRLF files).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { pipeline, Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { CtxfoldError } from "../errors.js";

/**
 * `input`, gunzipped when its first bytes are gzip's magic (1f 8b), so gzip data is read as
 * such whatever the file is called and through pipes. A failure to read it is an E_BAD_INPUT
 * naming the input (`name`: the file as shown, or `stdin`), since neither zlib's errors
 * (Z_BUF_ERROR: a truncated .gz, Z_DATA_ERROR: a corrupt one) nor a read's (EISDIR, EIO) say
 * which file; an open's error (ENOENT, EACCES) names its file and passes unchanged.
 * `gzip.bytesIn`, when given, becomes the count of compressed bytes the decompressor has taken
 * (gzip data only): what the decompressed bytes read so far came from.
 */
export function gunzipIfGzip(input: Readable, name: string, gzip?: { bytesIn?: () => number }): Readable {
  return Readable.from(namingFailures(bytesOf(input, gzip), name), { objectMode: false });
}

/** Whether `head` starts with gzip's magic (1f 8b). */
const isGzipHead = (head: Uint8Array): boolean => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

async function* bytesOf(input: Readable, gzip?: { bytesIn?: () => number }): AsyncGenerator<Buffer> {
  const it = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await it.next();
  if (first.done) return;
  async function* all() {
    yield first.value;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  }
  const head = first.value;
  if (!isGzipHead(head)) return yield* all();
  const gunzip = createGunzip();
  if (gzip) gzip.bytesIn = () => gunzip.bytesWritten;
  // pipeline, not pipe: a failing read reaches the reader through gunzip (pipe left it an unhandled 'error').
  pipeline(Readable.from(all()), gunzip, () => undefined);
  yield* gunzip;
}

/** `bytes`, a failure to read them named as gunzipIfGzip names it (inputError). */
export async function* namingFailures(bytes: AsyncIterable<Buffer>, name: string): AsyncGenerator<Buffer> {
  try {
    yield* bytes;
  } catch (err) {
    throw inputError(err, name);
  }
}

/** A failure reading input `name` as gunzipIfGzip reports it. */
function inputError(err: unknown, name: string): unknown {
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === "string" ? e.code : undefined;
  if (code?.startsWith("Z_")) return new CtxfoldError("E_BAD_INPUT", `cannot decompress: ${e.message} (${code})`, { path: name, cause: err });
  if (code !== undefined && e.syscall !== undefined && e.path === undefined)
    return new CtxfoldError("E_BAD_INPUT", `cannot read it: ${e.message}`, { path: name, cause: err });
  return err;
}

/** Each line of `bytes` (without its LF), and its index; a last line without an LF counts. */
export function* linesOf(bytes: Uint8Array): Generator<{ raw: Uint8Array; index: number }> {
  for (let start = 0, index = 0; start < bytes.length; index++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    yield { raw: bytes.subarray(start, end), index };
    start = end + 1;
  }
}

/**
 * The line limit, 64 MiB: a line is held whole to be read (and its parse takes several times its
 * size), so a line longer than this is not (compact writes it through as it reads it, the other
 * commands report it), and a line that never ends (`/dev/zero`) does not grow without bound. The
 * corpus's longest run is 0.8 MB.
 */
export const kDefaultMaxLineBytes = 64 * 2 ** 20;

/** A line of readLines: its bytes, or for a line over the limit only its length (its bytes were let go). */
export type ReadLine = { raw: Uint8Array; n: number; tooLong?: undefined } | { raw?: undefined; n: number; tooLong: number };

/**
 * The lines of a byte stream (without their LF), numbered from 1, as linesOf cuts a chunk. A
 * line split across reads is joined once, when its end arrives, so a long line costs one copy.
 * A line over `maxLineBytes` is not held: its bytes are let go as they are read, and it comes
 * back as its length (`tooLong`).
 */
export async function* readLines(input: AsyncIterable<Uint8Array>, maxLineBytes = kDefaultMaxLineBytes): AsyncGenerator<ReadLine> {
  let n = 0;
  let pending: Uint8Array[] = [];
  let size = 0;
  let dropped = 0; // bytes let go of the current line, once it is over the limit
  const line = (tail: Uint8Array): ReadLine => {
    const length = size + tail.length;
    if (dropped > 0 || length > maxLineBytes) return { n: ++n, tooLong: dropped + length };
    return { raw: pending.length > 0 ? Buffer.concat([...pending, tail]) : tail, n: ++n };
  };
  for await (const chunk of input) {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end >= 0; end = chunk.indexOf(0x0a, start)) {
      yield line(chunk.subarray(start, end));
      pending = [];
      size = dropped = 0;
      start = end + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      size += chunk.length - start;
      if (size > maxLineBytes) {
        dropped += size;
        pending = [];
        size = 0;
      }
    }
  }
  if (pending.length > 0 || dropped > 0) yield line(new Uint8Array(0));
}

const kBom = [0xef, 0xbb, 0xbf] as const;
const startsWithBom = (raw: Uint8Array): boolean => raw[0] === kBom[0] && raw[1] === kBom[1] && raw[2] === kBom[2];

/** Whether a line is blank: spaces, tabs and CRs only, after an optional BOM. */
export function isBlankLine(raw: Uint8Array): boolean {
  for (let i = startsWithBom(raw) ? 3 : 0; i < raw.length; i++) {
    const b = raw[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/** Strict: throws on bad bytes. It also drops a BOM at the start of what it decodes. */
const kDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * A line's text under the policy of this module: strict UTF-8, a leading BOM ignored, a
 * trailing CR stripped. Invalid UTF-8 throws E_BAD_INPUT naming the offset of its first bad
 * byte in the line (the caller adds file:line).
 */
export function decodeLine(raw: Uint8Array): string {
  const body = raw[raw.length - 1] === 0x0d ? raw.subarray(0, raw.length - 1) : raw;
  try {
    return kDecoder.decode(body);
  } catch {
    const at = invalidUtf8At(body);
    throw new CtxfoldError("E_BAD_INPUT", `not UTF-8: byte 0x${body[at].toString(16).padStart(2, "0")} at offset ${at} of the line starts no valid sequence`);
  }
}

/**
 * The offset of the first byte of `bytes` where well-formed UTF-8 breaks (the lead byte of a
 * bad or cut-short sequence, or a stray byte), by the Unicode table of well-formed sequences
 * (no overlongs, no surrogates, nothing above U+10FFFF); -1 when there is none.
 */
function invalidUtf8At(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let more: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) more = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      more = 2;
      if (b === 0xe0) lo = 0xa0;
      else if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      more = 3;
      if (b === 0xf0) lo = 0x90;
      else if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= more; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += more + 1;
  }
  return -1;
}

/**
 * About how many bytes of runs the file `path` of `size` bytes holds: its size, or for gzip data
 * the uncompressed size its trailer records (ISIZE: modulo 4 GiB, so never taken below the
 * compressed size). An estimate for choosing how to run a batch, never for what it reads.
 */
export function runBytesOf(path: string, size: number): number {
  if (size < 18) return size;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return size; // the batch's own read says why it cannot be read
  }
  try {
    const head = Buffer.alloc(2);
    const tail = Buffer.alloc(4);
    readSync(fd, head, 0, 2, 0);
    if (!isGzipHead(head)) return size;
    readSync(fd, tail, 0, 4, size - 4);
    return Math.max(size, tail.readUInt32LE(0));
  } catch {
    return size;
  } finally {
    closeSync(fd);
  }
}
