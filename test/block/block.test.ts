/**
 * Seed 002, row by row: CompactionBlock and its loading logic, TurnRange / CompactedSection,
 * CompactionScope, BlockCompactionStrategy and DefaultBlockCompaction, the orchestration
 * functions and SessionCompactionConfig's WHEN / HOW fields, callbacks and events.
 */
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { kFormats } from "../../src/adapters/index.js";
import { TurnMap } from "../../src/block/turn-map.js";
import { generateRun } from "../../src/gen/run.js";
import type { Loop, Message, Session } from "../../src/model/schema.js";
import { CompactionBlock } from "../../src/model/schema.js";
import { DefaultBlockCompaction, blockMatches, loadLoop, turnMapOf } from "../../src/block/block.js";
import { FixedCount, TokenBudget, kDefaultCompactionSettings, resolveSessionConfig, shouldCompactSession } from "../../src/block/config.js";
import type { SessionEvent } from "../../src/block/events.js";
import { assignTurns, sessionFromMessages } from "../../src/block/loops.js";
import { activeChain, buildContextFromSession, compactContext, compactSessionLoops, estimateMessages, resolveScope } from "../../src/block/orchestration.js";
import { FsSessionStore } from "../../src/block/fs-session-store.js";
import { createMemoryStore } from "../../src/store/index.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { newViolations, validate } from "../../src/validate/index.js";

const clock = () => new Date("2026-11-23T12:00:00.000Z");
const config = resolveSessionConfig({});
const strategy = () => new DefaultBlockCompaction({ store: createMemoryStore(), now: clock });

/** A loop of `steps` generated tool steps with turn ids. */
function loopOf(id: number, steps: number, seed = id + 1): Loop {
  return { id, messages: assignTurns(generateRun({ seed, steps, steering: 0 }).messages, id) };
}

/** A session of `n` loops; each loop after the first starts at a user message. */
function sessionOf(n: number, steps = 12): Session {
  const loops: Loop[] = [];
  for (let i = 0; i < n; i++) {
    const l = loopOf(i, steps);
    // Later loops continue the conversation: no second system prompt.
    if (i > 0) l.messages = l.messages.filter((m) => m.role !== "system");
    loops.push(l);
  }
  return { id: "s1", loops };
}

const raw = (s: Session, upTo = s.loops.length - 1) => s.loops.slice(0, upTo + 1).flatMap((l) => l.messages);
const textOf = (m: Message) => (m.parts[0] as { text: string }).text;

describe("TurnRange and CompactedSection", () => {
  it("a TurnRange is inclusive and maps through the TurnMap to messages", () => {
    const loop = loopOf(0, 6);
    const map = turnMapOf(loop);
    const [a] = map.turnMsgRange(1)!;
    const [, b] = map.turnMsgRange(3)!;
    expect(map.messagesForRange({ startTurn: 1, endTurn: 3 }, loop.messages)).toEqual(loop.messages.slice(a, b));
    expect(() => CompactionBlock.parse({ createdAt: "x", keepFirst: { startTurn: 3, endTurn: 1 } })).toThrow();
  });

  it("a CompactedSection is a turn range plus its replacement messages", () => {
    const loop = loopOf(0, 20);
    const s = strategy().keepCompacted(loop, turnMapOf(loop), config, false)!;
    expect(s.range).toEqual({ startTurn: 0, endTurn: turnMapOf(loop).turnCount() - 1 });
    expect(s.messages).toHaveLength(1);
    expect(s.messages[0].role).toBe("user");
  });
});

