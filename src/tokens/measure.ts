/**
 * The token measure of canonical messages: the one definition every part of ctxfold counts
 * with (the tiered compactor, the legacy strategy, session orchestration, the ContextTracker,
 * `ctxfold stats`, the eval contenders, and TokenCounter.countMessages given canonical messages).
 *
 * Decisions:
 * - A message's tokens are the texts a model reads (messageTexts: text, tool-call name and raw
 *   arguments, tool-result text, reasoning text, an Anthropic compaction's summary) plus the
 *   provider's overheads (kMessageOverhead): perMessage, 1 for the role (every role name, the wire's `developer` and
 *   `function` too, is one token in every encoding ctxfold counts with), perToolCall per tool
 *   call and perToolResult per tool result. A request adds perRequest (the reply primer) once.
 *   Participant names (OpenAI's `name`, carried in meta) are not modelled and not counted; nor
 *   are media and other opaque parts. For OpenAI chat messages this is what TokenCounter counts of
 *   their wire form (the test holds the two equal).
 * - Estimate: a message's unrounded text estimates and its overheads, summed and rounded up per
 *   message, so a memoised message never changes and a request is a sum of whole numbers.
 *   Exact (for hard-limit checks): the BPE count of each text (TokenCounter.exact, memoised by
 *   content hash) plus the same overheads.
 * - Memoised per message object in both modes (messages are immutable, and one that did not
 *   change keeps its object, so a growing transcript costs only its new messages); the
 *   estimates a measurement misses go to the estimator in one batch.
 * - The provider is the counter's (TokenCounter.provider, "openai" by default) unless given. A
 *   wire format maps to a provider by providerOf: anthropic → anthropic; openai-chat and
 *   openai-responses → openai; ai-sdk and langchain → openai too: they are provider-neutral
 *   shapes whose model is not known from the messages, and OpenAI's figures are documented where
 *   Anthropic's are approximations (a caller that knows its model is Claude passes "anthropic").
 * - `tokenMeasure(counter, provider)` is the measure shared by everything counting with one
 *   counter, so their memos are one.
 */
import type { Format } from "../adapters/common.js";
import { badValueError, CtxfoldError, notStringError } from "../errors.js";
import type { Message, Part } from "../model/schema.js";
import { messageTexts } from "../model/texts.js";
import { kMessageOverhead, type Provider } from "./overheads.js";

export type MeasureMode = "estimate" | "exact";

/**
 * What the measure counts texts with: a TokenCounter, named by its shape so that the counter
 * can count canonical messages with a measure of its own without the two modules importing each other.
 */
export interface TextCounter {
  readonly provider: Provider;
  /** Unrounded estimates of many texts in one estimator call. */
  estimateMany(texts: readonly string[]): Float64Array;
  /** The exact count of one text. */
  exact(text: string): number;
}

/** The provider whose overheads apply to messages of a wire format (see the module note). */
export function providerOf(format: Format): Provider {
  return format === "anthropic" ? "anthropic" : "openai";
}

type Overheads = (typeof kMessageOverhead)[Provider];

/** A part's own overhead: a tool call's wrapper, a tool result's. */
function partOverhead(p: Part, o: Overheads): number {
  return p.type === "tool-call" ? o.perToolCall : p.type === "tool-result" ? o.perToolResult : 0;
}

/** The texts of one message (messageTexts), after checking that it is a message whose texts are strings. */
function textsOf(m: Message, path: string): string[] {
  if (typeof m !== "object" || m === null || !Array.isArray(m.parts)) throw new CtxfoldError("E_BAD_INPUT", "expected a message with parts", { path });
  m.parts.forEach((p, j) => {
    const at = `${path}.parts[${j}]`;
    if (typeof p !== "object" || p === null) throw badValueError(at, "a part object", p);
    if (p.type !== "tool-result") return;
    if (!Array.isArray(p.content)) throw badValueError(`${at}.content`, "an array of content parts", p.content);
    p.content.forEach((c, k) => {
      if (typeof c !== "object" || c === null) throw badValueError(`${at}.content[${k}]`, "a content part", c);
    });
  });
  const texts = messageTexts([m]);
  if (texts.every((t) => typeof t === "string")) return texts;
  const j = m.parts.findIndex((p) => messageTexts([{ ...m, parts: [p] }]).some((t) => typeof t !== "string"));
  throw notStringError(
    `${path}.parts[${j}]`,
    messageTexts([{ ...m, parts: [m.parts[j]] }]).find((t) => typeof t !== "string"),
  );
}

function checkList(messages: readonly Message[]): void {
  if (!Array.isArray(messages)) throw badValueError("messages", "an array of messages", messages);
}

/** Token measurements of canonical messages (see the module note). */
export class TokenMeasure {
  readonly provider: Provider;
  readonly #o: Overheads;
  /** perMessage plus the role's one token. */
  readonly #perMessage: number;
  readonly #estimates = new WeakMap<Message, number>();
  readonly #exacts = new WeakMap<Message, number>();

