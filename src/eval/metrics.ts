/**
 * The quality metrics of `npm run bench:quality`, as pure functions of OpenAI Chat Completions
 * messages (the wire format every contender is measured in). Definitions, precisely:
 *
 * - **Text of a message** (`contentText`): its `content` when a string, else the `text` of its
 *   text parts joined with "\n"; "" for null / absent content. Tool-call arguments are not part
 *   of it (`messageTexts` below lists them separately).
 * - **Critical messages** (`criticalMessages`) of a prompt: every system / developer message
 *   ("system"), the first user message ("task"), the last user message ("latest user") and the
 *   last assistant message whose text is not blank ("latest assistant text"). A critical message
 *   is **verbatim** in an output when some output message of the same role (system and developer
 *   count as one) has a text that contains the critical message's whole text (a compactor may merge
 *   it with a neighbour; its bytes must still be there, in order, under the same role). A critical
 *   message with an empty text is trivially verbatim.
 * - **Failed tool result** (`isFailedToolResult`, by `isFailedOutput` of src/steps/detect.ts): a
 *   tool message whose text reads as a failure (`looksFailed`: "Error…", "Traceback…", a JSON
 *   `error` field, …) or reports a non-zero exit code (`extractExitCode`: `<returncode>1</returncode>`, "exit code 2",
 *   `exit_code` fields) — an exit code only in the result of a call that runs a command (the
 *   tools per-step reduction reads as a shell, steps/rules.ts `shellRule`) or of a call the
 *   prompt does not show: a file read or a fetched page that mentions "exit code 1" has not
 *   failed. It is **visible** in an output (`failedVisible`) when the output still
 *   has a tool message answering the same call with the same text, or its error head
 *   (`errorHead`, without a trailing "…", when at least 8 characters long) appears in some output
 *   message's text, or its tool_call_id appears in some output message's text as a whole word
 *   (a summary line naming the call).
 * - **Common prefix** (`commonPrefixTokens`) of two consecutive outputs: the messages equal
 *   from the start (same JSON, key order ignored), counted whole with their per-message overhead,
 *   plus, at the first message that differs, when both have the same role (and tool_call_id), the
 *   tokens of the longest common prefix of the two texts. **Cache-prefix share** = that over the
 *   tokens of the later output's messages (reply primer left out of both).
 * - **Cache-priced cost** of a call (`cachePricedCost`), in input-token units: the common-prefix
 *   tokens with the previous call's output at the pricing's cached-read price, the rest of the
 *   later output's tokens at its write (uncached) price. Presets (`kPricing`): Anthropic read
 *   0.1, write 1.25 (a cache write); OpenAI read 0.1, write 1.0 (no write surcharge). It rewards
 *   both compression and a stable prefix: what a user pays for the input.
 * - **Recoverable share** (`recoverable`): the input texts (message texts and tool-call
 *   arguments) that no output text or argument contains any more were removed or shortened; their
 *   UTF-8 bytes are recovered when a text the contender's refs resolve to contains them (a stored
 *   text, or any string inside it when it is JSON).
 */
import type { OpenAIChatMessage, OpenAIChatToolCall } from "../adapters/openai-chat.js";
import { CtxfoldError } from "../errors.js";
import { errorHead, extractExitCode, isFailedOutput, parseJsonOutput } from "../steps/detect.js";
import { parseArgs } from "../steps/reducer.js";
import { ruleMatches, shellRule } from "../steps/rules.js";

export type ChatMessage = OpenAIChatMessage;

/** The indices of a prompt's anchors, the messages every contender keeps verbatim: its system / developer messages and its task (the first user message). */
export function anchorIndices(messages: readonly ChatMessage[]): Set<number> {
  const out = new Set<number>();
  let taskSeen = false;
  messages.forEach((m, i) => {
    if (m.role === "system" || m.role === "developer") out.add(i);
    else if (m.role === "user" && !taskSeen) {
      taskSeen = true;
      out.add(i);
    }
  });
  return out;
}

/** The text a model reads in a message's content (see the module comment). */
export function contentText(m: ChatMessage): string {
  const c = m.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  const texts: string[] = [];
  for (const p of c) if (p && typeof p === "object" && p.type === "text" && typeof p.text === "string") texts.push(p.text);
  return texts.join("\n");
}

