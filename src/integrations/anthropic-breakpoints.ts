/**
 * Anthropic `cache_control` breakpoints of a compacted Messages request (requests.ts's module
 * comment says the rules): the draft of the compacted request under edit, the breakpoints the
 * request carried, where the epoch's compacted prefix ends, and the edits that keep at most 4
 * valid breakpoints and place ours.
 */
import type { AnthropicMessage } from "../adapters/anthropic.js";
import { isObject } from "../adapters/common.js";
import { jsonEqual } from "../model/equal.js";
import type { CompactorSession } from "../policy/session.js";

type Block = Record<string, unknown>;

/** Where a block sits: tools[i], system[i], messages[i].content[k], or messages[i].content[k].content[n]. */
interface Spot {
  area: "tools" | "system" | "messages";
  i: number;
  k?: number;
  n?: number;
}

const hasMark = (b: unknown): boolean => isObject(b) && b.cache_control !== undefined && b.cache_control !== null;
const emptyText = (b: Block): boolean => b.type === "text" && (typeof b.text !== "string" || b.text.trim() === "");
const kUnmarkable = new Set(["thinking", "redacted_thinking"]);

/** Where a message's marked blocks sit: content[k], or content[k].content[n] inside a tool_result. */
type MarkSpots = readonly { k: number; n?: number }[];
const kNoMarks: MarkSpots = [];
const messageMarks = new WeakMap<object, MarkSpots>();

/** The marked blocks of a message (remembered per message object: every call walks the whole conversation's messages). */
function marksOf(m: AnthropicMessage): MarkSpots {
  let marks = messageMarks.get(m);
  if (!marks) messageMarks.set(m, (marks = marksIn(m)));
  return marks;
}

function marksIn(m: AnthropicMessage): MarkSpots {
  const content = m.content as unknown;
  if (!Array.isArray(content)) return kNoMarks;
  let out: { k: number; n?: number }[] | undefined;
  for (let k = 0; k < content.length; k++) {
    const b = content[k] as unknown;
    if (!isObject(b)) continue;
    if (hasMark(b)) (out ??= []).push({ k });
    if (b.type === "tool_result" && Array.isArray(b.content)) for (let n = 0; n < b.content.length; n++) if (hasMark(b.content[n])) (out ??= []).push({ k, n });
  }
  return out ?? kNoMarks;
}

/** The compacted request under edit: containers are copied before their first change (the caller's stay as they are). */
export class Draft {
  readonly #own = new WeakSet<object>();
  constructor(
    public tools: unknown[] | undefined,
    public system: unknown,
    public messages: AnthropicMessage[],
  ) {}

  #arr<T>(a: T[]): T[] {
    if (this.#own.has(a)) return a;
    const c = [...a];
    this.#own.add(c);
    return c;
  }

  #obj<T extends object>(o: T): T {
    if (this.#own.has(o)) return o;
    const c = { ...o };
    this.#own.add(c);
    return c;
  }

  /** Every block that carries a breakpoint (with its spot), in prompt order: tools, system, then messages. */
  *markedBlocks(): Generator<[Spot, Block]> {
    if (this.tools) for (let i = 0; i < this.tools.length; i++) if (hasMark(this.tools[i])) yield [{ area: "tools", i }, this.tools[i] as Block];
    if (Array.isArray(this.system))
      for (let i = 0; i < this.system.length; i++) if (hasMark(this.system[i])) yield [{ area: "system", i }, this.system[i] as Block];
    for (let i = 0; i < this.messages.length; i++) {
      const m = this.messages[i];
      // The draft's own copies change under edit; any other message is taken as immutable.
      const marks = this.#own.has(m) ? marksIn(m) : marksOf(m);
      for (const { k, n } of marks) {
        const b = (m.content as Block[])[k]!;
        yield [{ area: "messages", i, k, ...(n === undefined ? {} : { n }) }, n === undefined ? b : ((b.content as Block[])[n] as Block)];
      }
    }
  }

