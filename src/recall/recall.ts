/**
 * Recall: what a ref stands for, read back through any offload store, for an agent's tool (the
 * AI SDK and LangChain tools, `ctxfold mcp`) or a runner. One module, so the three front ends
 * page, render and fail the same way.
 *
 * Decisions:
 * - Content refs give the original text, byte for byte, in pages: `maxBytes` (16 KiB by default,
 *   about 4k tokens of text: a page a model can take in one tool result beside its prompt) from `offset`, and `next`, the
 *   offset of the following page, while there is more. A page never ends inside a UTF-8
 *   sequence (a 4-byte emoji is never cut into two U+FFFD), and an offset inside one starts the
 *   page at the sequence's first byte (the page says where it starts). Bytes that are not text
 *   (binary put as bytes) come back as base64, so nothing is lost to U+FFFD either.
 * - A history ref (`history_….json`, the index of the messages a compaction removed whole) gives
 *   those messages rendered in the caller's provider format, paged by messages: `offset` and
 *   `next` count messages, a page holds messages until their rendered JSON passes `maxBytes` (at
 *   least one), and never ends between an assistant's tool calls and the tool messages after it,
 *   so each page is a run of whole exchanges (an exchange larger than `maxBytes` is a page of its
 *   own: the messages are never cut). A message ref (`message_….json`, one entry of a
 *   history) is rendered the same way, as a page of one. A removed history usually opens with the
 *   assistant's turn (it continues a conversation after the task): it is shown to a model as a
 *   tool's result, not sent as a request, so that is not a fault.
 * - Refs are checked before any read, with the error a model can act on: E_BAD_REF for what no
 *   store makes or a ref with another store's prefix (naming the prefix this store has);
 *   E_REF_NOT_FOUND for a well-formed ref not stored; E_CORRUPT from the store's verified read
 *   when the bytes no longer hash to the ref; E_BAD_INPUT with the option's path for an offset
 *   or page size out of range. A bare name (`output_<hash>.txt`) is taken as a ref of the store.
 */
import { kAdapters, kFormats, type Format } from "../adapters/index.js";
import { badValueError, CtxfoldError, shownValue } from "../errors.js";
import type { Message } from "../model/schema.js";
import { decodeText, encodeText, getMessage, indexedRefs, kNameShape, parseRef, type OffloadStore } from "../store/index.js";

/**
 * A page's size when the caller gives none: 16 KiB, about 4k o200k tokens of prose or code, and
 * 5–9k of a history's JSON (escaped text is dense: a 32 KiB page of generated-run messages
 * measured 18.7k tokens), so a page fits beside a compacted prompt at budgets from ~16k up.
 */
export const kDefaultRecallPageBytes = 16 * 1024;
/** The smallest page size: room for any UTF-8 sequence many times over. */
const kMinPageBytes = 256;

export interface RecallOptions {
  /** Where the page starts: a byte offset for content, a message index for messages. @default 0 */
  offset?: number;
  /** A page's size: bytes of content, or of the messages' rendered JSON (at least one message). @default 16384 */
  maxBytes?: number;
  /** The provider format history and message refs are rendered in. @default "openai-chat" */
  format?: Format;
}

/** A page of a content ref. */
export interface RecallText {
  type: "text";
  ref: string;
  /** The kind the ref's name carries: output, args or text (compaction's), or read, list, search, page or shell (a StepReducer's own offloads); docs/recall.md, "What a ref names". */
  kind: string;
  /** The page: the original text, or with encoding "base64" the original bytes in base64. */
  text: string;
  encoding: "utf-8" | "base64";
  /** The page's bytes: [offset, end) of `size`. */
  offset: number;
  end: number;
  size: number;
  /** The offset of the next page; absent on the last. */
  next?: number;
}

/** A page of a history ref (or of one stored message), in a provider format. */
export interface RecallMessages {
  type: "messages";
  ref: string;
  kind: string;
  format: Format;
  /** The page's messages as the format's wire messages (for Anthropic, its `messages`). */
  messages: unknown[];
  /** Anthropic only: the `system` a leading system message renders as. */
  system?: unknown;
  /** The page's messages: [offset, end) of `count`. */
  offset: number;
  end: number;
  count: number;
  /** The index of the first message of the next page; absent on the last. */
  next?: number;
}

export type RecallResult = RecallText | RecallMessages;

/**
 * The original content of `ref` in `store`, or one page of it (see the module comment). Throws
 * CtxfoldError: E_BAD_REF, E_REF_NOT_FOUND, E_CORRUPT, E_BAD_INPUT (path: the option), and for
 * messages the adapter's errors when they cannot be rendered in `format`.
 */
export function recall(store: OffloadStore, ref: string, options: RecallOptions = {}): RecallResult {
  const { offset, maxBytes, format } = checkRecallOptions(options);
  const { full, kind } = checkRef(store, ref);
  if (kind === "history" || kind === "message") {
    const refs = kind === "history" ? indexedRefs(store, full) : [full];
    return messagesPage(store, full, kind, refs, offset, maxBytes, format);
  }
  return textPage(full, kind, store.get(full), offset, maxBytes);
}

/** RecallOptions checked, defaults filled; E_BAD_INPUT naming the option (a tool checks its own at construction). */
export function checkRecallOptions(options: RecallOptions): { offset: number; maxBytes: number; format: Format } {
  if (typeof options !== "object" || options === null) throw badValueError("options", "an object { offset?, maxBytes?, format? }", options);
  const { offset = 0, maxBytes = kDefaultRecallPageBytes, format = "openai-chat" } = options;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) throw badValueError("offset", "a non-negative integer", offset);
  if (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes < kMinPageBytes)
    throw badValueError("maxBytes", `an integer of at least ${kMinPageBytes}`, maxBytes);
  if (!(kFormats as readonly unknown[]).includes(format)) throw badValueError("format", `one of ${kFormats.join(", ")}`, format);
  return { offset, maxBytes, format };
}

