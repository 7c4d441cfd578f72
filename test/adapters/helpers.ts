/** What the adapter tests share: fixtures' plumbing and fast-check building blocks. */
import fc from "fast-check";
import type { Message, Part } from "../../src/model/schema.js";

export const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

export { errorOf } from "../helpers.js";

/** Canonical messages without any meta (what a conversion to another format keeps). */
export function withoutMeta(messages: readonly Message[]): unknown {
  const strip = (p: Part): unknown => {
    const { meta: _, ...rest } = p;
    if (rest.type === "tool-result") return { ...rest, content: rest.content.map((c) => strip(c)) };
    return rest;
  };
  return messages.map((m) => ({ id: m.id, role: m.role, parts: m.parts.map(strip) }));
}

/** Short strings with the awkward cases: empty, JSON-looking, non-ASCII, lone surrogates. */
export const str = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("", " ", "{}", '{"a":1}', "日本語 😀"), fc.string({ unit: "binary", maxLength: 6 }));
/** Unknown wire fields an adapter must carry. */
export const extras = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.dictionary(fc.stringMatching(/^x_[a-z]{1,4}$/), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2, noNullPrototype: true }) },
);
export const withExtras = <T extends object>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.tuple(arb, extras).map(([o, e]) => ({ ...o, ...e }));
/** Drops undefined values: the arbitrary's way of saying "absent". */
export const compact = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
export const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