  set(s: Spot, block: Block): void {
    if (s.area === "tools") (this.tools = this.#arr(this.tools!))[s.i] = block;
    else if (s.area === "system") (this.system = this.#arr(this.system as unknown[]))[s.i] = block;
    else {
      const messages = (this.messages = this.#arr(this.messages));
      const m = (messages[s.i] = this.#obj(messages[s.i]));
      const content = this.#arr(m.content as Block[]);
      m.content = content as AnthropicMessage["content"];
      if (s.n === undefined) content[s.k!] = block;
      else {
        const result = (content[s.k!] = this.#obj(content[s.k!]));
        (result.content = this.#arr(result.content as Block[]))[s.n] = block;
      }
    }
  }

  /** A message whose content is a string becomes one text block carrying `mark`. */
  markString(i: number, mark: unknown): void {
    const messages = (this.messages = this.#arr(this.messages));
    const m = (messages[i] = this.#obj(messages[i]));
    m.content = [{ type: "text", text: m.content as string, cache_control: mark }];
  }
}

function unmarked(b: Block): Block {
  const { cache_control, ...rest } = b;
  void cache_control;
  return rest;
}

/** JSON of every block of the request that carries a breakpoint (system and messages). */
export function requestMarks(body: Record<string, unknown>): Set<string> {
  const marks = new Set<string>();
  const draft = new Draft(undefined, body.system, body.messages as AnthropicMessage[]);
  for (const [, b] of draft.markedBlocks()) marks.add(JSON.stringify(b));
  return marks;
}

/** Where the epoch's compacted prefix ends, per session (see the module comment). */
interface PrefixState {
  epoch: number;
  /** The previous call's rendered messages, before breakpoint edits. */
  wire: readonly AnthropicMessage[];
  /** Wire messages in the epoch's compacted prefix. */
  prefix: number;
}
const prefixes = new WeakMap<CompactorSession, PrefixState>();

function samePrefix(a: readonly AnthropicMessage[], b: readonly AnthropicMessage[], n: number): boolean {
  if (a.length < n || b.length < n) return false;
  for (let j = 0; j < n; j++) if (!jsonEqual(a[j], b[j])) return false;
  return true;
}

/** Wire messages in the current epoch's compacted prefix, updating the session's state. */
export function prefixLength(session: CompactorSession, wire: readonly AnthropicMessage[]): number {
  const st = prefixes.get(session);
  const prefix = st && st.epoch === session.epoch && samePrefix(st.wire, wire, st.prefix) ? st.prefix : wire.length;
  prefixes.set(session, { epoch: session.epoch, wire, prefix });
  return prefix;
}

/** Marks the last markable block of messages[0..end) (see the module comment); returns its spot, or undefined when none can carry one. */
function placeMark(draft: Draft, end: number): Spot | undefined {
  const mark = { type: "ephemeral" };
  for (let i = end - 1; i >= 0; i--) {
    const content = draft.messages[i].content as unknown;
    if (typeof content === "string") {
      if (content.trim() === "") continue;
      draft.markString(i, mark);
      return { area: "messages", i, k: 0 };
    }
    if (!Array.isArray(content)) continue;
    for (let k = content.length - 1; k >= 0; k--) {
      const b = content[k] as unknown;
      if (!isObject(b) || typeof b.type !== "string" || kUnmarkable.has(b.type) || emptyText(b)) continue;
      if (!hasMark(b)) draft.set({ area: "messages", i, k }, { ...b, cache_control: mark });
      return { area: "messages", i, k };
    }
  }
  return undefined;
}

const sameSpot = (a: Spot | undefined, b: Spot): boolean => a !== undefined && a.area === b.area && a.i === b.i && a.k === b.k && a.n === b.n;

/** Breakpoints made valid, and ours placed when asked (see the module comment). */
export function fixBreakpoints(draft: Draft, known: ReadonlySet<string>, prefix: number | undefined): void {
  // 1. None on replaced content or empty text.
  for (const [spot, b] of [...draft.markedBlocks()]) {
    if (spot.area !== "tools" && (emptyText(b) || !known.has(JSON.stringify(b)))) draft.set(spot, unmarked(b));
  }
  // 2. Ours, when tools and system leave room.
  let ours: Spot | undefined;
  if (prefix !== undefined) {
    let head = 0;
    for (const [spot] of draft.markedBlocks()) {
      if (spot.area === "messages") break;
      head++;
    }
    if (head < 4) ours = placeMark(draft, prefix);
  }
  // 3. At most 4: the caller's message-level ones oldest first, then tools / system earliest first.
  const marked = [...draft.markedBlocks()];
  let excess = marked.length - 4;
  if (excess <= 0) return;
  const order = [...marked.filter(([s]) => s.area === "messages" && !sameSpot(ours, s)), ...marked.filter(([s]) => s.area !== "messages")];
  for (const [spot, b] of order) {
    if (excess-- <= 0) break;
    draft.set(spot, unmarked(b));
  }
}