describe("DefaultBlockCompaction", () => {
  const loop = loopOf(0, 30);
  const map = turnMapOf(loop);
  const s = strategy();

  it("keep_first: turns 0..keep_first_turns-1, closed over tool pairs", () => {
    const r = s.keepFirst(loop, map, config)!;
    expect(r.startTurn).toBe(0);
    expect(r.endTurn).toBeGreaterThanOrEqual(config.keepFirstTurns - 1);
    expect(s.keepFirst(loop, map, { ...config, keepFirstTurns: 0 })).toBeUndefined();
    const msgs = map.messagesForRange(r, loop.messages);
    const calls = msgs
      .flatMap((m) => m.parts)
      .filter((p) => p.type === "tool-call")
      .map((p) => (p as { id: string }).id);
    const results = new Set(
      msgs
        .flatMap((m) => m.parts)
        .filter((p) => p.type === "tool-result")
        .map((p) => (p as { callId: string }).callId),
    );
    for (const c of calls) expect(results.has(c)).toBe(true);
  });

  it("keep_recent: the last keepRecent turns, tool outputs cut to tool_output_max_lines with a ref", () => {
    const store = createMemoryStore();
    const r = new DefaultBlockCompaction({ store, now: clock }).keepRecent(loop, map, { ...config, toolOutputMaxLines: 5 })!;
    expect(r.range.endTurn).toBe(map.turnCount() - 1);
    expect(r.range.endTurn - r.range.startTurn + 1).toBeGreaterThanOrEqual(config.keepRecent);
    const outputs = r.messages
      .flatMap((m) => m.parts)
      .filter((p) => p.type === "tool-result")
      .flatMap((p) => (p as { content: { type: string; text?: string }[] }).content);
    let cut = 0;
    for (const c of outputs) {
      if (c.type !== "text") continue;
      const m = /full output: (\S+)\]/.exec(c.text!);
      if (m) {
        cut++;
        expect(store.getText(m[1]).split("\n").length).toBeGreaterThan(5);
      }
      expect(c.text!.replace(/\n$/, "").split("\n").length).toBeLessThanOrEqual(6);
    }
    expect(cut).toBeGreaterThan(0);
  });

  it("keep_compacted: most recent loop the middle only, older loops the whole loop; bounded by max_summary_tokens", () => {
    const first = s.keepFirst(loop, map, config)!;
    const recent = s.keepRecent(loop, map, config)!;
    const middle = s.keepCompacted(loop, map, config, true)!;
    expect(middle.range).toEqual({ startTurn: first.endTurn + 1, endTurn: recent.range.startTurn - 1 });
    const whole = s.keepCompacted(loop, map, config, false)!;
    expect(whole.range).toEqual({ startTurn: 0, endTurn: map.turnCount() - 1 });
    const counter = new TokenCounter();
    const tight = s.keepCompacted(loop, map, { ...config, maxSummaryTokens: 60 }, false)!;
    const lines = textOf(tight.messages[0]).split("\n").slice(1);
    expect(lines.length).toBeLessThan(textOf(whole.messages[0]).split("\n").length - 1);
    expect(counter.estimate(lines.join("\n"))).toBeLessThanOrEqual(60 + 8);
    expect(textOf(tight.messages[0])).toMatch(/later turns not summarised/);
  });

  it("compact: most recent gets all three sections, older only keep_compacted; created_at from the clock; source hash", () => {
    const b = s.compact(loop, config, true);
    expect(Object.keys(b).sort()).toEqual(["createdAt", "keepCompacted", "keepFirst", "keepRecent", "source"]);
    expect(b.createdAt).toBe("2026-11-23T12:00:00.000Z");
    expect(CompactionBlock.parse(b)).toEqual(b);
    const older = s.compact(loop, config, false);
    expect(Object.keys(older).sort()).toEqual(["createdAt", "keepCompacted", "source"]);
    expect(blockMatches(b, loop)).toBe(true);
  });
});