/** Tool-call argument texts of an assistant message (function arguments, custom tool input). */
export function callArgs(m: ChatMessage): string[] {
  if (m.role !== "assistant" || !Array.isArray(m.tool_calls)) return [];
  const out: string[] = [];
  for (const c of m.tool_calls) {
    const f = (c as { function?: { arguments?: unknown } }).function;
    const k = (c as { custom?: { input?: unknown } }).custom;
    if (f && typeof f.arguments === "string") out.push(f.arguments);
    else if (k && typeof k.input === "string") out.push(k.input);
  }
  return out;
}

/** Every text of a message a model reads: its text, then its tool-call arguments. */
export function messageTexts(m: ChatMessage): string[] {
  return [contentText(m), ...callArgs(m)];
}

const roleClass = (role: string) => (role === "developer" ? "system" : role);

export type CriticalKind = "system" | "task" | "latest user" | "latest assistant text";
export const kCriticalKinds: readonly CriticalKind[] = ["system", "task", "latest user", "latest assistant text"];

/** The critical messages of a prompt: kind and index; a message may have several kinds. */
export function criticalMessages(input: readonly ChatMessage[]): { kind: CriticalKind; index: number }[] {
  const out: { kind: CriticalKind; index: number }[] = [];
  let firstUser = -1;
  let lastUser = -1;
  let lastAssistantText = -1;
  input.forEach((m, i) => {
    if (m.role === "system" || m.role === "developer") out.push({ kind: "system", index: i });
    else if (m.role === "user") {
      if (firstUser < 0) firstUser = i;
      lastUser = i;
    } else if (m.role === "assistant" && contentText(m).trim() !== "") lastAssistantText = i;
  });
  if (firstUser >= 0) out.push({ kind: "task", index: firstUser });
  if (lastUser >= 0) out.push({ kind: "latest user", index: lastUser });
  if (lastAssistantText >= 0) out.push({ kind: "latest assistant text", index: lastAssistantText });
  return out;
}

/** Whether `m`'s whole text is in some output message of the same role. */
export function verbatimIn(m: ChatMessage, output: readonly ChatMessage[]): boolean {
  const text = contentText(m);
  if (text === "" || output.includes(m)) return true;
  const role = roleClass(m.role);
  return output.some((o) => roleClass(o.role) === role && contentText(o).includes(text));
}

/** Per critical kind, whether it is verbatim in the output (kinds the prompt lacks are absent). */
export function criticalVerbatim(input: readonly ChatMessage[], output: readonly ChatMessage[]): Partial<Record<CriticalKind, boolean>> {
  const out: Partial<Record<CriticalKind, boolean>> = {};
  for (const { kind, index } of criticalMessages(input)) out[kind] = (out[kind] ?? true) && verbatimIn(input[index], output);
  return out;
}

/** The critical messages reduced to what must be sent of them: role and text, in input order. */
export function criticalCore(input: readonly ChatMessage[]): ChatMessage[] {
  const idx = new Set(criticalMessages(input).map((c) => c.index));
  // A critical assistant message that calls tools cannot be sent without its calls and their
  // results (provider rules): they belong to what must fit.
  for (const i of [...idx]) {
    const m = input[i];
    const ids = new Set(m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []);
    if (ids.size === 0) continue;
    input.forEach((r, j) => {
      if (j > i && r.role === "tool" && ids.has(r.tool_call_id)) idx.add(j);
    });
  }
  return [...idx]
    .sort((a, b) => a - b)
    .map((i) => {
      const m = input[i];
      if (m.role === "assistant" && m.tool_calls?.length) return { role: "assistant", content: contentText(m), tool_calls: m.tool_calls } as ChatMessage;
      return {
        role: m.role === "developer" ? "developer" : m.role,
        content: contentText(m),
        ...(m.role === "tool" ? { tool_call_id: m.tool_call_id } : {}),
      } as ChatMessage;
    });
}

/** Whether a message is a failed tool result (see the module comment); `call`, the call it answers, where the prompt shows it. */
export function isFailedToolResult(m: ChatMessage, call?: OpenAIChatToolCall): boolean {
  if (m.role !== "tool") return false;
  const text = contentText(m);
  const json = parseJsonOutput(text);
  return isFailedOutput(text, json, false, call === undefined || runsCommand(call) ? extractExitCode(text, json) : undefined);
}

/** Whether a call runs a command, as per-step reduction reads it (its shell rule). */
function runsCommand(call: OpenAIChatToolCall): boolean {
  const f = (call as { function?: { name?: unknown; arguments?: unknown } }).function;
  if (!f || typeof f.name !== "string") return true;
  return ruleMatches(shellRule, f.name, parseArgs(typeof f.arguments === "string" ? f.arguments : "").args);
}