/** `ref` as a ref of `store` (a bare name gets the store's prefix), and its kind; E_BAD_REF otherwise. */
function checkRef(store: OffloadStore, ref: unknown): { full: string; kind: string } {
  if (typeof ref !== "string") throw new CtxfoldError("E_BAD_REF", `expected a ref (a string), got ${ref === null ? "null" : typeof ref}`, { path: "ref" });
  const trimmed = ref.trim();
  const parts = parseRef(trimmed);
  const shape = `${store.prefix}/${kNameShape}`;
  if (!parts) throw new CtxfoldError("E_BAD_REF", `not a ref (expected ${shape}): ${shownValue(ref)}`, { path: "ref" });
  if (parts.prefix !== undefined && parts.prefix !== store.prefix) {
    throw new CtxfoldError(
      "E_BAD_REF",
      `${shownValue(trimmed)} is a ref of another store: this store's refs start with ${JSON.stringify(`${store.prefix}/`)}`,
      { path: "ref" },
    );
  }
  const full = `${store.prefix}/${parts.name}`;
  if (!store.has(full)) throw new CtxfoldError("E_REF_NOT_FOUND", `nothing is stored under ${JSON.stringify(full)}`, { path: "ref" });
  return { full, kind: parts.kind };
}

/** Length of the UTF-8 sequence a lead byte opens (0 for a byte that opens none). */
const sequenceLength = (b: number): number => (b >= 0xf0 && b <= 0xf7 ? 4 : b >= 0xe0 ? (b <= 0xef ? 3 : 0) : b >= 0xc0 ? 2 : b < 0x80 ? 1 : 0);

/**
 * `at` moved back to the first byte of the UTF-8 sequence it falls inside, if any: at most three
 * continuation bytes back, to a lead byte whose sequence reaches past `at`. Elsewhere (ASCII, a
 * boundary, bytes that are not UTF-8) `at` itself.
 */
function sequenceStart(bytes: Uint8Array, at: number): number {
  if (at <= 0 || at >= bytes.length || (bytes[at] & 0xc0) !== 0x80) return at;
  for (let lead = at - 1; lead >= Math.max(0, at - 3); lead--) {
    const b = bytes[lead];
    if ((b & 0xc0) === 0x80) continue;
    return lead + sequenceLength(b) > at ? lead : at;
  }
  return at;
}

function textPage(ref: string, kind: string, bytes: Uint8Array, offset: number, maxBytes: number): RecallText {
  const size = bytes.length;
  if (offset > size || (offset === size && size > 0)) {
    throw new CtxfoldError("E_BAD_INPUT", `offset ${offset} is past the end of ${ref} (${size} bytes: offsets 0 to ${Math.max(0, size - 1)})`, {
      path: "offset",
    });
  }
  const start = sequenceStart(bytes, offset);
  let end = Math.min(size, start + maxBytes);
  if (end < size) end = sequenceStart(bytes, end);
  const page = bytes.subarray(start, end);
  const text = decodeText(page);
  const exact = Buffer.compare(encodeText(text), page) === 0;
  return {
    type: "text",
    ref,
    kind,
    text: exact ? text : Buffer.from(page).toString("base64"),
    encoding: exact ? "utf-8" : "base64",
    offset: start,
    end,
    size,
    ...(end < size ? { next: end } : {}),
  };
}

/** The UTF-8 length of the JSON of what `format` renders `m` as alone (a page's size measure). */
function renderedBytes(m: Message, format: Format): number {
  return Buffer.byteLength(JSON.stringify(kAdapters[format].render([m])));
}

function messagesPage(
  store: OffloadStore,
  ref: string,
  kind: string,
  refs: readonly string[],
  offset: number,
  maxBytes: number,
  format: Format,
): RecallMessages {
  const count = refs.length;
  if (offset > count || (offset === count && count > 0)) {
    throw new CtxfoldError("E_BAD_INPUT", `offset ${offset} is past the last message of ${ref} (${count} messages: offsets 0 to ${Math.max(0, count - 1)})`, {
      path: "offset",
    });
  }
  const page: Message[] = [];
  let bytes = 0;
  let end = offset;
  // Whole exchanges: a message and the tool messages after it (the results of its calls) go on a
  // page together; one that would take the page past maxBytes starts the next (alone, if larger).
  const read = (i: number) => getMessage(store, refs[i], `${ref}.refs[${i}]`);
  let next = end < count ? read(end) : undefined;
  while (next !== undefined) {
    const unit = [next];
    next = undefined;
    for (let i = end + 1; i < count; i++) {
      const m = read(i);
      if (m.role !== "tool") {
        next = m;
        break;
      }
      unit.push(m);
    }
    const size = unit.reduce((n, m) => n + renderedBytes(m, format), 0);
    if (page.length > 0 && bytes + size > maxBytes) break;
    page.push(...unit);
    bytes += size;
    end += unit.length;
  }
  const wire = kAdapters[format].render(page);
  const { messages, system } = Array.isArray(wire) ? { messages: wire as unknown[], system: undefined } : (wire as { messages: unknown[]; system?: unknown });
  return {
    type: "messages",
    ref,
    kind,
    format,
    messages,
    ...(system !== undefined ? { system } : {}),
    offset,
    end,
    count,
    ...(end < count ? { next: end } : {}),
  };
}