  constructor(
    readonly counter: TextCounter,
    options: { /** @default counter.provider */ provider?: Provider } = {},
  ) {
    const provider = options.provider ?? counter.provider;
    if (!Object.hasOwn(kMessageOverhead, provider)) throw badValueError("provider", `one of ${Object.keys(kMessageOverhead).join(", ")}`, provider);
    this.provider = provider;
    this.#o = kMessageOverhead[provider];
    this.#perMessage = this.#o.perMessage + 1;
  }

  /** Estimated tokens of one message with its overheads. */
  of(m: Message, path = "message"): number {
    const hit = this.#estimates.get(m);
    if (hit !== undefined) return hit;
    this.#estimate([m], () => path);
    return this.#estimates.get(m)!;
  }

  /** Estimated tokens of messages without a request's reply primer: the sum of `of`. */
  sum(messages: readonly Message[]): number {
    checkList(messages);
    this.#estimate(messages, (i) => `messages[${i}]`);
    let total = 0;
    for (const m of messages) total += this.#estimates.get(m)!;
    return total;
  }

  /** Estimated tokens of a request made of `messages`. */
  all(messages: readonly Message[]): number {
    return this.#o.perRequest + this.sum(messages);
  }

  /** Estimated tokens of one text, rounded up. */
  text(s: string): number {
    if (typeof s !== "string") throw notStringError("text", s);
    return s.length === 0 ? 0 : Math.ceil(this.counter.estimateMany([s])[0]);
  }

  /** Exact tokens of one message with its overheads. */
  exactOf(m: Message, path = "message"): number {
    const hit = this.#exacts.get(m);
    if (hit !== undefined) return hit;
    let n = this.#perMessage;
    for (const t of textsOf(m, path)) n += this.counter.exact(t);
    for (const p of m.parts) n += partOverhead(p, this.#o);
    this.#exacts.set(m, n);
    return n;
  }

  /** Exact tokens of a request made of `messages` (the BPE counter): for hard-limit checks. */
  exact(messages: readonly Message[]): number {
    checkList(messages);
    let total = this.#o.perRequest;
    messages.forEach((m, i) => (total += this.exactOf(m, `messages[${i}]`)));
    return total;
  }

  /**
   * Per message, per part: the tokens of the part's texts (unrounded estimates, in one batch, or
   * exact counts) plus its own overhead (perToolCall, perToolResult). A message's tokens are
   * these plus perMessage and its role, rounded up (`of`, `exactOf`).
   */
  partTokens(messages: readonly Message[], mode: MeasureMode): number[][] {
    checkList(messages);
    const texts: string[] = [];
    const spans = messages.map((m, i) => {
      textsOf(m, `messages[${i}]`);
      return m.parts.map((p) => {
        const t = messageTexts([{ ...m, parts: [p] }]);
        texts.push(...t);
        return t.length;
      });
    });
    const counts = mode === "exact" ? Float64Array.from(texts, (t) => this.counter.exact(t)) : this.counter.estimateMany(texts);
    let k = 0;
    return spans.map((row, i) =>
      row.map((n, j) => {
        let sum = 0;
        for (let e = 0; e < n; e++) sum += counts[k++];
        return sum + partOverhead(messages[i].parts[j], this.#o);
      }),
    );
  }

  /** Estimates the messages not yet known, in one estimator call. */
  #estimate(messages: readonly Message[], pathOf: (i: number) => string): void {
    const todo: Message[] = [];
    const spans: number[] = [];
    const texts: string[] = [];
    messages.forEach((m, i) => {
      if (this.#estimates.has(m)) return;
      const t = textsOf(m, pathOf(i));
      todo.push(m);
      spans.push(t.length);
      for (const s of t) texts.push(s);
    });
    if (todo.length === 0) return;
    const est = texts.length > 0 ? this.counter.estimateMany(texts) : new Float64Array(0);
    let k = 0;
    todo.forEach((m, j) => {
      // Texts first, then the parts' overheads, one at a time: the order fixes the float sum.
      let n = this.#perMessage;
      for (let e = 0; e < spans[j]; e++) n += est[k++];
      for (const p of m.parts) n += partOverhead(p, this.#o);
      this.#estimates.set(m, Math.ceil(n));
    });
  }
}

const kShared = new WeakMap<TextCounter, Map<Provider, TokenMeasure>>();

/** The measure shared by everything counting with `counter` (and `provider`, by default the counter's). */
export function tokenMeasure(counter: TextCounter, provider: Provider = counter.provider): TokenMeasure {
  let byProvider = kShared.get(counter);
  if (!byProvider) kShared.set(counter, (byProvider = new Map()));
  let m = byProvider.get(provider);
  if (!m) byProvider.set(provider, (m = new TokenMeasure(counter, { provider })));
  return m;
}
