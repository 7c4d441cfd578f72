/**
 * The batch engine's byte path: the estimated tokens of a JSONL run read from its scanned bytes
 * (json-scan.ts), for a run the engine then writes through unparsed when it fits. The number is
 * the token measure's (src/tokens/measure.ts) of the messages the parse path would build, to the
 * last float: the same texts in the same order, each estimated from the same UTF-16 units, the
 * same overheads added in the same order, rounded up per message.
 *
 * It answers only for runs whose verdict it can vouch for, and says undefined for every other
 * (the parse path then decides, as before): OpenAI chat messages (the format given, or "auto"
 * where detection would find it) of the plain shapes — roles system, developer, user,
 * assistant and tool; content a string, null, absent or an array of `{ type: "text", text }`
 * parts; an assistant's `tool_calls` of `{ id, type: "function", function: { name, arguments } }`
 * with string fields; a tool message's string `tool_call_id` — with other message fields
 * allowed where the schema takes any value. It declines keys written with escapes, duplicate
 * keys (JSON.parse keeps the last), a top-level `system` (an Anthropic request), message
 * `type` and `providerOptions` (another format's evidence), `function_call`, `audio`, and a
 * `name` or `refusal` of a type the schema refuses.
 */
import type { Format } from "../adapters/common.js";
import { kMessageOverhead, type Provider } from "../tokens/overheads.js";
import { ENCODING_COUNT } from "../tokens/weights-table.js";
import { kEscaped, kToken, type JsonTape } from "./json-scan.js";

const kOverheads = kMessageOverhead["openai" satisfies Provider];
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
/** The keys and values the walk tells apart, by their bytes. */
const kRoleNames = ["system", "developer", "user", "assistant", "tool"] as const;
const kRoles = kRoleNames.map(ascii);
const [kRole, kContent, kToolCalls, kToolCallId, kName, kRefusal, kMessages, kSystem, kType, kText, kId, kFunction, kArguments] = [
  "role",
  "content",
  "tool_calls",
  "tool_call_id",
  "name",
  "refusal",
  "messages",
  "system",
  "type",
  "text",
  "id",
  "function",
  "arguments",
].map(ascii);
/** Message fields whose presence would change the format, the schema's verdict or the parts. */
const kDeclined = ["type", "providerOptions", "function_call", "audio"].map(ascii);

/** A reader of one tape over the bytes it was scanned from; no strings are made. */
class TapeReader {
  readonly words: Uint32Array;
  constructor(
    readonly tape: JsonTape,
    readonly bytes: Uint8Array,
    readonly row: number,
  ) {
    this.words = tape.words;
  }

  kind(i: number): number {
    return this.words[i * 4] & 0xff;
  }

  escaped(i: number): boolean {
    return (this.words[i * 4] & kEscaped) !== 0;
  }

  /** The entry after entry i and everything inside it. */
  next(i: number): number {
    return this.words[i * 4 + 3];
  }

  /** Whether the bytes of entries i and j are the same. */
  same(i: number, j: number): boolean {
    const a = this.words[i * 4 + 1];
    const b = this.words[j * 4 + 1];
    const n = this.words[i * 4 + 2] - a;
    if (this.words[j * 4 + 2] - b !== n) return false;
    for (let k = 0; k < n; k++) if (this.bytes[a + k] !== this.bytes[b + k]) return false;
    return true;
  }

  /** Whether entry i's bytes are `name`'s (an unescaped key or string spelling it). */
  spells(i: number, name: Uint8Array): boolean {
    const a = this.words[i * 4 + 1];
    if (this.words[i * 4 + 2] - a !== name.length || this.escaped(i)) return false;
    for (let k = 0; k < name.length; k++) if (this.bytes[a + k] !== name[k]) return false;
    return true;
  }

  estimate(i: number): number {
    return this.tape.estimates[i * ENCODING_COUNT + this.row];
  }

  /**
   * The value entries of an object's members whose keys are `names` (-1 where absent), with
   * every other key in `others`; undefined for an escaped or duplicate key (JSON.parse would
   * keep the last of two).
   */
  members(i: number, names: readonly Uint8Array[], others: number[] = []): number[] | undefined {
    const found = names.map(() => -1);
    others.length = 0;
    for (let k = i + 1; k < this.next(i); k = this.next(k + 1)) {
      if (this.escaped(k)) return undefined;
      const at = names.findIndex((n) => this.spells(k, n));
      if (at >= 0) {
        if (found[at] >= 0) return undefined;
        found[at] = k + 1;
      } else {
        for (const o of others) if (this.same(o, k)) return undefined;
        others.push(k);
      }
    }
    return found;
  }

