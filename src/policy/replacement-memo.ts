/**
 * The replacements a compactor made, by what made them (content hash, target, label): a part
 * compacted once is not stored or summarised again, in later calls of a session as in later runs
 * of a batch. Bounded by entries and by characters, oldest first: a batch of unique runs never
 * hits an old entry, and 50,000 summaries kept whole held ~70 MB in each worker by 1 GB of input.
 * A hit gives what the work would make again, so what is forgotten costs time, never output.
 */

/** A memoised replacement: the text that stands in for an original, and the ref of that original. */
export interface Replacement {
  text: string;
  ref: string;
}

/** Entries kept before the oldest are forgotten. */
const kMemoEntries = 50_000;
/** Characters of keys, texts and refs kept before the oldest are forgotten (~8–16 MB). */
const kMemoChars = 8 << 20;

const charsOf = (key: string, r: Replacement): number => key.length + r.text.length + r.ref.length;

export class ReplacementMemo {
  readonly #entries = new Map<string, Replacement>();
  #chars = 0;

  get size(): number {
    return this.#entries.size;
  }

  /** Characters held (keys, texts and refs). */
  get chars(): number {
    return this.#chars;
  }

  get(key: string): Replacement | undefined {
    return this.#entries.get(key);
  }

  set(key: string, value: Replacement): void {
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#chars -= charsOf(key, old);
      this.#entries.delete(key);
    }
    this.#entries.set(key, value);
    this.#chars += charsOf(key, value);
    while (this.#entries.size > kMemoEntries || (this.#chars > kMemoChars && this.#entries.size > 1)) {
      const [oldest, r] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      this.#chars -= charsOf(oldest, r);
    }
  }
}
