/**
 * Search over what an offload store holds: which refs a model could recall for a few words, when
 * the ref it needs is not in front of it (an output summarised away, a file read long ago).
 *
 * Decisions:
 * - The match is plain and predictable, not semantic: the query is cut into terms at white
 *   space, each compared case-insensitively as a substring of the ref (so a kind such as `output`
 *   or a hash prefix matches) and of the entry's text. An entry that matches no term is left
 *   out; the rest rank by how many distinct terms they match, then by how often the terms occur
 *   in their text (each term counted up to kMaxCount times, so one huge log does not outrank an
 *   entry matching more terms), then in the store's order. An empty query lists the first entries
 *   in the store's order (reading only those).
 * - An entry's text is what recall would show of it: the decoded content; for a stored message
 *   its role and texts (message texts, not its JSON keys, which every message shares); for a
 *   history index nothing but its ref (it holds only refs), with "N messages" as its line.
 * - Every entry is read through the store's verified read, like recall: a tampered entry fails
 *   the search with E_CORRUPT naming where it is, rather than being matched, shown or skipped
 *   in silence (damage is for the operator to see, as everywhere in the stores).
 * - `limit` bounds the answer (20 by default): a model pays for every line it reads.
 */
import { badValueError, CtxfoldError } from "../errors.js";
import { nextTurn } from "../event-loop.js";
import { messageTexts } from "../model/texts.js";
import { decodeText, indexedRefs, parseRef, storeRefs, type OffloadStore } from "../store/index.js";
import { parseMessage } from "../store/messages.js";

/** Entries a search returns when the caller gives no limit. */
export const kDefaultSearchLimit = 20;
/** Occurrences of one term counted per entry (see the module comment). */
const kMaxCount = 100;
/** Characters of an entry's line shown. */
const kLineChars = 160;

export interface SearchOptions {
  /** At most this many entries, best first. @default 20 */
  limit?: number;
}

/** One stored entry a search found. */
export interface SearchEntry {
  ref: string;
  /** The kind its name carries: output, args, text, history or message (compaction's), or read, list, search, page or shell (a StepReducer's own offloads); docs/recall.md, "What a ref names". */
  kind: string;
  /** Stored bytes. */
  size: number;
  /** Its first non-blank line (for a message, `role: ` and its first line; for a history, how many messages it names), cut to 160 characters. */
  firstLine: string;
  /** The first line of its text holding a query term, when one does (cut the same way). */
  match?: string;
  /** How many distinct query terms it matched. */
  terms: number;
}

/**
 * The entries of `store` that match `query`, best first (see the module comment). Throws
 * E_BAD_INPUT for a query that is no string, a bad limit, or a store that cannot list its refs;
 * E_CORRUPT when an entry fails its verified read.
 */
export function searchStore(store: OffloadStore, query: string, options: SearchOptions = {}): SearchEntry[] {
  const steps = searching(store, query, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * searchStore's answer, read in slices: the search yields to the event loop (nextTurn)
 * before it starts and after each slice of about `sliceMs` milliseconds of reading entries, so
 * a server answers the requests that came with it (recalls) first, and others while a search of
 * a large store goes on. The store is the one given, read as it is between slices. Throws as
 * searchStore does (a rejected promise).
 */
export async function searchStoreInSlices(store: OffloadStore, query: string, options: SearchOptions = {}, sliceMs = kSliceMs): Promise<SearchEntry[]> {
  const steps = searching(store, query, options);
  await nextTurn();
  let started = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - started >= sliceMs) {
      await nextTurn();
      started = performance.now();
    }
  }
}

/** A slice of a search in the background (searchStoreInSlices): short beside a recall's answer, long beside a slice's overhead. */
const kSliceMs = 5;

/** The search, yielding after each entry it reads (see searchStore for the answer). */
function* searching(store: OffloadStore, query: string, options: SearchOptions): Generator<void, SearchEntry[]> {
  if (typeof query !== "string") throw badValueError("query", "a string", query);
  if (typeof options !== "object" || options === null) throw badValueError("options", "an object { limit? }", options);
  const limit = options.limit ?? kDefaultSearchLimit;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) throw badValueError("limit", "a positive integer", limit);
  const terms = [...new Set(query.toLowerCase().split(/\s+/).filter(Boolean))];
  const found: { entry: SearchEntry; count: number; order: number }[] = [];
  const refs = storeRefs(store);
  for (let order = 0; order < refs.length; order++) {
    const ref = refs[order];
    const parts = parseRef(ref);
    // An empty query lists entries in store order: the first `limit` are the answer.
    if (!parts || (terms.length === 0 && found.length >= limit)) continue;
    const bytes = store.get(ref);
    const { text, firstLine } = entryText(store, ref, parts.kind, bytes);
    const lower = text.toLowerCase();
    const name = ref.toLowerCase();
    let matched = 0;
    let count = 0;
    let first = -1;
    for (const term of terms) {
      const n = occurrences(lower, term);
      if (n > 0 && (first < 0 || lower.indexOf(term) < first)) first = lower.indexOf(term);
      if (n > 0 || name.includes(term)) matched++;
      count += n;
    }
    yield;
    if (terms.length > 0 && matched === 0) continue;
    const entry: SearchEntry = { ref, kind: parts.kind, size: bytes.length, firstLine: cut(firstLine), terms: matched };
    if (first >= 0) entry.match = cut(lineAt(text, lower, first));
    found.push({ entry, count, order });
  }
  found.sort((a, b) => b.entry.terms - a.entry.terms || b.count - a.count || a.order - b.order);
  return found.slice(0, limit).map((f) => f.entry);
}

/** What a search matches and shows of an entry (see the module comment). */
function entryText(store: OffloadStore, ref: string, kind: string, bytes: Uint8Array): { text: string; firstLine: string } {
  try {
    if (kind === "history") return { text: "", firstLine: `${indexedRefs(store, ref).length} messages` };
    if (kind === "message") {
      const m = parseMessage(decodeText(bytes), ref);
      const text = messageTexts([m]).join("\n");
      return { text: `${m.role}\n${text}`, firstLine: `${m.role}: ${firstLineOf(text)}` };
    }
  } catch (err) {
    // Bytes under these kinds that are no index or message (a store used by other code): shown as text.
    if (!CtxfoldError.isInstance(err) || (err.code !== "E_BAD_REF" && err.code !== "E_SCHEMA")) throw err;
  }
  const text = decodeText(bytes);
  return { text, firstLine: firstLineOf(text) };
}

function occurrences(text: string, term: string): number {
  let n = 0;
  for (let at = text.indexOf(term); at >= 0 && n < kMaxCount; at = text.indexOf(term, at + term.length)) n++;
  return n;
}

/** The first line of `text` that is not blank, trimmed ("" when none). */
function firstLineOf(text: string): string {
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end < 0 ? text.length : end).trim();
    if (line !== "") return line;
    if (end < 0) break;
    start = end + 1;
  }
  return "";
}

/**
 * The line of `text` that holds index `at` of `lower` (its lower-cased form), trimmed. Found by
 * its number: lower-casing may change a line's length, never its line breaks.
 */
function lineAt(text: string, lower: string, at: number): string {
  let line = 0;
  for (let i = lower.indexOf("\n"); i >= 0 && i < at; i = lower.indexOf("\n", i + 1)) line++;
  let start = 0;
  for (let k = 0; k < line; k++) start = text.indexOf("\n", start) + 1;
  const end = text.indexOf("\n", start);
  return text.slice(start, end < 0 ? text.length : end).trim();
}

const cut = (line: string): string => (line.length > kLineChars ? `${line.slice(0, kLineChars - 1)}…` : line);