  /** The elements of an array. */
  *elements(i: number): Generator<number> {
    for (let k = i + 1; k < this.next(i); k = this.next(k)) yield k;
  }

  /** Whether entry i is a string (an unescaped one spelling `value`, when given). */
  isString(i: number, value?: Uint8Array): boolean {
    return i >= 0 && this.kind(i) === kToken.string && (value === undefined || this.spells(i, value));
  }
}

/**
 * The run's estimated tokens as the compactor measures them (with the encoding row `row` of the
 * estimates), or undefined where the byte path does not vouch for the parse path's verdict (see
 * the module comment).
 */
export function byteRunTokens(tape: JsonTape, bytes: Uint8Array, format: Format | "auto", row: number): number | undefined {
  if (format !== "auto" && format !== "openai-chat") return undefined;
  const r = new TapeReader(tape, bytes, row);
  let messages = 0;
  if (r.kind(0) === kToken.object) {
    const top = r.members(0, [kMessages, kSystem]);
    if (!top || top[0] < 0 || top[1] >= 0 || r.kind(top[0]) !== kToken.array) return undefined;
    messages = top[0];
  } else if (r.kind(0) !== kToken.array) return undefined;
  let total = kOverheads.perRequest;
  const others: number[] = [];
  for (const m of r.elements(messages)) {
    const n = messageTokens(r, m, others);
    if (n === undefined) return undefined;
    total += n;
  }
  return total;
}

const kMessageKeys = [kRole, kContent, kToolCalls, kToolCallId, kName, kRefusal, ...kDeclined];
const kPartKeys = [kType, kText];
const kCallKeys = [kId, kType, kFunction];
const kFnKeys = [kName, kArguments];

/** One message's tokens (measure.ts: perMessage and role, its texts' estimates, its parts' overheads, rounded up). */
function messageTokens(r: TapeReader, m: number, others: number[]): number | undefined {
  if (r.kind(m) !== kToken.object) return undefined;
  const f = r.members(m, kMessageKeys, others);
  if (!f) return undefined;
  const [role, content, calls, callId, name, refusal] = f;
  for (let k = 6; k < f.length; k++) if (f[k] >= 0) return undefined;
  const roleAt = role >= 0 && r.kind(role) === kToken.string ? kRoles.findIndex((x) => r.spells(role, x)) : -1;
  if (roleAt < 0) return undefined;
  const isTool = kRoleNames[roleAt] === "tool";
  const isAssistant = kRoleNames[roleAt] === "assistant";
  if ((name >= 0 && r.kind(name) !== kToken.string) || (refusal >= 0 && r.kind(refusal) !== kToken.string && r.kind(refusal) !== kToken.null)) return undefined;
  if ((calls >= 0 && !isAssistant) || (callId >= 0 && !isTool)) return undefined;
  let n = kOverheads.perMessage + 1;
  if (content >= 0) {
    const kind = r.kind(content);
    if (kind === kToken.string) n += r.estimate(content);
    else if (kind === kToken.array) {
      for (const p of r.elements(content)) {
        const part = r.kind(p) === kToken.object ? r.members(p, kPartKeys, others) : undefined;
        if (!part || others.length > 0 || !r.isString(part[0], kText) || !r.isString(part[1])) return undefined;
        n += r.estimate(part[1]);
      }
    } else if (kind !== kToken.null) return undefined;
  }
  if (isTool && !r.isString(callId)) return undefined;
  if (calls >= 0 && r.kind(calls) !== kToken.null) {
    if (r.kind(calls) !== kToken.array) return undefined;
    let count = 0;
    for (const c of r.elements(calls)) {
      const call = r.kind(c) === kToken.object ? r.members(c, kCallKeys, others) : undefined;
      if (!call || others.length > 0 || !r.isString(call[0]) || !r.isString(call[1], kFunction) || call[2] < 0 || r.kind(call[2]) !== kToken.object)
        return undefined;
      const fn = r.members(call[2], kFnKeys, others);
      if (!fn || others.length > 0 || !r.isString(fn[0]) || !r.isString(fn[1])) return undefined;
      n += r.estimate(fn[0]);
      n += r.estimate(fn[1]);
      count++;
    }
    // Texts first, then each call's overhead, as the measure adds them (the order fixes the float sum).
    for (let k = 0; k < count; k++) n += kOverheads.perToolCall;
  }
  if (isTool) n += kOverheads.perToolResult;
  return Math.ceil(n);
}
