/**
 * Block compaction's SessionRecorder: session events (src/block/events.ts) appended to a JSONL file,
 * one event per line, and read back with `readSessionEvents`.
 *
 * Decisions:
 * - No file descriptor is kept: each event is one `appendFileSync` (open with O_APPEND, one
 *   write, close). Events are rare (a few per compaction), so the open per event costs nothing
 *   that matters, nothing needs closing, and a line written is on disk for any reader at once.
 *   On a local filesystem an O_APPEND write of one short line is not interleaved with another
 *   process appending to the same file.
 * - An event is validated before it is written (E_BAD_INPUT naming the field), so every line
 *   in the file reads back; a write that fails throws E_STORE_WRITE naming the file. A sink
 *   that throws is loud on purpose: callers that must not fail on observability wrap it.
 * - The constructor creates the parent directories and the file (empty), so a session with no
 *   events yet still reads back as an empty list.
 * - Reading is strict: a line that is not JSON or not a known event throws E_BAD_INPUT with
 *   path `<file>:<line>` (1-based). Blank lines are skipped (a file ends with a newline).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { errorCode, errorMessage } from "../store/fs-ops.js";
import { CtxfoldError } from "../errors.js";
import { SessionEvent, type EventSink } from "./events.js";

/** The first zod issue as `field: message`. */
function describeIssue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): { field: string; message: string } {
  const issue = error.issues[0];
  return { field: issue.path.map(String).join("."), message: issue.message };
}

export class SessionRecorder {
  /** The absolute path of the JSONL file. */
  readonly path: string;
  /** An EventSink bound to this recorder: pass it wherever events are emitted. */
  readonly sink: EventSink;

  constructor(file: string) {
    if (typeof file !== "string" || file.length === 0) throw new CtxfoldError("E_BAD_INPUT", "expected a file path", { path: "path" });
    this.path = path.resolve(file);
    try {
      fs.mkdirSync(path.dirname(this.path), { recursive: true });
      fs.appendFileSync(this.path, "");
    } catch (cause) {
      throw new CtxfoldError("E_STORE_WRITE", `cannot create ${this.path}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
    this.sink = (event) => this.record(event);
  }

  /** Appends one event as a JSON line. */
  record(event: SessionEvent): void {
    const r = SessionEvent.safeParse(event);
    if (!r.success) {
      const { field, message } = describeIssue(r.error);
      throw new CtxfoldError("E_BAD_INPUT", message, { path: field ? `event.${field}` : "event" });
    }
    const line = `${JSON.stringify(r.data)}\n`;
    try {
      fs.appendFileSync(this.path, line);
    } catch (cause) {
      throw new CtxfoldError("E_STORE_WRITE", `cannot append to ${this.path}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
  }
}

/** Every event in a recorder's file, in order. E_STORE_READ when the file cannot be read. */
export function readSessionEvents(file: string): SessionEvent[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (cause) {
    throw new CtxfoldError("E_STORE_READ", `cannot read ${file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
  }
  const events: SessionEvent[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length === 0) continue;
    const where = `${file}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      throw new CtxfoldError("E_BAD_INPUT", `not JSON: ${errorMessage(cause)}`, { path: where, cause });
    }
    const r = SessionEvent.safeParse(value);
    if (!r.success) {
      const { field, message } = describeIssue(r.error);
      throw new CtxfoldError("E_BAD_INPUT", `not a session event: ${field ? `${field}: ` : ""}${message}`, { path: where });
    }
    events.push(r.data);
  }
  return events;
}