/** The failed tool results of a prompt (see isFailedToolResult), each judged with the call it answers. */
export function failedToolResults(messages: readonly ChatMessage[]): ChatMessage[] {
  const calls = new Map<string, OpenAIChatToolCall>();
  for (const m of messages) {
    if (m.role !== "assistant" || !Array.isArray(m.tool_calls)) continue;
    for (const c of m.tool_calls) if (typeof (c as { id?: unknown }).id === "string") calls.set((c as { id: string }).id, c);
  }
  return messages.filter((m) => isFailedToolResult(m, m.role === "tool" && typeof m.tool_call_id === "string" ? calls.get(m.tool_call_id) : undefined));
}

/** The error head used for visibility: errorHead without a trailing ellipsis; "" when shorter than 8 characters. */
export function visibleHead(text: string): string {
  const h = errorHead(text).replace(/…$/, "").trim();
  return h.length >= 8 ? h : "";
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether the failed tool result `m` is still visible in the output (see the module comment). */
export function failedVisible(m: ChatMessage, output: readonly ChatMessage[], head = visibleHead(contentText(m))): boolean {
  const id = m.role === "tool" ? m.tool_call_id : undefined;
  const text = contentText(m);
  if (output.some((o) => o === m || (o.role === "tool" && o.tool_call_id === id && contentText(o) === text))) return true;
  const idRe = id ? new RegExp(`(?<![\\w-])${escapeRe(id)}(?![\\w-])`) : undefined;
  for (const o of output) {
    const t = contentText(o);
    if (head && t.includes(head)) return true;
    if (idRe?.test(t)) return true;
  }
  return false;
}

/** JSON with object keys sorted: equal messages give equal strings whatever their key order. */
export function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (x && typeof x === "object" && !Array.isArray(x)) {
      const o = x as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, o[k]]),
      );
    }
    return x;
  });
}

const kJson = new WeakMap<object, string>();
function messageKey(m: ChatMessage): string {
  let s = kJson.get(m);
  if (s === undefined) kJson.set(m, (s = stableJson(m)));
  return s;
}

export function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  return a === b || messageKey(a) === messageKey(b);
}

/** Longest common prefix of two strings, never ending inside a surrogate pair. */
export function commonPrefix(a: string, b: string): string {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i > 0 && i < a.length && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800) i--;
  return a.slice(0, i);
}

/** How the prefix metric counts: one message with its overheads, one bare text. */
export interface PrefixCounter {
  message(m: ChatMessage): number;
  text(s: string): number;
}

/** Tokens of the longest common prefix of two outputs (see the module comment). */
export function commonPrefixTokens(prev: readonly ChatMessage[], next: readonly ChatMessage[], count: PrefixCounter): number {
  let k = 0;
  let tokens = 0;
  while (k < prev.length && k < next.length && sameMessage(prev[k], next[k])) tokens += count.message(next[k++]);
  if (k < prev.length && k < next.length) {
    const a = prev[k];
    const b = next[k];
    const sameCall = a.role !== "tool" || (b.role === "tool" && a.tool_call_id === b.tool_call_id);
    if (a.role === b.role && sameCall) tokens += count.text(commonPrefix(contentText(a), contentText(b)));
  }
  return tokens;
}

/** Tokens of the later of two consecutive outputs, and how many of them its common prefix with the earlier one covers. */
export function prefixSplit(prev: readonly ChatMessage[], next: readonly ChatMessage[], count: PrefixCounter): { total: number; cached: number } {
  const total = next.reduce((n, m) => n + count.message(m), 0);
  return { total, cached: Math.min(total, commonPrefixTokens(prev, next, count)) };
}

/** The share of a prefix split's tokens its cached prefix covers (1 when there are none). */
export function prefixShare({ total, cached }: { total: number; cached: number }): number {
  return total === 0 ? 1 : cached / total;
}

/** Cache-prefix share of two consecutive outputs: common-prefix tokens over the later output's tokens (1 when it is empty). */
export function cachePrefixShare(prev: readonly ChatMessage[], next: readonly ChatMessage[], count: PrefixCounter): number {
  return prefixShare(prefixSplit(prev, next, count));
}

/** Prices of input tokens relative to one uncached input token: a cached read, and a write (uncached, or written to the cache). */
export interface Pricing {
  name: string;
  read: number;
  write: number;
}

