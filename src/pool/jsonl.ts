/**
 * The JSONL line format every command and the batch engine read: one run per line, a bare
 * messages array or an object with `messages` whose other fields are kept. An object with a
 * `system` field is an Anthropic request: its system prompt goes to the adapters with the
 * messages and comes back with them.
 */
import { CtxfoldError } from "../errors.js";
import { decodeLine } from "./input.js";

/** One run of a JSONL line. */
export interface JsonlRun {
  messages: unknown[];
  /** The line's object when it was one (its other fields are written back unchanged). */
  envelope?: Record<string, unknown>;
  /** The run's id: the object's `id`, `run_id` or `instance_id`, else `line N`. */
  id: string;
}

/** The id a line's object gives its run (`id`, `run_id` or `instance_id`), or undefined. */
export function runIdOf(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const id = v.id ?? v.run_id ?? v.instance_id;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

/**
 * The JSON value of a line's bytes: its text under the one decoding policy (decodeLine), then
 * parsed; either failing is E_BAD_INPUT saying which (the caller adds file:line).
 */
export function parseLine(raw: Uint8Array): unknown {
  const text = decodeLine(raw);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CtxfoldError("E_BAD_INPUT", `not JSON: ${jsonSyntaxReason((err as Error).message, text)}`);
  }
}

/** How many characters V8 quotes on each side of where JSON.parse failed. */
const kQuotedContext = 10;

/**
 * Why `text` is not JSON, in JSON.parse's words less any of the text. V8 quotes the character it
 * stopped at and up to 10 characters on each side (`Unexpected token 's', ..."api_key":
 * sk-1234567"... is not valid JSON`), which may be a secret's, and error records and stderr
 * must not echo input; its other messages name only a position. Kept: what went wrong and where,
 * V8's position, or for a quote the position V8 quoted around (the whole of a text of up to 21
 * characters is quoted, with no position to recover).
 */
export function jsonSyntaxReason(message: string, text: string): string {
  const quoted = /^(Unexpected token '[\s\S]{1,2}', )?(\.\.\.)?"([\s\S]*)"(\.\.\.)? is not valid JSON$/.exec(message);
  if (!quoted) return message;
  const [, token, before, snippet, after] = quoted;
  const at =
    before && after
      ? text.indexOf(snippet) + kQuotedContext
      : after
        ? snippet.length - kQuotedContext
        : before
          ? text.length - snippet.length + kQuotedContext
          : undefined;
  const what = token ? "Unexpected character" : "Not a JSON value";
  return at === undefined || at < 0 ? what : `${what} at position ${at}`;
}

/**
 * Whether the JSON text `raw` nests arrays and objects more than `limit` levels deep (brackets
 * inside strings do not count). Read from the bytes, before any parse.
 */
export function nestsDeeperThan(raw: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (b === 0x22) {
      for (i++; i < raw.length && raw[i] !== 0x22; i++) if (raw[i] === 0x5c) i++;
    } else if (b === 0x5b || b === 0x7b) {
      if (++depth > limit) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}

/** A parsed JSONL line as a run, or E_BAD_INPUT saying what the line is instead. */
export function runOfLine(value: unknown, line: number): JsonlRun {
  if (Array.isArray(value)) return { messages: value, id: `line ${line}` };
  if (value !== null && typeof value === "object" && Array.isArray((value as { messages?: unknown }).messages)) {
    const envelope = value as Record<string, unknown>;
    return { messages: envelope.messages as unknown[], envelope, id: runIdOf(value) ?? `line ${line}` };
  }
  throw new CtxfoldError("E_BAD_INPUT", "expected a messages array or an object with a messages array", { path: "messages" });
}

/** What a run's messages are handed to the adapters as: the array, or an Anthropic `{ system, messages }`. */
export function wireOf(run: JsonlRun): unknown {
  return run.envelope && "system" in run.envelope ? { system: run.envelope.system, messages: run.messages } : run.messages;
}

/**
 * The output line's value: the rendered messages in the input line's shape — the envelope with
 * its fields in their order and `messages` (and an Anthropic `system`) replaced, or the bare
 * array (an Anthropic system prompt, if the render has one, makes it a `{ system, messages }`).
 */
export function lineOf(rendered: unknown, envelope: Record<string, unknown> | undefined): unknown {
  const wire = (Array.isArray(rendered) ? { messages: rendered } : rendered) as { system?: unknown; messages: unknown };
  if (!envelope) return Array.isArray(rendered) || wire.system === undefined ? wire.messages : rendered;
  const out: Record<string, unknown> = { ...envelope, messages: wire.messages };
  if (wire.system !== undefined) out.system = wire.system;
  return out;
}