describe("loading logic", () => {
  const loop = loopOf(0, 30);
  const s = strategy();

  it("no compaction block: raw messages", () => {
    expect(loadLoop(loop, true).messages).toEqual(loop.messages);
  });

  it("most recent loop: keep_first originals + keep_compacted summaries + keep_recent truncated", () => {
    const block = s.compact(loop, config, true);
    const map = turnMapOf(loop);
    const got = loadLoop({ ...loop, compaction: block }, true).messages;
    expect(got).toEqual([...map.messagesForRange(block.keepFirst!, loop.messages), ...block.keepCompacted!.messages, ...block.keepRecent!.messages]);
    expect(got[0]).toBe(loop.messages[0]);
  });

  it("older loop: keep_compacted only (plus its system messages)", () => {
    const block = s.compact(loop, config, false);
    const got = loadLoop({ ...loop, compaction: block }, false).messages;
    expect(got).toEqual([...loop.messages.filter((m) => m.role === "system"), ...block.keepCompacted!.messages]);
  });

  it("messages appended after compaction load raw after the overlay", () => {
    const block = s.compact(loop, config, true);
    const extra: Message = { id: "late", role: "user", parts: [{ type: "text", text: "one more thing" }], meta: {} };
    const got = loadLoop({ ...loop, messages: [...loop.messages, extra], compaction: block }, true);
    expect(got.stale).toBe(false);
    expect(got.messages.at(-1)).toBe(extra);
  });

  it("a block whose covered range was edited is stale: skipped, raw messages, a warning event", () => {
    const block = s.compact(loop, config, true);
    const edited = loop.messages.map((m, i) => (i === 3 ? { ...m, parts: [{ type: "text" as const, text: "edited" }] } : m));
    expect(loadLoop({ ...loop, messages: edited, compaction: block }, true)).toEqual({ messages: edited, stale: true });
    const events: SessionEvent[] = [];
    const session: Session = { id: "s", loops: [{ ...loop, messages: edited, compaction: block }] };
    expect(buildContextFromSession(session, 0, {}, Infinity, { onEvent: (e) => events.push(e) })).toEqual(edited);
    expect(events.map((e) => e.type)).toEqual(["compaction_block_stale"]);
  });
});

describe("CompactionScope and resolve_scope", () => {
  const session = sessionOf(6, 8);
  const chain = activeChain(session, 5);

  it("FixedCount(n): n earlier loops, default 3, at most what exists", () => {
    expect(kDefaultCompactionSettings.compactionScope).toEqual(FixedCount(3));
    expect(resolveScope(session, chain, FixedCount(), 1e9)).toBe(3);
    expect(resolveScope(session, chain, FixedCount(2), 1e9)).toBe(2);
    expect(resolveScope(session, chain, FixedCount(50), 1e9)).toBe(5);
    expect(resolveScope(session, activeChain(session, 0), FixedCount(3), 1e9)).toBe(0);
  });

  it("TokenBudget walks back accumulating loop estimates and stops at max_context_tokens", () => {
    const counter = new TokenCounter();
    const sizes = chain
      .slice(0, -1)
      .map((l) => estimateMessages(l.messages, counter))
      .reverse();
    const budget = sizes[0] + sizes[1] + 1;
    // Loops 4 and 3 fit; the total is still under budget before loop 2, so 2 is taken too.
    expect(resolveScope(session, chain, TokenBudget(), budget, { counter })).toBe(3);
    expect(resolveScope(session, chain, TokenBudget(), 1e12, { counter })).toBe(5);
  });

  it("TokenBudget takes in a loop whose raw messages alone exceed max_context_tokens", () => {
    const big: Session = { id: "b", loops: [loopOf(0, 8), loopOf(1, 120, 99), loopOf(2, 4)] };
    const counter = new TokenCounter();
    const max = Math.floor(estimateMessages(big.loops[1].messages, counter) / 4);
    expect(resolveScope(big, activeChain(big, 2), TokenBudget(), max, { counter })).toBe(1);
    const compacted = compactSessionLoops(big, 2, strategy(), { compactionScope: TokenBudget() }, max, { counter });
    expect(compacted.loops[1].compaction?.keepCompacted).toBeDefined();
    expect(compacted.loops[0].compaction).toBeUndefined();
  });
});

