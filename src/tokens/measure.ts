import { renderMessages } from "../adapters/index.js";
import type { Message } from "../model/schema.js";
import { messageTexts } from "../model/texts.js";
import { TokenCounter, kMessageOverhead, type CountableMessage } from "./token-counter.js";

/** OpenAI's overheads (token-counter.ts); a message's role counts as one token on top. */
const { perRequest: kPerRequest, perToolCall: kPerToolCall } = kMessageOverhead.openai;
const kPerMessage = kMessageOverhead.openai.perMessage + 1;

/**
 * Token measurements of canonical messages, memoised per message object (a message that did not
 * change keeps its object, so a growing transcript costs only its new messages) and batched into
 * one estimator call per measurement.
 */
export class TokenMeasure {
  readonly #known = new WeakMap<Message, number>();
  constructor(readonly counter: TokenCounter) {}

  of(m: Message): number {
    const hit = this.#known.get(m);
    if (hit !== undefined) return hit;
    this.all([m]);
    return this.#known.get(m)!;
  }

  /** Total tokens of a request made of `messages`. */
  all(messages: readonly Message[]): number {
    const todo = messages.filter((m) => !this.#known.has(m));
    if (todo.length > 0) {
      const texts: string[] = [];
      const spans: number[] = [];
      for (const m of todo) {
        const t = messageTexts([m]);
        spans.push(t.length);
        texts.push(...t);
      }
      const est = texts.length > 0 ? this.counter.estimateMany(texts) : new Float64Array(0);
      let k = 0;
      todo.forEach((m, j) => {
        let n = kPerMessage;
        for (let e = 0; e < spans[j]; e++) n += est[k++];
        for (const p of m.parts) if (p.type === "tool-call") n += kPerToolCall;
        this.#known.set(m, Math.ceil(n));
      });
    }
    let total = kPerRequest;
    for (const m of messages) total += this.#known.get(m)!;
    return total;
  }

  text(s: string): number {
    return s.length === 0 ? 0 : Math.ceil(this.counter.estimateMany([s])[0]);
  }

  /**
   * Exact tokens of the request as the token counter defines them for OpenAI chat messages
   * (TokenCounter.countMessages: BpeCounter, per-message and per-call overheads, memoised per
   * text), over the messages rendered to that format.
   */
  exact(messages: readonly Message[]): number {
    return this.counter.countMessages(renderMessages(messages, "openai-chat") as CountableMessage[], "exact");
  }
}
