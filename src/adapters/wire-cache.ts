/**
 * The wire cache of one conversation: what makes an integration call cost its new messages, not
 * the whole transcript. An agent loop sends the conversation again at every call, one step
 * longer; parsing all of it, and rendering all of the compacted output back, at every call made
 * each call O(transcript).
 *
 * Parsing: the cache keeps the previous call's wire messages and the canonical messages parsed
 * from them. A call's wire messages are compared with those (sameWire: by reference, then by
 * value), and only the messages from the first changed one on are parsed — a parse of that
 * suffix alone, started early enough that it gives what a whole parse gives (wire-formats.ts
 * says where that is for each format), with ids shifted to the whole list's. Unchanged messages
 * keep their previous canonical objects, so the compactor session's identity fast path and its
 * per-message token memo hit. Anything the suffix parse cannot stand for (an error to report,
 * a changed Anthropic system) falls back to a whole parse, which says it as it always did.
 *
 * Rendering: the compacted output is rendered in units (a message, or the messages one wire
 * message holds), each memoised by its canonical objects: a unit rendered by an earlier call is
 * handed back as the very wire objects it rendered to, so after an epoch an append renders only
 * the new messages and the prefix stays the same objects (and bytes) call after call. `finish`
 * (the AI SDK's provider shape) is applied once per rendered wire message and memoised with it.
 *
 * Wire messages are taken as immutable once passed (as the adapters' reuse already takes them):
 * a message object changed in place between calls is not seen as changed.
 */
import { recordOrigin, reusable } from "./common.js";
import { kAdapters, type Format } from "./index.js";
import type { Message } from "../model/schema.js";
import { sameWire } from "./wire-equal.js";
import { parseFrom, rendersAlone, shiftedId, unitEnd, wireHead, wireIndexOf, wireMessages } from "./wire-formats.js";

/**
 * Called once per parse, before anything is parsed, with the wire indices [from, to) that no
 * earlier call parsed (the rest passed it then): where an integration checks shapes.
 */
export type WireCheck = (from: number, to: number) => void;

/** A rendered unit: its canonical messages and the wire messages they rendered to. */
interface Unit {
  members: readonly Message[];
  wire: readonly unknown[];
}

export class WireCache {
  /** The previous call's wire messages (a copy of its list), its head (wireHead) and canonical messages. */
  #wire: unknown[] = [];
  #head: unknown[] = [];
  #canonical: Message[] = [];
  /** canonAt[j]: canonical messages parsed from the wire messages before j (meaningful where a suffix parse may start). */
  #canonAt: number[] = [0];
  #parsed = false;
  readonly #units = new WeakMap<Message, Unit>();
  /** Anthropic: the last system messages rendered, and their `system` value (and whether it came before `messages`). */
  #system: { members: readonly Message[]; value: unknown; first: boolean } | undefined;
  /** The previous render: its canonical messages, where its units start (in them and in its output), its output. */
  #last: { messages: Message[]; starts: number[]; wireAt: number[]; out: unknown[] } | undefined;
  /** Parse counters, for tests and benchmarks: wire messages parsed, and calls that parsed everything. */
  readonly stats = { parsedMessages: 0, wholeParses: 0 };

  constructor(
    readonly format: Format,
    readonly finish?: (wire: unknown) => unknown,
  ) {}

