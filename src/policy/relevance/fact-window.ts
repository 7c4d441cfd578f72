/**
 * The facts a ledger ranks, aggregated over its window — the latest removed messages it reads
 * (ledger.ts) — per term (where it was seen, in how many messages, in which latest) and per
 * decision (which latest), with the files shell commands in the window wrote. In a session the
 * window is kept across epochs: each epoch's window is mostly the previous one less its oldest
 * messages plus the newly removed ones, so only those are folded in or out (by message
 * identity); any other window is aggregated afresh. Either way the aggregate is the same as
 * reading the window's messages in order.
 */
import type { Message } from "../../model/schema.js";
import { languageOf } from "../../steps/detect.js";
import { kSeen, messageFacts, type MessageFacts } from "./ledger-facts.js";

/** A term that names a file: an absolute or relative path of two or more parts, or a name with a known file extension. */
export const isFileTerm = (t: string) => /^(?:\.{1,2}\/|~\/|\/)[^/]+\/./.test(t) || (languageOf(t) !== undefined && /\.[A-Za-z]\w*$/.test(t));

/** Targets a shell command writes: redirections, `tee`, and the files of an in-place `sed -i` / `perl -i`. */
function shellWrites(command: string, terms: readonly string[]): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/(?:[^<>&0-9=-]>>?|\btee\s+(?:-a\s+)?)\s*['"]?([^\s'";&|<>()]+)/g))
    if (isFileTerm(m[1]) && m[1] !== "/dev/null") out.push(m[1]);
  if (/\b(?:sed|perl)\s+(?:-\S+\s+)*-[a-z]*i/.test(command)) out.push(...terms.filter(isFileTerm));
  return out;
}

interface Entry {
  message: Message;
  facts: MessageFacts;
  /** Files each of its tool calls wrote by shell (redirections, tee, in-place sed / perl), by call id; only calls that write. */
  shellWrites: Map<string, string[]>;
}

/** Where-seen flag bits a term can carry (kSeen's flags are consecutive bits from 1). */
const kBits = Object.keys(kSeen).length;

export class FactWindow {
  /**
   * Each term's slot in the arrays below: where it was seen (the OR of the kSeen flags of the
   * messages holding it), in how many messages, the latest of them (a position, see `at`), and
   * per flag bit how many of those messages saw it so (so that a message leaving clears only its
   * own flags). Columns rather than an object a term: a window of an epoch at 8k holds thousands.
   */
  readonly #slots = new Map<string, number>();
  #seen = new Int32Array(256);
  #count = new Int32Array(256);
  #last = new Int32Array(256);
  #bits = new Int32Array(256 * kBits);
  /** Slots of terms that left, to reuse. */
  #free: number[] = [];
  /** Each decision of the window: in how many messages, and the latest. */
  readonly decisions = new Map<string, { count: number; last: number }>();
  #entries: Entry[] = [];
  /** The position of the window's first message: positions grow by one per message folded in, never reused. */
  #first = 0;

  /** How many distinct terms the window holds. */
  get termCount(): number {
    return this.#slots.size;
  }

  /** Calls `f` with each term of the window, where it was seen (kSeen flags), in how many messages, and the latest (a position, see `at`). */
  forEachTerm(f: (term: string, seen: number, count: number, last: number) => void): void {
    for (const [t, k] of this.#slots) f(t, this.#seen[k], this.#count[k], this.#last[k]);
  }

  /** How many messages the window holds. */
  get size(): number {
    return this.#entries.length;
  }

  /** The index in the window (0 = oldest) of a position `last` a stat holds. */
  at(last: number): number {
    return last - this.#first;
  }

  /**
   * The files the window's tool calls edited, added to `edited`: every term of the arguments
   * of a call in `editCalls` (the reducer's writes), the files any other call wrote by shell.
   */
  addEdited(edited: Set<string>, editCalls: ReadonlySet<string>): void {
    for (const e of this.#entries) {
      for (const [id, terms] of e.facts.calls) for (const t of editCalls.has(id) ? terms : (e.shellWrites.get(id) ?? [])) edited.add(t);
    }
  }

  /** Makes the window `messages` (oldest first): a shift of the current one is folded in and out, any other aggregated afresh. */
  set(messages: readonly Message[]): void {
    const entries = this.#entries;
    let k = messages.length > 0 ? entries.findIndex((e) => e.message === messages[0]) : -1;
    for (let j = 0; k >= 0 && j < entries.length - k; j++) if (j >= messages.length || entries[k + j].message !== messages[j]) k = -1;
    const drop = k >= 0 ? k : entries.length;
    for (let j = 0; j < drop; j++) this.#remove(entries[j]);
    this.#entries = entries.slice(drop);
    this.#first += drop;
    for (let j = this.#entries.length; j < messages.length; j++) this.#add(messages[j]);
  }

  #add(message: Message): void {
    const pos = this.#first + this.#entries.length;
    const facts = messageFacts(message);
    for (const [t, seen] of facts.terms) {
      let k = this.#slots.get(t);
      if (k === undefined) this.#slots.set(t, (k = this.#newSlot()));
      this.#seen[k] |= seen;
      this.#count[k]++;
      this.#last[k] = pos;
      for (let b = 0; b < kBits; b++) if (seen & (1 << b)) this.#bits[k * kBits + b]++;
    }
    for (const d of facts.decisions) {
      const s = this.decisions.get(d);
      if (s === undefined) this.decisions.set(d, { count: 1, last: pos });
      else if (s.last !== pos) {
        s.count++;
        s.last = pos;
      }
    }
    const writes = new Map<string, string[]>();
    for (const [id, terms] of facts.calls) {
      const call = message.parts.find((p) => p.type === "tool-call" && p.id === id);
      if (call?.type === "tool-call" && /\b(?:sed|perl|tee)\b|>/.test(call.args)) writes.set(id, shellWrites(call.args, terms));
    }
    this.#entries.push({ message, facts, shellWrites: writes });
  }

  /** A zeroed slot: one a term left, or the next one (the columns doubled when full). */
  #newSlot(): number {
    const k = this.#free.pop();
    if (k !== undefined) return k;
    const next = this.#slots.size;
    if (next === this.#seen.length) {
      const grow = (a: Int32Array, n: number) => {
        const b = new Int32Array(n);
        b.set(a);
        return b;
      };
      this.#seen = grow(this.#seen, 2 * next);
      this.#count = grow(this.#count, 2 * next);
      this.#last = grow(this.#last, 2 * next);
      this.#bits = grow(this.#bits, 2 * next * kBits);
    }
    return next;
  }

  /** Folds out the window's oldest message. */
  #remove(e: Entry): void {
    for (const [t, seen] of e.facts.terms) {
      const k = this.#slots.get(t)!;
      if (--this.#count[k] === 0) {
        this.#slots.delete(t);
        this.#seen[k] = 0;
        this.#last[k] = 0;
        this.#bits.fill(0, k * kBits, (k + 1) * kBits);
        this.#free.push(k);
        continue;
      }
      for (let b = 0; b < kBits; b++) if (seen & (1 << b) && --this.#bits[k * kBits + b] === 0) this.#seen[k] &= ~(1 << b);
    }
    for (const d of new Set(e.facts.decisions)) {
      const s = this.decisions.get(d)!;
      if (--s.count === 0) this.decisions.delete(d);
    }
  }
}
