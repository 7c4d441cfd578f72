/**
 * What the five renderers share: the walk over canonical messages that hands back the parsed
 * wire object of every untouched message, the runs of content parts the OpenAI formats gather
 * into one wire message, and the signature fields of a reasoning part from another format.
 */
import type { Message, ReasoningPart } from "../model/schema.js";
import { type Format, type RenderOptions, reusable } from "./common.js";

/**
 * Walks `messages` for render: from message i, the whole untouched group parsed from one wire
 * object of `format` goes to `reused` (the object and i) unless `options.reuse` is false; any
 * other message goes to `build`, which renders from message i and returns the index after what
 * it rendered.
 */
export function eachMessage(
  messages: readonly Message[],
  format: Format,
  options: RenderOptions | undefined,
  reused: (raw: unknown, i: number) => void,
  build: (i: number) => number,
): void {
  const reuse = options?.reuse !== false;
  for (let i = 0; i < messages.length; ) {
    const r = reuse ? reusable(messages, i, format) : undefined;
    if (r) {
      reused(r.raw, i);
      i += r.length;
    } else {
      i = build(i);
    }
  }
}

/**
 * One canonical message's wire messages where calls and results are wire messages of their own
 * (OpenAI Chat Completions, Responses): consecutive content parts gather into one wire message,
 * which `make` builds from the parts, their part indices (for error paths) and whether it is the
 * message's first (which carries the message's own meta).
 */
export class ContentRuns<P, W> {
  /** How many wire messages this canonical message gave. */
  emitted = 0;
  private parts: P[] | undefined;
  private at: number[] = [];
  private first = true;

  constructor(
    private readonly out: W[],
    private readonly make: (parts: P[], at: readonly number[], first: boolean) => W,
  ) {}

  /** Adds the content part at part index k to the open run. */
  add(p: P, k: number): void {
    (this.parts ??= []).push(p);
    this.at.push(k);
  }

  /** Writes a wire message of its own, after the open run. */
  push(w: W): void {
    this.flush();
    this.out.push(w);
    this.emitted++;
  }

  /** Writes the open run, if any, as one wire message. */
  flush(): void {
    if (!this.parts) return;
    this.out.push(this.make(this.parts, this.at, this.first));
    this.first = false;
    this.emitted++;
    this.parts = undefined;
    this.at = [];
  }
}

/**
 * The signature and redacted data of a reasoning part, as the fields of one object (the
 * redacted data under `redactedKey`); undefined when it has neither.
 */
export function signatureFields(p: ReasoningPart, redactedKey: string): Record<string, unknown> | undefined {
  if (p.signature === undefined && p.redacted === undefined) return undefined;
  const out: Record<string, unknown> = {};
  if (p.signature !== undefined) out.signature = p.signature;
  if (p.redacted !== undefined) out[redactedKey] = p.redacted;
  return out;
}