describe("orchestration", () => {
  it("compact_session_loops: the current loop gets all three sections, earlier loops in scope only keep_compacted", () => {
    const session = sessionOf(5);
    const next = compactSessionLoops(session, 4, strategy(), {}, 1e9);
    expect(next.loops[4].compaction?.keepFirst).toBeDefined();
    expect(next.loops[4].compaction?.keepRecent).toBeDefined();
    for (const i of [1, 2, 3]) expect(Object.keys(next.loops[i].compaction!).sort()).toEqual(["createdAt", "keepCompacted", "source"]);
    expect(next.loops[0].compaction).toBeUndefined();
    for (let i = 0; i < 5; i++) expect(next.loops[i].messages).toBe(session.loops[i].messages);
  });

  it("build_context_from_session: scope loops loaded from blocks, the first loop's system prompt kept, fewer tokens, no new violations", () => {
    const session = sessionOf(6);
    const next = compactSessionLoops(session, 5, strategy(), {}, 1e9);
    const ctx = buildContextFromSession(next, 5, {}, 1e9);
    expect(ctx[0]).toEqual(session.loops[0].messages[0]);
    expect(ctx[0].role).toBe("system");
    const counter = new TokenCounter();
    expect(estimateMessages(ctx, counter)).toBeLessThan(estimateMessages(raw(session), counter) / 2);
    for (const f of kFormats) expect(newViolations(validate(raw(session), f), validate(ctx, f)), f).toEqual([]);
  });

  it("callbacks and CompactionStarted / CompactionEnded events carry estimated tokens before and after", () => {
    const session = sessionOf(4);
    const calls: string[] = [];
    const events: SessionEvent[] = [];
    compactSessionLoops(
      session,
      3,
      strategy(),
      {
        beforeCompactionStart: (i) => calls.push(`before ${i.tokensBefore}`),
        afterCompactionEnd: (i) => calls.push(`after ${i.tokensBefore}>${i.tokensAfter!}`),
      },
      1e9,
      { onEvent: (e) => events.push(e), now: clock },
    );
    expect(events.map((e) => e.type)).toEqual(["compaction_started", "compaction_ended"]);
    const ended = events[1] as Extract<SessionEvent, { type: "compaction_ended" }>;
    expect(ended.tokensAfter).toBeLessThan(ended.tokensBefore);
    expect(calls).toEqual([`before ${ended.tokensBefore}`, `after ${ended.tokensBefore}>${ended.tokensAfter}`]);
  });

  it("the block strategy is a config field", () => {
    const session = sessionOf(2);
    const inner = strategy();
    let used = 0;
    const counting = {
      keepFirst: inner.keepFirst.bind(inner),
      keepRecent: inner.keepRecent.bind(inner),
      keepCompacted: inner.keepCompacted.bind(inner),
      compact: (...a: Parameters<typeof inner.compact>) => {
        used++;
        return inner.compact(...a);
      },
    };
    compactSessionLoops(session, 1, undefined, { blockStrategy: counting }, 1e9);
    expect(used).toBe(2);
  });
});

describe("legacy vs modern (compactContext)", () => {
  it("with a session: the block path, overlays returned with the context", () => {
    const session = sessionOf(3);
    const r = compactContext({ session, currentLoopId: 2 }, {}, 1e9);
    expect(r.path).toBe("block");
    expect(r.session!.loops[2].compaction).toBeDefined();
    expect(r.messages).toEqual(buildContextFromSession(r.session!, 2, {}, 1e9));
  });

  it("without one: the in-memory strategy (a config field), callbacks and events on this path too", () => {
    const messages = raw(sessionOf(3));
    const counter = new TokenCounter();
    const max = Math.floor(estimateMessages(messages, counter) / 2);
    const events: SessionEvent[] = [];
    const seen: number[] = [];
    const r = compactContext({ messages }, { afterCompactionEnd: (i) => seen.push(i.tokensAfter!) }, max, { onEvent: (e) => events.push(e), counter });
    expect(r.path).toBe("in-memory");
    expect(estimateMessages(r.messages, counter)).toBeLessThan(estimateMessages(messages, counter));
    expect(events.map((e) => e.type)).toEqual(["compaction_started", "compaction_ended"]);
    expect(seen).toEqual([estimateMessages(r.messages, counter)]);
    let used = 0;
    compactContext(
      { messages },
      {
        inMemoryStrategy: {
          compact: (m) => {
            used++;
            return [...m];
          },
        },
      },
      max,
    );
    expect(used).toBe(1);
  });
});

