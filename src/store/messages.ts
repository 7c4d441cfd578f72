import { CtxfoldError } from "../errors.js";
import { Message } from "../model/schema.js";
import { encodeText, type OffloadStore } from "./offload.js";

/**
 * What an index of stored messages looks like (the `history_…json` a summary names): the
 * messages' refs in order, or, past kChunk messages, the refs of indexes of kChunk messages
 * each (the last may hold fewer).
 */
type MessageIndex = { ctxfold: "messages"; refs: string[] } | { ctxfold: "messages"; chunks: string[]; count: number };

/**
 * Messages per chunk of a long index. Chunks start at multiples of kChunk, so a conversation
 * compacted again, whose removed messages grew at the end, reuses every full chunk: an epoch
 * writes its new chunk and a short top index instead of an index of the whole history.
 */
const kChunk = 256;
/**
 * Chunks written per store, by the message object they start with (a hit is checked ref by
 * ref); held no longer than that message, so a batch over many runs does not accumulate them.
 */
const kChunksWritten = new WeakMap<OffloadStore, WeakMap<Message, { refs: string[]; ref: string }>>();

const kStored = new WeakMap<OffloadStore, WeakMap<Message, string>>();
/** Messages rendered ahead of time by prepareMessages (dropped once stored). */
const kRendered = new WeakMap<Message, Uint8Array>();

/** The bytes putMessages stores for a message: its JSON as UTF-8 (WTF-8 for lone surrogates). */
const render = (m: Message): Uint8Array => encodeText(JSON.stringify(m));

/** A store that redacts the texts it keeps: putMessages then redacts each string of a message. */
export interface TextRedactor {
  redact(text: string): string;
}

/** `m` as putMessages stores it in `store`: redacted string by string where the store redacts. */
function storedBytes(store: OffloadStore, m: Message): Uint8Array {
  const redactor = store as Partial<TextRedactor>;
  if (typeof redactor.redact !== "function") return kRendered.get(m) ?? render(m);
  return encodeText(JSON.stringify(m, (_key, value: unknown) => (typeof value === "string" ? redactor.redact!(value) : value)));
}

/**
 * Renders messages to the bytes putMessages stores, ahead of time (a session does it in idle
 * time, so that the epoch that removes them only hashes and saves). The bytes are kept beside
 * the message object until putMessages stores them.
 */
export function prepareMessages(messages: readonly Message[]): void {
  for (const m of messages) if (!kRendered.has(m)) kRendered.set(m, render(m));
}

/**
 * Stores messages removed by a compaction so that they can be given back: each message as its
 * own JSON (kind "message"), memoised per store and message object — messages are never
 * mutated, so a conversation that grew and is compacted again stores only its new messages —
 * and one index (kind "history") listing them in order, chunked past kChunk messages. (Stores
 * only grow, so a ref remembered for a store stays valid in it.) An item may instead be the ref
 * of a message already stored (e.g. one of `indexedRefs` of an index an earlier compaction
 * wrote): a merge that takes an earlier summary's place lists the originals that summary stood
 * for where it stood, so one index names them all, in order. Returns the index ref and each
 * item's ref (all resolve in `store`); `getMessages(store, ref)` reads them back.
 */
export function putMessages(store: OffloadStore, items: readonly (Message | string)[]): { ref: string; refs: string[] } {
  let known = kStored.get(store);
  if (!known) kStored.set(store, (known = new WeakMap()));
  const refs = items.map((m) => {
    if (typeof m === "string") return m;
    let ref = known.get(m);
    if (ref === undefined) {
      ref = store.put(storedBytes(store, m), { kind: "message", ext: "json" });
      known.set(m, ref);
      kRendered.delete(m);
    }
    return ref;
  });
  return { ref: putIndex(store, items, refs), refs };
}

function putIndex(store: OffloadStore, items: readonly (Message | string)[], refs: string[]): string {
  const put = (index: MessageIndex) => store.put(JSON.stringify(index), { kind: "history", ext: "json" });
  if (refs.length <= kChunk) return put({ ctxfold: "messages", refs });
  let written = kChunksWritten.get(store);
  if (!written) kChunksWritten.set(store, (written = new WeakMap()));
  const chunks: string[] = [];
  for (let k = 0; k < refs.length; k += kChunk) {
    const part = refs.slice(k, k + kChunk);
    // A chunk that starts with a ref, not a message object, has nothing to be remembered by.
    const starter = typeof items[k] === "string" ? undefined : (items[k] as Message);
    const hit = starter && written.get(starter);
    if (hit && hit.refs.length === part.length && hit.refs.every((r, i) => r === part[i])) {
      chunks.push(hit.ref);
      continue;
    }
    const ref = put({ ctxfold: "messages", refs: part });
    if (starter) written.set(starter, { refs: part, ref });
    chunks.push(ref);
  }
  return put({ ctxfold: "messages", chunks, count: refs.length });
}

/** The messages an index made by putMessages names, in order, validated. */
export function getMessages(store: OffloadStore, ref: string): Message[] {
  return indexedRefs(store, ref).map((r, i) => getMessage(store, r, `${ref}.refs[${i}]`));
}

/**
 * One message putMessages stored (a ref an index names), validated: E_SCHEMA at `path` (the
 * ref itself by default) when its bytes are not a message's JSON.
 */
export function getMessage(store: OffloadStore, ref: string, path = ref): Message {
  return parseMessage(store.getText(ref), ref, path);
}

/** A stored message's text (as getMessage reads it from `ref`), validated: E_SCHEMA at `path` when it is not a message's JSON. */
export function parseMessage(text: string, ref: string, path = ref): Message {
  const parsed = Message.safeParse(parseJson(text));
  if (!parsed.success) throw new CtxfoldError("E_SCHEMA", `${ref} is not a stored message`, { path });
  return parsed.data;
}

/** JSON text's value, or undefined where it is not JSON (the caller says what it expected). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The refs of the stored messages an index made by putMessages names, in order (its chunks read through). */
export function indexedRefs(store: OffloadStore, ref: string): string[] {
  return readIndex(store, ref, true);
}

function readIndex(store: OffloadStore, ref: string, top: boolean): string[] {
  const index = parseJson(store.getText(ref)) as { ctxfold?: unknown; refs?: unknown; chunks?: unknown; count?: unknown } | null | undefined;
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((r) => typeof r === "string");
  if (top && index?.ctxfold === "messages" && strings(index.chunks)) {
    const out = index.chunks.flatMap((chunk) => readIndex(store, chunk, false));
    if (out.length !== index.count)
      throw new CtxfoldError("E_BAD_REF", `${ref} names ${String(index.count)} messages, its chunks hold ${out.length}`, { path: `${ref}.count` });
    return out;
  }
  if (index?.ctxfold !== "messages" || !strings(index.refs)) {
    throw new CtxfoldError("E_BAD_REF", `${ref} is not an index of stored messages`, { path: ref });
  }
  return index.refs;
}
