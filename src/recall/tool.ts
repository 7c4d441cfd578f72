/**
 * What the recall tools of every front end share (the AI SDK tool, the LangChain tool, the
 * `ctxfold mcp` server): their names, the descriptions a model reads, the input schemas (zod,
 * which all three accept), and the text a model gets back for a page or a search.
 *
 * Decisions:
 * - The tool is named `recall` everywhere, and the default recall hint names it so: the AI SDK
 *   middleware recognises the tool by that name to turn the hint on.
 * - What the model reads of a page is the page itself, then, only when there is more, one line
 *   saying which part it saw and the offset to pass for the next; a history page is its
 *   messages' JSON in the tool's provider format. The structured page (RecallResult) stays the
 *   tool's output for the program around the model.
 */
import { z } from "zod";
import type { Format } from "../adapters/index.js";
import { badValueError } from "../errors.js";
import { ScopeRecords, scopedStore, type OffloadStore, type RunSelector } from "../store/index.js";
import { runSelectorOf } from "../store/scope-record.js";
import { checkRecallOptions, type RecallResult } from "./recall.js";
import type { SearchEntry } from "./search.js";

/** The recall tool's name in every front end (and in the default recall hint). */
export const kRecallToolName = "recall";
/** The search tool's name (`ctxfold mcp`). */
export const kSearchToolName = "search";

/** What a model reads about the recall tool. */
export const kRecallToolDescription =
  "Read content that was left out of this conversation to save room. Pass a ref exactly as it appears " +
  "(like workspace/outputs/output_0123456789abcdef0123456789abcdef.txt). Long content comes in pages: when the result says " +
  "there is more, call again with the offset it gives. A history ref (history_….json) gives the removed messages, a message ref (message_….json) one of them.";

/** What a model reads about the search tool. */
export const kSearchToolDescription =
  "Find refs of content left out of this conversation: words to look for (every word is matched on its own, " +
  "case-insensitively, in each stored text and its ref). Answers one line per ref, best first; read one with recall.";

/** The recall tool's input: a ref, and where to continue. */
export const kRecallInputShape = {
  ref: z.string().min(1).describe("A ref exactly as it appears in the conversation, e.g. workspace/outputs/output_0123456789abcdef0123456789abcdef.txt"),
  offset: z.number().int().min(0).optional().describe("Where to continue: the offset a previous page gave for the next one. Omit it for the start."),
};
export const RecallToolInput = z.object(kRecallInputShape);
export type RecallToolInput = z.infer<typeof RecallToolInput>;

/** The search tool's input. */
export const kSearchInputShape = {
  query: z.string().describe("Words to look for, e.g. a file name, an error, a command"),
  limit: z.number().int().min(1).max(100).optional().describe("At most this many refs (default 20)"),
};

/** The line saying which part of a ref a page is and how to get the rest; undefined on a whole or last page. */
export function pageNote(page: RecallResult): string | undefined {
  if (page.next === undefined) return undefined;
  const what = page.type === "text" ? `bytes ${page.offset}–${page.end} of ${page.size}` : `messages ${page.offset}–${page.end - 1} of ${page.count}`;
  return `[ctxfold: ${what} shown; call recall with {"ref": ${JSON.stringify(page.ref)}, "offset": ${page.next}} for the rest]`;
}

/** A page as the text a model reads (see the module comment). */
export function pageBody(page: RecallResult): string {
  if (page.type === "messages") return JSON.stringify(page.system === undefined ? page.messages : { system: page.system, messages: page.messages });
  return page.encoding === "base64" ? `[ctxfold: not text; the bytes in base64]\n${page.text}` : page.text;
}

/** A page and its note, as one text. */
export function pageText(page: RecallResult): string {
  const note = pageNote(page);
  return note === undefined ? pageBody(page) : `${pageBody(page)}\n\n${note}`;
}

/** Search entries as the text a model reads: one line per ref, and its matching line when there is one. */
export function searchText(entries: readonly SearchEntry[]): string {
  if (entries.length === 0) return "no stored content matches";
  return entries
    .map((e) => `${e.ref} (${e.kind}, ${e.size} bytes): ${e.firstLine}${e.match && e.match !== e.firstLine ? `\n    … ${e.match}` : ""}`)
    .join("\n");
}