  /** The index of the first wire message of `input` that differs from the previous call's (its length when none does). */
  #firstChange(wire: readonly unknown[]): number {
    const prev = this.#wire;
    const n = Math.min(prev.length, wire.length);
    let c = 0;
    while (c < n && sameWire(wire[c], prev[c])) c++;
    return c;
  }

  /** The canonical messages of `input`, parsed as the format's adapter parses them, only its new messages parsed (see the module comment). */
  parse(input: unknown, check?: WireCheck): Message[] {
    const wire = wireMessages(this.format, input);
    if (!wire) return this.#whole(input, [], check, 0);
    const head = wireHead(this.format, input);
    const c = this.#parsed && sameWire(head, this.#head) ? this.#firstChange(wire) : 0;
    check?.(c, wire.length);
    const s = c === 0 ? 0 : parseFrom(this.format, wire, c);
    if (s === 0) return this.#whole(input, wire, undefined, 0);
    let local: Message[] = [];
    if (s < wire.length) {
      try {
        local = kAdapters[this.format].parse(wire.slice(s));
      } catch {
        // The whole parse reports the error with its path in the whole list.
        return this.#whole(input, wire, undefined, 0);
      }
    }
    this.stats.parsedMessages += wire.length - s;
    const canonical = this.#canonical;
    const canonAt = this.#canonAt;
    canonical.length = canonAt[s]!;
    canonAt.length = s + 1;
    this.#append(local, wire, s);
    this.#wire.length = c;
    for (let j = c; j < wire.length; j++) this.#wire.push(wire[j]);
    return canonical.slice();
  }

  /** A whole parse: the cache starts over from it. */
  #whole(input: unknown, wire: readonly unknown[], check: WireCheck | undefined, from: number): Message[] {
    check?.(from, wire.length);
    this.#parsed = false;
    const messages = kAdapters[this.format].parse(input);
    this.stats.parsedMessages += wire.length;
    this.stats.wholeParses++;
    this.#canonical = [];
    this.#canonAt = [0];
    this.#append(messages, wire, 0);
    this.#wire = wire.slice();
    this.#head = wireHead(this.format, input);
    this.#parsed = true;
    return this.#canonical.slice();
  }

  /** Appends the messages parsed from wire[s..] (ids shifted by s) and their canonAt entries. */
  #append(local: readonly Message[], wire: readonly unknown[], s: number): void {
    const canonical = this.#canonical;
    const canonAt = this.#canonAt;
    let j = s;
    for (let k = 0; k < local.length; ) {
      const r = reusable(local, k, this.format);
      const length = r ? r.length : 1;
      const at = wireIndexOf(this.format, local[k]!, k) + s;
      // Wire messages up to this one made the canonical messages so far.
      while (j < at) canonAt[++j] = canonical.length;
      const group = local.slice(k, k + length);
      if (s > 0) {
        for (let g = 0; g < length; g++) group[g] = { ...group[g]!, id: shiftedId(this.format, group[g]!, at - s, s, wire) };
        if (r) recordOrigin(this.format, r.raw, group, at);
      }
      for (const m of group) canonical.push(m);
      k += length;
    }
    while (j < wire.length) canonAt[++j] = canonical.length;
  }

  /** `messages` rendered as the format's adapter renders them (then `finish`ed), units rendered before handed back as they were. */
  render(messages: readonly Message[]): unknown {
    const adapter = kAdapters[this.format];
    let i = 0;
    let system: { value: unknown; first: boolean } | undefined;
    if (this.format === "anthropic") {
      while (i < messages.length && messages[i]!.role === "system") i++;
      if (i > 0) {
        const memo = this.#system;
        if (memo && memo.members.length === i && memo.members.every((m, k) => m === messages[k])) system = memo;
        else {
          const members = messages.slice(0, i);
          const head = adapter.render(members) as Record<string, unknown>;
          this.#system = { members, value: head.system, first: Object.keys(head)[0] === "system" };
          system = this.#system;
        }
      }
    }
    const { out, starts, wireAt } = this.#reusedPrefix(messages, i);
    if (starts.length > 0) (i = starts.pop()!), (out.length = wireAt.pop()!);
    while (i < messages.length) {
      const end = unitEnd(this.format, messages, i);
      const unit = this.#unit(messages, i, end);
      if (!unit) {
        this.#last = undefined;
        return this.#renderWhole(messages);
      }
      starts.push(i);
      wireAt.push(out.length);
      for (const w of unit.wire) out.push(w);
      i = end;
    }
    this.#last = { messages: messages.slice(), starts, wireAt, out: out.slice() };
    if (this.format !== "anthropic") return out;
    if (!system) return { messages: out };
    return system.first ? { system: system.value, messages: out } : { messages: out, system: system.value };
  }

  /**
   * The previous render's units that this one keeps, its output up to them, and where the unit
   * after them starts (the last entry of starts / wireAt): the units of its list that end
   * before the first message that differs (by identity) from it. A unit that ends there is
   * rendered again (through its memo): the message after it may join it now.
   */
  #reusedPrefix(messages: readonly Message[], from: number): { out: unknown[]; starts: number[]; wireAt: number[] } {
    const last = this.#last;
    if (!last || last.starts[0] !== from) return { out: [], starts: [], wireAt: [] };
    const prev = last.messages;
    const n = Math.min(prev.length, messages.length);
    let q = 0;
    while (q < n && prev[q] === messages[q]) q++;
    // The first unit that does not end before q.
    let u = last.starts.length;
    while (u > 0 && (u === last.starts.length ? prev.length : last.starts[u]!) >= q) u--;
    return { out: last.out.slice(0, last.wireAt[u]), starts: last.starts.slice(0, u + 1), wireAt: last.wireAt.slice(0, u + 1) };
  }

  /** The rendered unit messages[i..end): memoised, else rendered now; undefined when it cannot be rendered alone. */
  #unit(messages: readonly Message[], i: number, end: number): Unit | undefined {
    const memo = this.#units.get(messages[i]!);
    if (memo && memo.members.length === end - i && memo.members.every((m, k) => m === messages[i + k])) return memo;
    const members = messages.slice(i, end);
    if (!rendersAlone(this.format, members)) return undefined;
    if (this.format === "anthropic" && members.some((m) => m.role === "system")) return undefined;
    let rendered: unknown;
    try {
      rendered = kAdapters[this.format].render(members);
    } catch {
      // The whole render reports the error with its path in the whole list.
      return undefined;
    }
    const list = (this.format === "anthropic" ? (rendered as { messages: unknown[] }).messages : rendered) as unknown[];
    const unit: Unit = { members, wire: this.finish ? list.map(this.finish) : list };
    this.#units.set(members[0]!, unit);
    return unit;
  }

  #renderWhole(messages: readonly Message[]): unknown {
    const rendered = kAdapters[this.format].render(messages);
    if (!this.finish) return rendered;
    return (rendered as unknown[]).map(this.finish);
  }
}
