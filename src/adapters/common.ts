/**
 * What every adapter shares: the format names, the adapter contract, the origin cache that
 * hands untouched messages back as the very objects parsed (and tells where in the input they
 * sat: input-paths.ts), and error construction.
 *
 * Conventions every adapter follows (docs/concepts.md, "Canonical model and adapters", says the same):
 * - Canonical message ids: the wire's own id where the format has one, else `m<i>` for the
 *   message at wire index i, and `m<i>.<k>` for the k-th canonical message made from it.
 * - `meta[format]` (on a message or a part) holds what only that format can render: fields
 *   ctxfold does not model, carried unchanged, and shape hints (a string content vs a one-text
 *   array). A renderer reads only its own format's meta; converting to another format drops it.
 * - Tool-call arguments stay the raw string the model produced. Formats whose wire holds them
 *   as an object (Anthropic `input`, AI SDK `input`, LangChain `args`) render the parsed object
 *   and attach the raw text to it under kRawArgs (non-enumerable, so JSON and deep-equality
 *   never see it): an in-memory conversion keeps the exact text, a JSON round trip normalises it.
 * - Messages are immutable: a transformation that changes one makes a new object. render()
 *   returns the parsed wire object itself for every message that is still the very object
 *   parse() made (byte-identical JSON, no rebuilding); `{ reuse: false }` rebuilds everything.
 */
import { z } from "zod";
import { CtxfoldError, type CtxfoldErrorCode } from "../errors.js";
import type { Message } from "../model/schema.js";

export const kFormats = ["openai-chat", "openai-responses", "anthropic", "ai-sdk", "langchain"] as const;
export type Format = (typeof kFormats)[number];

export interface ParseOptions {
  /** Names the input in error messages: a run id, `runs.jsonl:12`. @default none: errors name the path in the input only */
  source?: string;
}

export interface RenderOptions {
  /** Hand back the parsed wire object for untouched messages. @default true */
  reuse?: boolean;
}

export interface Adapter<Wire> {
  readonly format: Format;
  parse(input: unknown, options?: ParseOptions): Message[];
  render(messages: readonly Message[], options?: RenderOptions): Wire;
}

// ---------------------------------------------------------------------------------------------
// Origins: which wire object a canonical message was parsed from, and where that object sits.

/** What a parse recorded of a canonical message (input-paths.ts names places in the input from it). */
export interface Origin {
  readonly format: Format;
  /** The wire object: a message, an Anthropic `system` value, or a Responses run of items (their slice). */
  readonly raw: unknown;
  /** Every canonical message parsed from `raw`, in order (one wire message may become several). */
  readonly group: readonly Message[];
  /** Where `raw` sits in the input: its index in the messages array (a run's first item), or Anthropic's `system`. */
  readonly at: number | "system";
}

const origins = new WeakMap<Message, Origin>();

/** Records that `group` (in order) was parsed from the wire object `raw`, found at `at` in the input. */
export function recordOrigin(format: Format, raw: unknown, group: readonly Message[], at: number | "system"): void {
  const o: Origin = { format, raw, group, at };
  for (const m of group) origins.set(m, o);
}

/** The origin of messages[i] when messages[i ..] starts with the whole untouched group parsed with it. */
export function originAt(messages: readonly Message[], i: number): Origin | undefined {
  const o = origins.get(messages[i]!);
  if (!o || o.group[0] !== messages[i]) return undefined;
  const n = o.group.length;
  for (let k = 1; k < n; k++) if (messages[i + k] !== o.group[k]) return undefined;
  return o;
}

/** The origin recorded for `m`, whatever surrounds it now. */
export const originOf = (m: Message): Origin | undefined => origins.get(m);

/**
 * If messages[i ..] starts with the whole untouched group parsed from one wire object of
 * `format`, returns that object and the group's length.
 */
export function reusable(messages: readonly Message[], i: number, format: Format): { raw: unknown; length: number } | undefined {
  const o = originAt(messages, i);
  return o && o.format === format ? { raw: o.raw, length: o.group.length } : undefined;
}

// ---------------------------------------------------------------------------------------------
// Raw tool-call arguments on object-args formats.

export const kRawArgs: unique symbol = Symbol.for("ctxfold.rawArgs");

/** Attaches the raw argument text to the object rendered from it (non-enumerable). */
export function attachRawArgs<T extends object>(rendered: T, raw: string): T {
  Object.defineProperty(rendered, kRawArgs, { value: raw, enumerable: false, configurable: true });
  return rendered;
}

/**
 * The raw argument text for a wire args object: the attached text when it still parses to the
 * same value (so edits to the object win), else the object's JSON.
 */
