/**
 * The store of a SessionPool whose options name none: the originals its compactions remove, in
 * memory, bounded by bytes.
 *
 * Decisions:
 * - Per conversation. Each conversation's originals go to a memory store of its own (puts are
 *   attributed to the conversation whose compaction makes them: SessionPool.compact runs it in
 *   the conversation's scope, an AsyncLocalStorage, so concurrent conversations of one pool
 *   keep apart across their awaits). Content two conversations share is held once per
 *   conversation: the bound counts what is held, whoever holds it.
 * - Bounded. `maxBytes` (IntegrationOptions.maxStoreBytes) bounds the bytes held, at every
 *   put: past it, whole conversations' originals go, least recently compacted first. A
 *   conversation that alone passes the bound starts its originals afresh (its earlier ones
 *   go), and an original larger than the bound is not kept. A conversation the pool forgets
 *   (maxSessions) takes its originals with it.
 * - What goes is gone: a ref in a prompt sent earlier no longer resolves here (`has` is false,
 *   `get` throws E_REF_NOT_FOUND). Nothing in the compactor reads its store back, so eviction
 *   never changes a compaction; it only bounds what a reader of this store could still find. A
 *   caller who reads originals (a recall tool, an audit) passes a store of its own
 *   (`store: createMemoryStore()`, or createPackStore for disk), which is then its own to bound.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createMemoryStore, type MemoryOffloadStore, type OffloadHint, type OffloadStore } from "../store/index.js";
import { refNotFound } from "../store/offload.js";

/** The default bound of a pool's own store: 64 MiB. */
export const kDefaultMaxStoreBytes = 64 * 1024 * 1024;

/** A pool's own store: each conversation's originals, bounded by bytes (see the module comment). */
export class ConversationStore implements OffloadStore {
  readonly prefix: string;
  /** Each conversation's store, least recently compacted first. */
  readonly #stores = new Map<string, MemoryOffloadStore>();
  readonly #scope = new AsyncLocalStorage<string>();
  #bytes = 0;

  constructor(readonly maxBytes: number = kDefaultMaxStoreBytes) {
    this.prefix = createMemoryStore().prefix;
  }

  /** Bytes held, over every conversation: at most `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Conversations whose originals are held. */
  get conversations(): number {
    return this.#stores.size;
  }

  /** Runs `fn` (a compaction) with its puts going to conversation `key`, which becomes the most recent. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const s = this.#stores.get(key);
    if (s) {
      this.#stores.delete(key);
      this.#stores.set(key, s);
    }
    return this.#scope.run(key, fn);
  }

  /** Drops conversation `key`'s originals (the pool forgot it). */
  drop(key: string): void {
    const s = this.#stores.get(key);
    if (!s) return;
    this.#stores.delete(key);
    this.#bytes -= s.size;
  }

  put(data: Uint8Array | string, hint?: OffloadHint): string {
    const key = this.#scope.getStore() ?? "";
    const ref = this.#putIn(key, data, hint);
    // Other conversations' originals go, least recent first; then the current one's earlier ones.
    for (const other of this.#stores.keys()) {
      if (this.#bytes <= this.maxBytes) return ref;
      if (other !== key) this.drop(other);
    }
    if (this.#bytes <= this.maxBytes) return ref;
    this.drop(key);
    this.#putIn(key, data, hint);
    if (this.#bytes > this.maxBytes) this.drop(key); // larger than the bound on its own
    return ref;
  }

  /** Puts `data` into conversation `key`'s store (made on first use), counting what it adds. */
  #putIn(key: string, data: Uint8Array | string, hint?: OffloadHint): string {
    let s = this.#stores.get(key);
    if (!s) this.#stores.set(key, (s = createMemoryStore({ prefix: this.prefix })));
    const before = s.size;
    const ref = s.put(data, hint);
    this.#bytes += s.size - before;
    return ref;
  }

  #holder(ref: string): MemoryOffloadStore | undefined {
    for (const s of this.#stores.values()) if (s.has(ref)) return s;
    return undefined;
  }

  get(ref: string): Uint8Array {
    return this.#read(ref).get(ref);
  }

  getText(ref: string): string {
    return this.#read(ref).getText(ref);
  }

  has(ref: string): boolean {
    return this.#holder(ref) !== undefined;
  }

  /** The store holding `ref`, or the error a memory store gives for it (E_BAD_REF, E_REF_NOT_FOUND). */
  #read(ref: string): MemoryOffloadStore {
    const s = this.#holder(ref);
    if (s) return s;
    createMemoryStore({ prefix: this.prefix }).get(ref);
    throw refNotFound(ref);
  }

  refs(): string[] {
    const out = new Set<string>();
    for (const s of this.#stores.values()) for (const r of s.refs()) out.add(r);
    return [...out];
  }

  /** Nothing to write: every put is held at once. */
  flush(): void {}
}