/**
 * What a recall tool may reach of its store (RecallToolOptions.scope):
 * - `{ refs }`: these refs (full, or bare names), and through a history ref the messages it
 *   lists. Read again at each call, so a Set the program adds each compaction's `refs` to (the
 *   compaction result's `refs` of one conversation) keeps the tool current.
 * - `{ run: id }` or `{ file, line }`: the refs `ctxfold compact --offload-dir` recorded for that
 *   run in the store's directory (a pack or file store over it: the store must have a `dir`),
 *   records written since read at each call.
 * Outside it, a ref is answered as one not stored (E_REF_NOT_FOUND, the same message): the tool
 * neither reads nor confirms it.
 */
export type RecallScope = { refs: Iterable<string> } | RunSelector;

/** What a recall tool is made with. */
export interface RecallToolOptions {
  /** The store compaction offloads to: the one the compactor or integration was given (`store`). */
  store: OffloadStore;
  /**
   * What of the store the tool reaches (RecallScope): one conversation's refs, or one run's.
   * @default every ref the store holds, of every run and conversation stored in it
   */
  scope?: RecallScope;
  /** The provider format a history ref's messages come back in. @default the framework's own ("ai-sdk", "langchain") */
  format?: Format;
  /** A page's size in bytes (see recall; keep a page well within the budget, or the next call compacts it away). @default 16384 */
  maxBytes?: number;
}

/**
 * A recall tool's options checked (E_BAD_INPUT naming the field), with `format` defaulting to
 * `fallback`; `reach()` is the store a call reads, through the scope when there is one.
 */
export function checkRecallToolOptions(
  options: RecallToolOptions,
  fallback: Format,
): { store: OffloadStore; reach: () => OffloadStore; format: Format; maxBytes: number } {
  if (typeof options !== "object" || options === null) throw badValueError("options", "an object { store, format?, maxBytes? }", options);
  const store = options.store as Partial<OffloadStore> | undefined;
  if (typeof store !== "object" || store === null || typeof store.get !== "function" || typeof store.has !== "function" || typeof store.prefix !== "string") {
    throw badValueError("store", "an offload store (createMemoryStore, createFsStore, createPackStore, or the compactor's store)", store);
  }
  const { maxBytes, format } = checkRecallOptions({ maxBytes: options.maxBytes, format: options.format ?? fallback });
  return { store: options.store, reach: scopeReach(options.store, options.scope), format, maxBytes };
}

/** The store each call reads under `scope` (RecallScope), checked now (E_BAD_INPUT, path "scope"). */
function scopeReach(store: OffloadStore, scope: RecallScope | undefined): () => OffloadStore {
  if (scope === undefined) return () => store;
  const s = scope as Partial<{ refs: unknown; run: unknown; file: unknown; line: unknown }> | null;
  const expected = "{ refs: [refs] }, { run: id } or { file, line }";
  if (typeof s !== "object" || s === null) throw badValueError("scope", expected, scope);
  if ("refs" in s) {
    const refs = s.refs as Iterable<unknown> | undefined;
    if (typeof refs !== "object" || refs === null || typeof (refs as Iterable<unknown>)[Symbol.iterator] !== "function")
      throw badValueError("scope.refs", "an iterable of refs (an array or a Set)", refs);
    return () =>
      scopedStore(
        store,
        [...refs].filter((r): r is string => typeof r === "string"),
      );
  }
  const selector = runSelectorOf(s);
  if (!selector) throw badValueError("scope", expected, scope);
  const dir = (store as { dir?: unknown }).dir;
  if (typeof dir !== "string")
    throw badValueError(
      "scope",
      "{ refs } for a store with no directory (a run's scope is read from the records `ctxfold compact` writes in its directory)",
      scope,
    );
  const records = new ScopeRecords(dir);
  return () => scopedStore(store, records.refsOf(selector, store.prefix));
}
