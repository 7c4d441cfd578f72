/**
 * What every adapter keeps under `meta[format]` of canonical messages and parts (common.ts says
 * what belongs there): typed access to it, the wire fields a format carries unchanged, and
 * which text parts carry nothing there, so their format may write them as a plain string.
 */
import type { Message, Meta, Part, TextPart } from "../model/schema.js";
import type { Format } from "./common.js";

/** What every format's meta may carry: the wire fields ctxfold does not model. */
interface Hints {
  fields?: Record<string, unknown>;
}

/** Typed access to `meta[format]`: M on canonical messages, P on parts. */
export interface FormatMeta<M, P> {
  /** `meta[format]` of a canonical message. */
  message(m: Message): M | undefined;
  /** `meta[format]` of a part, or of anything whose meta may be absent. */
  get(holder: { meta?: Meta }): P | undefined;
  /** A meta object holding `value` under the format. */
  of(value: M | P): Meta;
  /** The same, frozen with its value: the one meta object every part that carries just `value` shares. */
  frozen(value: P): Meta;
}

export function formatMeta<M, P = M>(format: Format): FormatMeta<M, P> {
  return {
    message: (m) => m.meta[format] as M | undefined,
    get: (holder) => holder.meta?.[format] as P | undefined,
    of: (value) => ({ [format]: value }),
    frozen: (value) => Object.freeze({ [format]: Object.freeze(value) }),
  };
}

/** Meta holding carried wire fields, `{ [format]: { fields } }`; undefined when there are none. */
export function fieldsMeta(format: Format, fields: Record<string, unknown> | undefined): Meta | undefined {
  return fields ? { [format]: { fields } } : undefined;
}

/** A text part, carrying the wire fields its format does not model (if any) in its meta. */
export function textPart(format: Format, text: string, fields: Record<string, unknown> | undefined): TextPart {
  const part: TextPart = { type: "text", text };
  const meta = fieldsMeta(format, fields);
  if (meta) part.meta = meta;
  return part;
}

/** Hints with carried wire `fields` added (a copy; `hints` itself when there are none). */
export function withFields<H extends Hints>(fields: Record<string, unknown> | undefined, hints: H): H;
export function withFields<H extends Hints>(fields: Record<string, unknown> | undefined, hints?: H): H | undefined;
export function withFields<H extends Hints>(fields: Record<string, unknown> | undefined, hints?: H): H | undefined {
  if (!fields) return hints;
  return hints ? { ...hints, fields } : ({ fields } as H);
}

/** Copies carried wire fields onto a rendered object (`__proto__` as an own field too). */
export function copyFields<T extends object>(out: T, fields: Record<string, unknown> | undefined): T {
  if (fields) {
    for (const k in fields) {
      if (k === "__proto__") Object.defineProperty(out, k, { value: fields[k], enumerable: true, configurable: true, writable: true });
      else (out as Record<string, unknown>)[k] = fields[k];
    }
  }
  return out;
}

/** Copies the wire fields `hints` carries onto a rendered object. */
export function assignFields<T extends object>(out: T, hints: Hints | undefined): T {
  return copyFields(out, hints?.fields);
}

/**
 * Whether a part is text its format may write as a plain string: text whose `meta[format]` is
 * absent (any falsy value) or, with `plain`, one that `plain` accepts.
 */
export function isPlainText(p: Part, format: Format, plain: (own: unknown) => boolean = (own) => !own): p is TextPart {
  return p.type === "text" && plain(p.meta?.[format]);
}
