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

/** One term's aggregate: the OR of its where-seen flags, the messages holding it, the latest of them (a position, see FactWindow.at). */
export interface TermStats {
  seen: number;
  count: number;
  last: number;
  /** How many of the messages holding it saw it with each flag bit (kSeen), so that a message leaving clears only its own. */
  bits: number[];
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
  readonly terms = new Map<string, TermStats>();
  /** Each decision of the window: in how many messages, and the latest. */
  readonly decisions = new Map<string, { count: number; last: number }>();
  #entries: Entry[] = [];
  /** The position of the window's first message: positions grow by one per message folded in, never reused. */
  #first = 0;

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
      let s = this.terms.get(t);
      if (s === undefined) this.terms.set(t, (s = { seen: 0, count: 0, last: 0, bits: new Array<number>(kBits).fill(0) }));
      s.seen |= seen;
      s.count++;
      s.last = pos;
      for (let b = 0; b < kBits; b++) if (seen & (1 << b)) s.bits[b]++;
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

  /** Folds out the window's oldest message. */
  #remove(e: Entry): void {
    for (const [t, seen] of e.facts.terms) {
      const s = this.terms.get(t)!;
      if (--s.count === 0) {
        this.terms.delete(t);
        continue;
      }
      for (let b = 0; b < kBits; b++) if (seen & (1 << b) && --s.bits[b] === 0) s.seen &= ~(1 << b);
    }
    for (const d of new Set(e.facts.decisions)) {
      const s = this.decisions.get(d)!;
      if (--s.count === 0) this.decisions.delete(d);
    }
  }
}
