/**
 * The one error base class of ctxfold. `code` is stable and machine-readable; `isInstance`
 * works across duplicated package copies (a Symbol.for marker, not instanceof), and errors
 * that cross a worker boundary travel as `{ ok: false, code, message }` and are rebuilt with
 * `fromWire`.
 */
import type { z } from "zod";

const kMarker = Symbol.for("ctxfold.error");

export type CtxfoldErrorCode =
  | "E_NOT_STRING"
  | "E_NOT_BYTES"
  | "E_BAD_INPUT"
  | "E_WEIGHTS_STALE"
  | "E_TOO_LARGE"
  | "E_WASM_UNAVAILABLE"
  | "E_WASM_ABI"
  | "E_WASM_TRAP"
  | "E_WASM_MEMORY"
  | "E_KERNEL"
  | "E_BAD_TURN_ID"
  | "E_BAD_CATEGORY"
  | "E_UNKNOWN_ENCODING"
  | "E_SCHEMA"
  | "E_UNKNOWN_ROLE"
  | "E_UNKNOWN_PART"
  | "E_UNKNOWN_FORMAT"
  | "E_BAD_REF"
  | "E_REF_NOT_FOUND"
  | "E_STORE_WRITE"
  | "E_STORE_READ"
  | "E_CORRUPT"
  | "E_SESSION_NOT_FOUND"
  | "E_SESSION_CORRUPT"
  | "E_WORKER_CRASH"
  /** A batch's output (or a file beside it) is its input under another name; nothing was written. */
  | "E_OUTPUT_IS_INPUT"
  /** A batch's output (a file or stdout), errors file or checkpoint could not be written (the message names it and the OS code). */
  | "E_OUTPUT_WRITE"
  /** `--resume` from a checkpoint of another version, input or options, or over an input changed since. */
  | "E_CHECKPOINT_MISMATCH"
  /** The queue of a distributed batch (Redis) cannot be reached, or was lost for longer than the batch waits; the message names its URL. */
  | "E_QUEUE"
  /** A distributed batch's shared work dir cannot be written or read (the message names the file and the OS code). */
  | "E_WORK_DIR"
  /** A queue worker refused a job: a shard id not of its grammar, or a path outside the roots it was started with (the message names the job and field). */
  | "E_JOB_REFUSED"
  /** A command needs an optional package that is not installed (the message names it and the npm command that installs it). */
  | "E_MISSING_PEER"
  /** An optional package a command or an integration uses is installed at a version outside ctxfold's range for it (the message names the range, the version found and the npm command that installs a good one). */
  | "E_PEER_VERSION"
  /** An integration could not bring a prompt within its budget (what must stay is larger) and was not told to send it anyway (`onOverBudget`). */
  | "E_OVER_BUDGET"
  /** A failure that is no CtxfoldError (a bug, or a limit such as the stack's); the reason keeps its name and message. */
  | "E_INTERNAL";

export class CtxfoldError extends Error {
  readonly code: CtxfoldErrorCode;
  /** Where the bad input sits, e.g. `texts[3]` or `runs.jsonl:12: messages[4].content`. */
  readonly path?: string;
  readonly [kMarker] = true;

  constructor(code: CtxfoldErrorCode, message: string, options?: { path?: string; cause?: unknown }) {
    super(options?.path ? `${options.path}: ${message}` : message, { cause: options?.cause });
    this.name = "CtxfoldError";
    this.code = code;
    if (options?.path) this.path = options.path;
  }

  static isInstance(value: unknown): value is CtxfoldError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[kMarker] === true;
  }

  toWire(): { ok: false; code: CtxfoldErrorCode; message: string; path?: string } {
    return { ok: false, code: this.code, message: this.message, ...(this.path ? { path: this.path } : {}) };
  }

  static fromWire(wire: { code: CtxfoldErrorCode; message: string; path?: string }): CtxfoldError {
    const err = new CtxfoldError(wire.code, wire.message);
    if (wire.path) (err as { path?: string }).path = wire.path;
    return err;
  }
}

/** `err` itself when it is a CtxfoldError, else E_INTERNAL carrying its name and message (and it as the cause). */
export function asCtxfoldError(err: unknown): CtxfoldError {
  if (CtxfoldError.isInstance(err)) return err;
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new CtxfoldError("E_INTERNAL", what, { cause: err });
}

export function notStringError(path: string, value: unknown): CtxfoldError {
  const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  return new CtxfoldError("E_NOT_STRING", `expected a string, got ${kind}`, { path });
}

export function tooLargeError(path: string, what: string): CtxfoldError {
  return new CtxfoldError("E_TOO_LARGE", what, { path });
}

/**
 * A value as an error message shows what it got: numbers as JavaScript writes them (NaN,
 * Infinity and -Infinity, which JSON.stringify would show as null), strings quoted, undefined,
 * functions and symbols by kind, anything else as its JSON (cut at 80 characters).
 */
export function shownValue(value: unknown): string {
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  if (typeof value === "bigint") return `${value}n`;
  if (value === undefined) return "undefined";
  if (typeof value === "function" || typeof value === "symbol") return `a ${typeof value}`;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    // cyclic: shown by kind
  }
  if (json === undefined) return Array.isArray(value) ? "an array" : "an object";
  return json.length > 80 ? `${json.slice(0, 79)}…` : json;
}

/** E_BAD_INPUT at `path`: expected `expected`, got the value as shownValue shows it. */
export function badValueError(path: string, expected: string, value: unknown): CtxfoldError {
  return new CtxfoldError("E_BAD_INPUT", `expected ${expected}, got ${shownValue(value)}`, { path });
}

/**
 * A config's first schema issue as E_BAD_INPUT naming where. An unknown key, when `options`
 * lists the names the config takes, is "unknown option …" at `path` with that list; any other
 * issue (or an unknown key without a list) is the issue's own message, or `describe`'s, at
 * `path` followed by its field (for an unknown key, the key).
 */
export function configError(
  issue: z.core.$ZodIssue,
  path: string,
  more: { options?: readonly string[]; describe?: (issue: z.core.$ZodIssue) => string } = {},
): CtxfoldError {
  if (issue.code === "unrecognized_keys" && more.options) {
    return new CtxfoldError("E_BAD_INPUT", `unknown option ${issue.keys.map((k) => JSON.stringify(k)).join(", ")} (options: ${more.options.join(", ")})`, {
      path,
    });
  }
  const field = issue.code === "unrecognized_keys" ? issue.keys.join(", ") : issue.path.map(String).join(".");
  return new CtxfoldError("E_BAD_INPUT", more.describe?.(issue) ?? issue.message, { path: field ? `${path}.${field}` : path });
}

/**
 * A call's options object, before anything reads its fields: absent options read as an empty
 * object (each required field then reports itself missing, by name); anything else that is no
 * object — a budget or a callback passed in their place — is E_BAD_INPUT at `options` saying
 * which fields `shape` lists.
 */
export function optionsObject(options: unknown, shape: string): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null) throw badValueError("options", `an object ${shape}`, options);
  return options as Record<string, unknown>;
}