export function rawArgsOf(value: unknown): string {
  const json = JSON.stringify(value ?? {});
  const raw = typeof value === "object" && value !== null ? (value as Record<symbol, unknown>)[kRawArgs] : undefined;
  if (typeof raw === "string") {
    try {
      if (JSON.stringify(JSON.parse(raw)) === json) return raw;
    } catch {
      // Text that is not JSON rendered as {} (argsObject): still {}, so still that text.
      if (json === "{}") return raw;
    }
  }
  return json;
}

/** Parses raw argument text for an object-args format; text that is not JSON becomes `{}` plus the text attached. */
export function argsObject(raw: string): unknown {
  let value: unknown;
  try {
    value = raw === "" ? {} : JSON.parse(raw);
  } catch {
    value = {};
  }
  return typeof value === "object" && value !== null ? attachRawArgs(value, raw) : value;
}

// ---------------------------------------------------------------------------------------------
// Errors.

/** Where a wire message sits, for error messages: `runs.jsonl:12: messages[4]`. */
export function wherePath(options: ParseOptions | undefined, path: string): string {
  return options?.source ? `${options.source}: ${path}` : path;
}

type Issue = z.core.$ZodIssue;

function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) v = typeof v === "object" && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/**
 * zod words a failed union (string or block array) as a bare "Invalid input". This keeps the
 * issues of the branch that got furthest into the value, or words one issue naming every type
 * the value could have had. Runs only on failure.
 */
function clarify(issues: readonly Issue[], prefix: readonly PropertyKey[], root: unknown): Issue[] {
  const out: Issue[] = [];
  for (const issue of issues) {
    const path = prefix.length === 0 ? issue.path : [...prefix, ...issue.path];
    if (issue.code !== "invalid_union" || issue.errors.length === 0) {
      out.push(prefix.length === 0 ? issue : { ...issue, path });
      continue;
    }
    let best: readonly Issue[] | undefined;
    let depth = 0;
    for (const branch of issue.errors) {
      const d = branch.reduce((m, b) => Math.max(m, b.path.length), 0);
      if (d > depth) [best, depth] = [branch, d];
    }
    if (best) {
      for (const b of clarify(best, path, root)) out.push(b);
      continue;
    }
    const expected = new Set(issue.errors.flatMap((branch) => branch.flatMap((b) => (b.code === "invalid_type" ? [b.expected] : []))));
    const message = `Invalid input: expected ${[...expected].join(" or ")}, received ${kindOf(valueAt(root, path))}`;
    out.push({ code: "custom", path, message });
  }
  return out;
}

/**
 * A schema failure of one wire message, in zod's prettified form; failed unions are reworded
 * (see clarify) when `raw`, the value that failed, is given.
 */
export function schemaError(format: Format, error: z.ZodError, path: string, options?: ParseOptions, raw?: unknown): CtxfoldError {
  const issues = clarify(error.issues, [], raw);
  return new CtxfoldError("E_SCHEMA", `not a valid ${format} message:\n${z.prettifyError(new z.ZodError(issues))}`, { path: wherePath(options, path) });
}

export function formatError(code: CtxfoldErrorCode, message: string, path: string, options?: ParseOptions): CtxfoldError {
  return new CtxfoldError(code, message, { path: wherePath(options, path) });
}

/**
 * A role (or message kind) an error message names: quoted when it reads as a name (a letter, then
 * letters, `_` or `-`, at most 24), else by its length only. Error records and stderr must not
 * echo a field's value that may be a secret (a key pasted where the role goes).
 */
export const shownRole = (value: string): string =>
  /^[A-Za-z][A-Za-z_-]{0,23}$/.test(value) ? JSON.stringify(value) : `(a string of ${value.length} characters, not shown)`;

/** Render's failure for a part `format` has no place for: E_UNKNOWN_PART at `where`. */
export function unrenderable(format: Format, what: string, where: string): never {
  throw formatError("E_UNKNOWN_PART", `${what} has no ${format} form`, where);
}

/** Copies the own enumerable fields of `obj` that are not in `known`; undefined when none. */
export function extraFields(obj: Record<string, unknown>, known: ReadonlySet<string>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const k in obj) {
    if (known.has(k)) continue;
    // defineProperty, not assignment: a wire key "__proto__" (an own key after JSON.parse) stays a key.
    Object.defineProperty((out ??= {}), k, { value: obj[k], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Wire values and schemas.

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * An object tagged by `type`: a known tag is checked against its schema (issues keep their
 * paths), any other tag passes as it is.
 */
export function taggedUnion(known: ReadonlyMap<string, z.ZodType>) {
  return z.looseObject({ type: z.string() }).superRefine((value, ctx) => {
    const schema = known.get(value.type);
    if (!schema) return;
    const r = schema.safeParse(value);
    // Issues carry no input here (zod reports it only on request); the raw-issue type wants it narrowed.
    if (!r.success) for (const issue of r.error.issues) ctx.addIssue({ ...issue, input: undefined });
  });
}
