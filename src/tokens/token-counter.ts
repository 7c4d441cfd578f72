import { kDefaultMemoEntries } from "../constants.js";
import { CtxfoldError, notStringError } from "../errors.js";
import type { Backend } from "../core/backend.js";
import { hashStringReference } from "../core/reference/xxh64.js";
import type { Message } from "../model/schema.js";
import { ENCODING_COUNT, encodingIndex, kEncodings, WEIGHT_TABLE, WEIGHTS_STALE, type Encoding } from "./weights-table.js";
import { bpeCounter, warmupBpe } from "./bpe.js";
import { coreFor } from "./estimator-core.js";
import { countFeatures, estimateFromFeatures, FEATURE_COUNT } from "./estimator.js";
import { tokenMeasure } from "./measure.js";
import { kMessageOverhead, type Provider } from "./overheads.js";

export type { Encoding, Provider };
export { kMessageOverhead };

/**
 * The OpenAI Chat Completions wire shape, counted as it is (each text rounded on its own when
 * estimated). Kept beside canonical messages because it is public: the docs count wire
 * messages with `countMessages(messages, "exact")`, the barrel exports this type, and
 * `ctxfold count --jsonl` counts a run's messages as they are in the file, without a parse.
 */
export interface CountableMessage {
  role: string;
  content?: string | null | readonly ({ type: string; text?: string } | string)[];
  name?: string;
  tool_calls?: readonly { function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** Canonical messages have parts; wire messages do not. */
const isCanonical = (m: unknown): m is Message => typeof m === "object" && m !== null && Array.isArray((m as Message).parts);

/** The encoding a TokenCounter counts in when none is named (and so every compactor given no counter). */
export const kDefaultEncoding: Encoding = "o200k_base";

export interface TokenCounterOptions {
  /** @default "o200k_base" */
  encoding?: Encoding;
  /** Which message overheads apply. @default "openai" */
  provider?: Provider;
  /** @default "auto" */
  backend?: Backend | "auto";
  /** Memo entries kept before the oldest are forgotten. @default 100000 */
  memoEntries?: number;
}

/**
 * Counts tokens two ways: `estimate` (the calibrated WASM estimator, ~1000x faster) for
 * decisions, `exact` (BpeCounter: tiktoken's encodings, counted) where a hard limit is checked. Both are memoised by content
 * hash (XXH64 of the text), so a growing transcript costs only its new parts. Special tokens
 * in the text are counted as ordinary text, as a provider does with user content. Canonical
 * messages are counted by the token measure (measure.ts), the one definition ctxfold counts
 * messages with.
 */
export class TokenCounter {
  readonly encoding: Encoding;
  readonly provider: Provider;
  readonly #backend: Backend | "auto";
  readonly #row: number;
  readonly #memoEntries: number;
  readonly #exactMemo = new Map<bigint, number>();
  readonly #estimateMemo = new Map<bigint, number>();
  #tokenized = 0;

  constructor(options: TokenCounterOptions = {}) {
    this.encoding = options.encoding ?? kDefaultEncoding;
    if (!kEncodings.includes(this.encoding)) {
      throw new CtxfoldError("E_UNKNOWN_ENCODING", `unknown encoding ${JSON.stringify(this.encoding)} (one of ${kEncodings.join(", ")})`, { path: "encoding" });
    }
    this.provider = options.provider ?? "openai";
    this.#backend = options.backend ?? "auto";
    this.#row = encodingIndex(this.encoding);
    this.#memoEntries = options.memoEntries ?? kDefaultMemoEntries;
  }

  /** Unrounded estimates of many texts in one WASM call (or the TypeScript twin). */
  estimateMany(texts: readonly string[]): Float64Array {
    if (WEIGHTS_STALE) throw new CtxfoldError("E_WEIGHTS_STALE", "the estimator's weights do not match its features: run `npm run calibrate`");
    const core = coreFor(this.#backend);
    const out = new Float64Array(texts.length);
    if (core) {
      const all = core.estimateStrings(texts);
      for (let i = 0; i < texts.length; i++) out[i] = all[i * ENCODING_COUNT + this.#row];
      return out;
    }
    const counts = new Uint32Array(FEATURE_COUNT);
    for (let i = 0; i < texts.length; i++) {
      const s = texts[i];
      if (typeof s !== "string") throw notStringError(`texts[${i}]`, s);
      counts.fill(0);
      countFeatures(s, 0, s.length, counts, 0);
      out[i] = estimateFromFeatures(counts, 0, WEIGHT_TABLE, this.#row * FEATURE_COUNT);
    }
    return out;
  }

  /** Estimated tokens of one text, rounded; at least 1 for a non-empty text. */
  estimate(text: string): number {
    if (typeof text !== "string") throw notStringError("text", text);
    if (text.length === 0) return 0;
    return Math.max(1, Math.round(this.estimateMany([text])[0]));
  }

  /**
   * Readies exact counting ahead of need: the encoding's rank table (~0.3–0.7 s of work for
   * o200k_base, once per thread) is built a slice per turn of the event loop, so a call that
   * counts exactly later does not build it inside its own time. The integrations start it when
   * they are created; a caller of `compact()` in a latency-sensitive loop can await it at start.
   * Resolves when the table is ready; an exact count made meanwhile finishes it.
   */
  warmup(): Promise<void> {
    return warmupBpe(this.encoding);
  }

  /** Exact tokens of one text (BpeCounter, equal to js-tiktoken's encode(text, [], []).length), memoised by content hash. */
  exact(text: string): number {
    if (typeof text !== "string") throw notStringError("text", text);
    if (text.length === 0) return 0;
    const key = this.#key(text);
    const hit = this.#exactMemo.get(key);
    if (hit !== undefined) return hit;
    const n = bpeCounter(this.encoding).count(text);
    this.#tokenized++;
    this.#remember(this.#exactMemo, key, n);
    return n;
  }

  /** Estimate or exact count of one text; estimates are memoised by hash too. */
  count(text: string, mode: "estimate" | "exact" = "estimate"): number {
    if (mode === "exact") return this.exact(text);
    if (typeof text !== "string") throw notStringError("text", text);
    if (text.length < 256) return this.estimate(text); // hashing would cost as much as estimating
    const key = this.#key(text);
    const hit = this.#estimateMemo.get(key);
    if (hit !== undefined) return hit;
    const n = this.estimate(text);
    this.#remember(this.#estimateMemo, key, n);
    return n;
  }

  /**
   * Tokens of one message: its texts plus the provider's per-message and per-call overheads. A
   * canonical message is counted by the token measure (tokenMeasure, memoised per message), a
   * wire message as it is.
   */
  countMessage(message: Message | CountableMessage, mode: "estimate" | "exact" = "estimate", path = "message"): number {
    if (isCanonical(message)) return mode === "exact" ? tokenMeasure(this).exactOf(message, path) : tokenMeasure(this).of(message, path);
    const texts: string[] = [];
    const overhead = this.#collect(message, path, texts);
    return overhead + this.#sum(texts, mode);
  }

  /**
   * Tokens of a whole request: every message plus the reply primer. Canonical messages (judged
   * by the first) are counted by the token measure, wire messages in one batch as they are.
   */
  countMessages(messages: readonly Message[] | readonly CountableMessage[], mode: "estimate" | "exact" = "estimate"): number {
    if (!Array.isArray(messages)) throw new CtxfoldError("E_BAD_INPUT", "expected an array of messages", { path: "messages" });
    if (messages.length > 0 && isCanonical(messages[0])) {
      const canonical = messages as readonly Message[];
      return mode === "exact" ? tokenMeasure(this).exact(canonical) : tokenMeasure(this).all(canonical);
    }
    const texts: string[] = [];
    let overhead = kMessageOverhead[this.provider].perRequest;
    (messages as readonly CountableMessage[]).forEach((m, i) => (overhead += this.#collect(m, `messages[${i}]`, texts)));
    return overhead + this.#sum(texts, mode);
  }

  /** Appends a message's counted texts to `texts` and returns its fixed overhead. */
  #collect(message: CountableMessage, path: string, texts: string[]): number {
    const o = kMessageOverhead[this.provider];
    if (typeof message !== "object" || message === null) throw new CtxfoldError("E_BAD_INPUT", "expected a message object", { path });
    if (typeof message.role !== "string") throw notStringError(`${path}.role`, message.role);
    let overhead = o.perMessage;
    texts.push(message.role);
    const c = message.content;
    if (typeof c === "string") texts.push(c);
    else if (Array.isArray(c)) {
      c.forEach((part, i) => {
        if (typeof part === "string") texts.push(part);
        else if (typeof part === "object" && part !== null) {
          if (part.text !== undefined) {
            if (typeof part.text !== "string") throw notStringError(`${path}.content[${i}].text`, part.text);
            texts.push(part.text);
          }
        } else throw new CtxfoldError("E_BAD_INPUT", "expected a string or a content part", { path: `${path}.content[${i}]` });
      });
    } else if (c !== null && c !== undefined) throw notStringError(`${path}.content`, c);
    if (message.name !== undefined) {
      if (typeof message.name !== "string") throw notStringError(`${path}.name`, message.name);
      overhead += o.perName;
      texts.push(message.name);
    }
    message.tool_calls?.forEach((call, i) => {
      const f = call?.function;
      if (!f || typeof f.name !== "string" || typeof f.arguments !== "string") {
        throw new CtxfoldError("E_BAD_INPUT", "expected { function: { name: string, arguments: string } }", { path: `${path}.tool_calls[${i}]` });
      }
      overhead += o.perToolCall;
      texts.push(f.name, f.arguments);
    });
    if (message.role === "tool") overhead += o.perToolResult;
    return overhead;
  }

  /** Sum of per-text counts, each rounded as `estimate` / `exact` would give it alone. */
  #sum(texts: string[], mode: "estimate" | "exact"): number {
    let n = 0;
    if (mode === "exact") {
      for (const t of texts) n += this.exact(t);
      return n;
    }
    const raw = this.estimateMany(texts);
    for (let i = 0; i < texts.length; i++) if (texts[i].length > 0) n += Math.max(1, Math.round(raw[i]));
    return n;
  }

  /** Memo sizes and how many texts went through the exact tokenizer (memo misses). */
  stats(): { exactMemo: number; estimateMemo: number; tokenized: number } {
    return { exactMemo: this.#exactMemo.size, estimateMemo: this.#estimateMemo.size, tokenized: this.#tokenized };
  }

  #key(text: string): bigint {
    const core = coreFor(this.#backend);
    return core ? core.hashStrings([text])[0] : hashStringReference(text);
  }

  #remember(memo: Map<bigint, number>, key: bigint, value: number): void {
    if (memo.size >= this.#memoEntries) memo.delete(memo.keys().next().value as bigint);
    memo.set(key, value);
  }
}

let sharedDefault: TokenCounter | undefined;

/**
 * The one TokenCounter with default options that a module falls back on when its caller gives
 * none: made on first use and shared, so its memos serve every such module.
 */
export function defaultTokenCounter(): TokenCounter {
  return (sharedDefault ??= new TokenCounter());
}