describe("SessionCompactionConfig (seed 002)", () => {
  it("WHEN and HOW defaults", () => {
    expect(kDefaultCompactionSettings).toEqual({
      compactAtPct: 0.9,
      compactBudgetThresholdPct: 0.05,
      compactionScope: { kind: "fixed-count", count: 3 },
      keepFirstTurns: 2,
      keepRecent: 10,
      maxSummaryTokens: 2000,
      toolOutputMaxLines: 50,
    });
  });
  it("the trigger: headroom at compact_at_pct below compact_budget_threshold_pct", () => {
    expect(shouldCompactSession(85_000, 100_000)).toBe(false);
    expect(shouldCompactSession(85_001, 100_000)).toBe(true);
  });
  it("reads the deprecated keepRecentTurns as keepRecent: the same blocks and context", () => {
    for (const n of [0, 1, 4]) {
      expect(resolveSessionConfig({ keepRecentTurns: n })).toEqual(resolveSessionConfig({ keepRecent: n }));
      expect(resolveSessionConfig({ keepRecentTurns: n, keepRecent: n })).toEqual(resolveSessionConfig({ keepRecent: n }));
      const compacted = (config: object) => compactSessionLoops(sessionOf(3), 2, strategy(), config, 1e9);
      expect(compacted({ keepRecentTurns: n })).toEqual(compacted({ keepRecent: n }));
      expect(buildContextFromSession(compacted({ keepRecentTurns: n }), 2)).toEqual(buildContextFromSession(compacted({ keepRecent: n }), 2));
    }
    expect(resolveSessionConfig({ keepRecentTurns: 4 })).not.toHaveProperty("keepRecentTurns");
  });
  it("a config giving keepRecentTurns and keepRecent different values is an error naming the deprecated field", () => {
    expect(() => resolveSessionConfig({ keepRecentTurns: 4, keepRecent: 6 })).toThrowError(
      "config.keepRecentTurns: the deprecated name of keepRecent, given beside it with another value (4 and 6): give keepRecent only",
    );
    expect(() => compactContext({ messages: [] }, { keepRecentTurns: 4, keepRecent: 6 })).toThrowError(/^config\.keepRecentTurns: /);
  });
  it("bad values name the field as given", () => {
    expect(() => resolveSessionConfig({ keepRecentTurns: -1 })).toThrowError(/^config\.keepRecentTurns: /);
    expect(() => resolveSessionConfig({ keepFirstTurns: -1 })).toThrowError(/config\.keepFirstTurns/);
    expect(() => resolveSessionConfig({ keep_first_turns: 2 } as never)).toThrowError(/unknown option "keep_first_turns"/);
  });
});

describe("originals and stores", () => {
  const dir = mkdtempSync(join(tmpdir(), "ctxfold-session-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("originals stay byte-identical after any number of compactions (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 6 }),
        (loops, steps, order) => {
          const session = sessionOf(loops, steps);
          const before = JSON.stringify(session.loops.map((l) => l.messages));
          let s = session;
          for (const k of order) {
            const current = k % loops;
            s = compactSessionLoops(s, current, strategy(), { keepRecent: 1 + (k % 4), keepFirstTurns: k % 3 }, 1e9);
            buildContextFromSession(s, current);
          }
          expect(JSON.stringify(s.loops.map((l) => l.messages))).toBe(before);
          expect(JSON.stringify(session.loops.map((l) => l.messages))).toBe(before);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("overlays reloaded from the store give an identical context", () => {
    const session = compactSessionLoops(sessionOf(4), 3, strategy(), {}, 1e9);
    new FsSessionStore({ dir }).save(session);
    const { session: back, warnings } = new FsSessionStore({ dir }).load(session.id);
    expect(warnings).toEqual([]);
    expect(buildContextFromSession(back, 3, {}, 1e9)).toEqual(buildContextFromSession(session, 3, {}, 1e9));
  });

  it("sessionFromMessages cuts at user turns and never inside a tool exchange", () => {
    const run = generateRun({ seed: 4, steps: 30, steering: 0.3 });
    const session = sessionFromMessages("g", run.messages);
    expect(session.loops.length).toBeGreaterThan(1);
    expect(session.loops.flatMap((l) => l.messages).map((m) => m.id)).toEqual(run.messages.map((m) => m.id));
    for (const l of session.loops.slice(1)) expect(l.messages[0].role).toBe("user");
    expect(TurnMap.fromMessages(session.loops[0].messages).turnCount()).toBeGreaterThan(0);
  });
});
