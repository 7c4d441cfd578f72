import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compactionBlockStale, compactionEnded, compactionStarted, sessionOverlayCorrupt, type SessionEvent } from "../../src/block/events.js";
import { readSessionEvents, SessionRecorder } from "../../src/block/recorder.js";
import { thrown } from "../helpers.js";

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "ctxfold-recorder-"));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const at = "2025-01-01T00:00:00.000Z";
const info = { sessionId: "s", loopId: 3, loopIds: [3, "two", 1], maxContextTokens: 100_000, tokensBefore: 91_000 };

describe("session events", () => {
  it("constructors build each event type with the given or current time", () => {
    expect(compactionStarted(info, at)).toEqual({ type: "compaction_started", at, ...info });
    expect(compactionEnded({ ...info, tokensAfter: 12_000 }, 42.5, new Date(at))).toEqual({
      type: "compaction_ended",
      at,
      ...info,
      tokensAfter: 12_000,
      durationMs: 42.5,
    });
    const legacy = compactionStarted({ loopIds: [], maxContextTokens: 8000, tokensBefore: 9000 });
    expect(Object.keys(legacy)).not.toContain("sessionId");
    expect(Number.isNaN(Date.parse(legacy.at))).toBe(false);
    expect(compactionBlockStale({ loopId: "l", reason: "range ends past the loop" }, at)).toEqual({
      type: "compaction_block_stale",
      at,
      loopId: "l",
      reason: "range ends past the loop",
    });
    expect(sessionOverlayCorrupt({ sessionId: "s", path: "/x/blocks/1.json", reason: "not JSON" }, at).path).toBe("/x/blocks/1.json");
  });
});

describe("SessionRecorder", () => {
  it("appends events as JSON lines and reads them back in order", () => {
    const file = path.join(root, "deep", "er", "events.jsonl");
    const rec = new SessionRecorder(file);
    expect(fs.existsSync(file)).toBe(true);
    expect(readSessionEvents(file)).toEqual([]);
    const events: SessionEvent[] = [
      compactionStarted(info, at),
      compactionBlockStale({ sessionId: "s", loopId: 1, reason: "stale" }, at),
      compactionEnded({ ...info, tokensAfter: 30_000 }, 12, at),
      sessionOverlayCorrupt({ sessionId: "s", path: "p", reason: "r" }, at),
    ];
    events.slice(0, 2).forEach((e) => rec.record(e));
    events.slice(2).forEach(rec.sink);
    const text = fs.readFileSync(file, "utf8");
    expect(text.split("\n")).toHaveLength(events.length + 1);
    expect(text.endsWith("\n")).toBe(true);
    expect(readSessionEvents(file)).toEqual(events);
    // A second recorder on the same file appends, never truncates.
    new SessionRecorder(file).sink(compactionStarted(info, at));
    expect(readSessionEvents(file)).toHaveLength(events.length + 1);
  });

  it("rejects an invalid event before writing it", () => {
    const file = path.join(root, "invalid.jsonl");
    const rec = new SessionRecorder(file);
    const err = thrown(() => rec.record({ ...compactionStarted(info, at), tokensBefore: -1 }), "E_BAD_INPUT");
    expect(err.path).toBe("event.tokensBefore");
    thrown(() => rec.record({ type: "nope", at } as unknown as SessionEvent), "E_BAD_INPUT");
    thrown(() => rec.record({ ...compactionStarted(info, at), at: "yesterday" }), "E_BAD_INPUT");
    expect(fs.readFileSync(file, "utf8")).toBe("");
  });

  it("names path:line for a line that is not JSON or not an event", () => {
    const file = path.join(root, "bad.jsonl");
    const good = JSON.stringify(compactionStarted(info, at));
    fs.writeFileSync(file, `${good}\n\n${good}\n{"type":"compaction_started",\n`);
    let err = thrown(() => readSessionEvents(file), "E_BAD_INPUT");
    expect(err.path).toBe(`${file}:4`);
    expect(err.message).toContain(`${file}:4`);
    expect(err.message).toMatch(/not JSON/);
    fs.writeFileSync(file, `${good}\n${JSON.stringify({ type: "compaction_exploded", at })}\n`);
    err = thrown(() => readSessionEvents(file), "E_BAD_INPUT");
    expect(err.path).toBe(`${file}:2`);
    fs.writeFileSync(file, `${JSON.stringify({ ...compactionEnded({ ...info, tokensAfter: 1 }, 1, at), durationMs: "slow" })}\n`);
    err = thrown(() => readSessionEvents(file), "E_BAD_INPUT");
    expect(err.path).toBe(`${file}:1`);
    expect(err.message).toMatch(/durationMs/);
    thrown(() => readSessionEvents(path.join(root, "absent.jsonl")), "E_STORE_READ");
  });
});
