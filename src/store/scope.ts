/**
 * Store scopes: what part of a shared offload store one reader may reach. A store holds the
 * originals of every run compacted into it; an agent's recall tool (or `ctxfold mcp --run`)
 * confined to a scope reads and finds only the refs of its own run or conversation.
 *
 * Decisions:
 * - A scope is a set of refs (an allow-list), closed over message indexes: a history ref in it
 *   brings the refs of the messages (and chunk indexes) it lists, nothing else. It is never
 *   widened by what stored text names: a run whose messages mention another run's ref does not
 *   get that ref.
 * - Outside its scope, a scoped store answers exactly as for a ref it does not hold: `has` is
 *   false, `get` throws E_REF_NOT_FOUND with the message of an absent ref, `refs()` leaves it
 *   out. A reader cannot read, list, count or confirm what is out of scope; a malformed ref is
 *   E_BAD_REF as before (that says nothing about what is stored).
 * - A scoped store is read-only (E_BAD_INPUT on put): it is a reader's view; compaction writes
 *   to the store itself.
 * - `ctxfold compact --offload-dir DIR` records each compacted run's scope in DIR
 *   (scope-record.ts): that is how a server over a shared DIR finds a run's refs.
 */
import { CtxfoldError } from "../errors.js";
import { parseRef } from "./names.js";
import { refNotFound, storeRefs, type OffloadHint, type OffloadStore } from "./offload.js";

/**
 * A store seen through a scope: only the refs `allowed` holds (closed over message indexes, see
 * the module comment) can be read, found or confirmed. `allowed` is read once, here.
 */
export class ScopedStore implements OffloadStore {
  readonly #allowed: ReadonlySet<string>;

  constructor(
    readonly inner: OffloadStore,
    allowed: Iterable<string>,
  ) {
    this.#allowed = closeOverIndexes(inner, allowed);
  }

  get prefix(): string {
    return this.inner.prefix;
  }

  /** How many refs the scope allows (held or not). */
  get size(): number {
    return this.#allowed.size;
  }

  /** Whether `ref` is in the scope (whether or not the store holds it). */
  allows(ref: string): boolean {
    return this.#allowed.has(ref);
  }

  put(_data: Uint8Array | string, _hint?: OffloadHint): string {
    throw new CtxfoldError("E_BAD_INPUT", "a scoped store is read-only: compaction writes to the store it scopes", { path: "store" });
  }

  get(ref: string): Uint8Array {
    return this.inner.get(this.#check(ref));
  }

  getText(ref: string): string {
    return this.inner.getText(this.#check(ref));
  }

  has(ref: string): boolean {
    return this.#allowed.has(ref) && this.inner.has(ref);
  }

  /** The inner store's refs that are in the scope, in its order. */
  refs(): string[] {
    return storeRefs(this.inner).filter((r) => this.#allowed.has(r));
  }

  flush(): void {
    this.inner.flush();
  }

  /**
   * `ref` when in the scope. Out of it: a ref the inner store could not have made goes to the
   * inner store for its own E_BAD_REF (it reads nothing for one); any other is absent.
   */
  #check(ref: string): string {
    if (this.#allowed.has(ref)) return ref;
    if (!isOwnRef(this.inner, ref)) return ref;
    throw refNotFound(ref);
  }
}

/** A read-only view of `store` confined to the refs `allowed` (see ScopedStore). */
export function scopedStore(store: OffloadStore, allowed: Iterable<string>): ScopedStore {
  return new ScopedStore(store, allowed);
}

/** Whether `ref` is a string naming a store name under `store`'s prefix. */
function isOwnRef(store: OffloadStore, ref: unknown): boolean {
  if (typeof ref !== "string") return false;
  const parts = parseRef(ref);
  return parts !== undefined && parts.prefix === store.prefix;
}

/**
 * `allowed` with bare names given the store's prefix, and every message index in it (a history
 * ref, `history_….json`) followed to the refs and chunk indexes it lists. Only the index's own
 * lists are followed: refs a message's text names are not.
 */
function closeOverIndexes(store: OffloadStore, allowed: Iterable<string>): Set<string> {
  const out = new Set<string>();
  const queue: string[] = [];
  const add = (ref: unknown) => {
    if (typeof ref !== "string") return;
    const parts = parseRef(ref);
    if (!parts || (parts.prefix !== undefined && parts.prefix !== store.prefix)) return;
    const full = `${store.prefix}/${parts.name}`;
    if (out.has(full)) return;
    out.add(full);
    if (parts.kind === "history") queue.push(full);
  };
  for (const ref of allowed) add(ref);
  while (queue.length > 0) {
    const index = listedRefs(store, queue.pop()!);
    for (const ref of index) add(ref);
  }
  return out;
}

/** The refs and chunks a message index lists (none when `ref` is absent or not such an index). */
function listedRefs(store: OffloadStore, ref: string): unknown[] {
  if (!store.has(ref)) return [];
  let index: unknown;
  try {
    index = JSON.parse(store.getText(ref));
  } catch {
    // Not JSON, or damaged (E_CORRUPT): no index to follow. Damage is for the reader of the ref to see (recall's E_CORRUPT).
    return [];
  }
  if (typeof index !== "object" || index === null || (index as { ctxfold?: unknown }).ctxfold !== "messages") return [];
  const { refs, chunks } = index as { refs?: unknown; chunks?: unknown };
  return [...(Array.isArray(refs) ? refs : []), ...(Array.isArray(chunks) ? chunks : [])];
}