export const kPricing = {
  anthropic: { name: "anthropic", read: 0.1, write: 1.25 },
  openai: { name: "openai", read: 0.1, write: 1.0 },
} as const satisfies Record<string, Pricing>;

/**
 * A pricing named on the command line (`--pricing`): a preset of kPricing (`anthropic`,
 * `openai`), or `read=R,write=W` with non-negative prices relative to one uncached input token
 * (write above 0), named "custom". E_BAD_INPUT with path "pricing" otherwise.
 */
export function parsePricing(spec: string): Pricing {
  const s = spec.trim();
  if (Object.hasOwn(kPricing, s)) return { ...kPricing[s as keyof typeof kPricing] };
  const bad = (why: string) =>
    new CtxfoldError(
      "E_BAD_INPUT",
      `${why}: expected ${Object.keys(kPricing).join(", ")} or read=R,write=W (e.g. read=0.1,write=1.25), got ${JSON.stringify(spec)}`,
      { path: "pricing" },
    );
  const prices: Record<string, number> = {};
  for (const item of s.split(",").map((x) => x.trim())) {
    const m = /^(read|write)\s*=\s*(\d*\.?\d+(?:e[+-]?\d+)?)$/i.exec(item);
    if (!m) throw bad(item === "" ? "empty item" : `bad item ${JSON.stringify(item)}`);
    const key = m[1].toLowerCase();
    if (Object.hasOwn(prices, key)) throw bad(`${key} given twice`);
    prices[key] = Number(m[2]);
  }
  if (prices.read === undefined || prices.write === undefined) throw bad(`missing ${prices.read === undefined ? "read" : "write"}`);
  if (!(prices.write > 0) || !Number.isFinite(prices.write) || !Number.isFinite(prices.read)) throw bad("write must be above 0 and both finite");
  return { name: "custom", read: prices.read, write: prices.write };
}

/** The cost of a call whose prompt splits into `cached` prefix tokens and the rest (prefixSplit), with prompt caching (see the module comment). */
export function cachePricedCost(split: { total: number; cached: number }, pricing: Pricing): number {
  return split.cached * pricing.read + (split.total - split.cached) * pricing.write;
}

/** The strings a stored text holds: itself, and every string inside it when it is JSON. */
export function storedStrings(text: string): string[] {
  const out = [text];
  const t = text.trimStart();
  if (t[0] === "{" || t[0] === "[" || t[0] === '"') {
    try {
      const walk = (v: unknown) => {
        if (typeof v === "string") out.push(v);
        else if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === "object") Object.values(v).forEach(walk);
      };
      walk(JSON.parse(text));
    } catch {
      // not JSON: the text itself
    }
  }
  return out;
}

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * Bytes of the input texts the output no longer holds whole (`affected`), and how many of those
 * bytes a stored text contains (`recovered`). See the module comment.
 */
export function recoverable(input: readonly ChatMessage[], output: readonly ChatMessage[], stored: readonly string[]): { affected: number; recovered: number } {
  const outTexts = output.flatMap(messageTexts).filter((t) => t !== "");
  const strings = stored.flatMap(storedStrings);
  let affected = 0;
  let recovered = 0;
  const kept = new Set(output);
  for (const m of input) {
    if (kept.has(m)) continue;
    for (const t of messageTexts(m)) {
      if (t === "" || outTexts.some((o) => o.includes(t))) continue;
      const n = utf8(t);
      affected += n;
      if (strings.some((s) => s.includes(t))) recovered += n;
    }
  }
  return { affected, recovered };
}

/**
 * The prompt points to replay, as indices into the run's prompt points, at most `max`: all of
 * them when there are few enough, else evenly spaced consecutive pairs (so every sampled point
 * but the first of a pair has its predecessor, for the cache-prefix metric), the last pair being
 * the run's last two points. `withPrev` says whether the previous sampled point is the one just
 * before it.
 */
export function samplePoints(count: number, max: number): { point: number; withPrev: boolean }[] {
  if (count <= max) return Array.from({ length: count }, (_, i) => ({ point: i, withPrev: i > 0 }));
  const pairs = Math.max(1, Math.floor(max / 2));
  const out: { point: number; withPrev: boolean }[] = [];
  for (let k = 0; k < pairs; k++) {
    const start = pairs === 1 ? count - 2 : Math.round((k * (count - 2)) / (pairs - 1));
    out.push({ point: start, withPrev: false }, { point: start + 1, withPrev: true });
  }
  return out;
}

/** The p-th percentile (0..100) of a sample, nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
