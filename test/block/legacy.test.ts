import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kFormats } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import type { Message, Part } from "../../src/model/schema.js";
import { kDefaultCompactionSettings, resolveSessionConfig, shouldCompactSession, type SessionCompactionConfig } from "../../src/block/config.js";
import { DefaultCompaction, compactMessages, targetTokens, type CompactMessagesResult } from "../../src/block/legacy.js";
import { truncateToolOutputs } from "../../src/block/turns.js";
import { createMemoryStore, getMessages, type MemoryOffloadStore } from "../../src/store/index.js";
import { tokenMeasure } from "../../src/tokens/measure.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { newViolations, usesThinking, validate } from "../../src/validate/index.js";

const counter = new TokenCounter();
/** Estimated tokens of messages, summed by the token measure as the orchestrator's estimateMessages does. */
const estimate = (messages: readonly Message[]): number => tokenMeasure(counter).sum(messages);
const kMarker = /\[… \d+ (?:lines cut|long lines shortened); full output: (\S+)\]/;

/** The run's messages up to and including turn `t` (a run in progress when it ends on tool results). */
const prefix = (messages: readonly Message[], t: number): Message[] => messages.filter((m) => m.turn!.index <= t);
const stripTurns = (messages: readonly Message[]): Message[] => messages.map(({ turn: _turn, ...m }) => m);

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

function compact(
  messages: readonly Message[],
  maxContextTokens: number,
  config: Partial<SessionCompactionConfig> = {},
  store: MemoryOffloadStore = createMemoryStore(),
) {
  return { store, r: compactMessages(messages, config, maxContextTokens, { store, counter }) };
}

function expectNoNewViolations(before: readonly Message[], after: readonly Message[], label: string): void {
  const thinking = usesThinking(before);
  for (const format of kFormats) {
    expect(newViolations(validate(before, format), validate(after, format)), `${label} ${format}`).toEqual([]);
    expect(newViolations(validate(before, format, { thinking }), validate(after, format, { thinking })), `${label} ${format} (thinking)`).toEqual([]);
  }
}

/** Every input message is in the output (same object, or its parts with cut outputs recoverable) or stored whole in the history. */
function expectRecoverable(input: readonly Message[], r: CompactMessagesResult, store: MemoryOffloadStore, label: string): void {
  const history = r.historyRef ? getMessages(store, r.historyRef) : [];
  const historyById = new Map(history.map((m) => [m.id, m]));
  const outParts = new Set<Part>(r.messages.flatMap((m) => m.parts));
  const outResults = new Map<string, Part>();
  for (const m of r.messages) for (const p of m.parts) if (p.type === "tool-result") outResults.set(p.callId, p);
  for (const m of input) {
    const stored = historyById.get(m.id);
    if (stored) {
      expect(stored, `${label} ${m.id}`).toEqual(JSON.parse(JSON.stringify(m)));
      continue;
    }
    for (const p of m.parts) {
      if (outParts.has(p)) continue;
      expect(p.type, `${label} ${m.id}: a changed part`).toBe("tool-result");
      if (p.type !== "tool-result") continue;
      const now = outResults.get(p.callId);
      expect(now?.type, `${label} ${m.id}: result ${p.callId} kept`).toBe("tool-result");
      if (now?.type !== "tool-result") continue;
      p.content.forEach((c, k) => {
        const cut = now.content[k];
        if (c.type !== "text" || cut.type !== "text" || cut.text === c.text) return;
        const ref = kMarker.exec(cut.text)?.[1];
        expect(ref, `${label} ${m.id}: marker`).toBeDefined();
        expect(r.refs).toContain(ref);
        expect(store.getText(ref!)).toBe(c.text);
      });
    }
  }
}

describe("targetTokens", () => {
  it("is the largest count at which the trigger does not fire", () => {
    for (const max of [1000, 8192, 100_000, 128_000, 200_000]) {
      for (const cfg of [
        kDefaultCompactionSettings,
        { compactAtPct: 0.7, compactBudgetThresholdPct: 0.1 },
        { compactAtPct: 1, compactBudgetThresholdPct: 0 },
      ]) {
        const t = targetTokens(cfg, max);
        expect(shouldCompactSession(t, max, cfg)).toBe(false);
        expect(shouldCompactSession(t + 1, max, cfg)).toBe(true);
        expect(Math.abs(t - (cfg.compactAtPct - cfg.compactBudgetThresholdPct) * max)).toBeLessThanOrEqual(1);
      }
    }
    expect(targetTokens(kDefaultCompactionSettings, 100_000)).toBe(85_000);
    expect(targetTokens({ compactAtPct: 0.5, compactBudgetThresholdPct: 0.6 }, 1000)).toBe(0);
  });
});

describe("compactMessages levels", () => {
  it("level 0: a context within the target comes back as is", () => {
    const run = generateRun({ seed: 4, steps: 6 });
    const { r, store } = compact(run.messages, 1_000_000);
    expect(r.level).toBe(0);
    expect(r.messages).not.toBe(run.messages);
    expect(r.messages).toHaveLength(run.messages.length);
    r.messages.forEach((m, i) => expect(m).toBe(run.messages[i]));
    expect(r.tokensAfter).toBe(r.tokensBefore);
    expect(r.refs).toEqual([]);
    expect(store.refs()).toEqual([]);
    expect(compactMessages([], {}, 10).level).toBe(0);
  });

  it("reaches each level on prefixes of growing size against a fixed budget", () => {
    const budget = 12_000;
    const seen = new Map<number, number>();
    for (const seed of [1, 3]) {
      const run = generateRun({ seed, steps: 60 });
      const last = run.messages.at(-1)!.turn!.index;
      let highest = 0;
      for (let t = 1; t <= last; t += 2) {
        const input = prefix(run.messages, t);
        const { r, store } = compact(input, budget);
        seen.set(r.level, (seen.get(r.level) ?? 0) + 1);
        const label = `gen-${seed} turn ${t} level ${r.level}`;
        expect(Math.abs(r.tokensBefore - estimate(input)), label).toBeLessThanOrEqual(1);
        if (r.level === 0) expect(r.tokensBefore).toBeLessThanOrEqual(r.target);
        else expect(r.tokensBefore).toBeGreaterThan(r.target);
        // Levels 0 → 1 → 2 only go up as the run grows (the output of level 1 only grows with it).
        if (highest >= 2) expect(r.level, label).toBeGreaterThanOrEqual(2);
        else expect(r.level, label).toBeGreaterThanOrEqual(highest);
        highest = Math.max(highest, r.level);
        expect(r.fits, label).toBe(true);
        expect(r.tokensAfter, label).toBeLessThanOrEqual(r.target);
        expect(Math.abs(r.tokensAfter - estimate(r.messages)), label).toBeLessThanOrEqual(1);
        expectNoNewViolations(input, r.messages, label);
        expectRecoverable(input, r, store, label);
        if (r.level >= 2) {
          const summary = r.messages.filter((m) => m.parts.some((p) => p.type === "text" && p.text.startsWith("[ctxfold:")));
          expect(summary, label).toHaveLength(1);
          const text = (summary[0].parts.find((p) => p.type === "text" && p.text.startsWith("[ctxfold:")) as { text: string }).text;
          expect(text).toContain(r.historyRef);
          if (r.level === 2) expect(text.split("\n").length).toBeGreaterThan(1);
          else expect(text.split("\n")).toHaveLength(1);
        }
      }
    }
    for (const level of [0, 1, 2, 3]) expect(seen.get(level), `level ${level} reached`).toBeGreaterThan(0);
  });

  it("level 1 cuts the oldest outputs first and stops as soon as within the target", () => {
    const run = generateRun({ seed: 3, steps: 60 });
    const input = prefix(run.messages, 13);
    // A budget halfway between the input and the input with every output cut.
    const allCut = estimate(truncateToolOutputs(input, 50, createMemoryStore()).messages);
    const before = estimate(input);
    expect(allCut).toBeLessThan(before);
    const { r } = compact(input, Math.floor((allCut + before) / 2 / 0.85));
    expect(r.level).toBe(1);
    expect(r.fits).toBe(true);
    const changed = r.messages.map((m, i) => m !== input[i]);
    expect(r.messages).toHaveLength(input.length);
    const lastChanged = changed.lastIndexOf(true);
    // Everything before the last cut that could be cut was cut; nothing after it was.
    const cuttable = input.map((m) =>
      m.parts.some(
        (p) =>
          p.type === "tool-result" &&
          p.content.some((c) => c.type === "text" && (c.text.replace(/\r?\n$/, "").split(/\r?\n/).length > 50 || c.text.length > 10_000)),
      ),
    );
    for (let i = 0; i < input.length; i++) {
      if (i < lastChanged) expect(changed[i], `message ${i}`).toBe(cuttable[i]);
      if (i > lastChanged) expect(changed[i], `message ${i}`).toBe(false);
    }
    expect(cuttable.slice(lastChanged + 1).some(Boolean)).toBe(true); // stopped early: newer outputs stay whole
    expect(r.refs.length).toBe(changed.filter(Boolean).length);
  });

  it("level 2 keeps the head and the recent turns verbatim and summarises the middle", () => {
    const run = generateRun({ seed: 2, steps: 40, steering: 0 });
    const input = run.messages;
    const { r, store } = compact(input, 20_000);
    expect(r.level).toBe(2);
    // Head: turns 0 and 1 (system + task, first assistant step), the very objects.
    const head = input.filter((m) => m.turn!.index <= 1);
    head.forEach((m, i) => expect(r.messages[i]).toBe(m));
    const summary = r.messages[head.length];
    expect(summary.role).toBe("user");
    expect(summary.meta.ctxfold).toMatchObject({ kind: "turn-summary", level: 2, ref: r.historyRef });
    const text = (summary.parts[0] as { text: string }).text;
    const [header, ...lines] = text.split("\n");
    expect(header).toMatch(/^\[ctxfold: \d+ earlier turns \(turns 2–\d+\) summarised below to save context; the original messages: \S+\]$/);
    expect(lines[0]).toMatch(/^Turn 2: /);
    const summaryTokens = lines.reduce((n, l) => n + counter.estimate(l), 0);
    expect(summaryTokens).toBeLessThanOrEqual(kDefaultCompactionSettings.maxSummaryTokens);
    // Recent: the last 10 turns, outputs cut (level 1 ran over everything first).
    const last = input.at(-1)!.turn!.index;
    const recent = input.filter((m) => m.turn!.index > last - 10);
    expect(r.messages.slice(head.length + 1).map((m) => m.id)).toEqual(recent.map((m) => m.id));
    // The removed turns are stored whole.
    const removed = getMessages(store, r.historyRef!);
    expect(removed.map((m) => m.id)).toEqual(input.filter((m) => m.turn!.index >= 2 && m.turn!.index <= last - 10).map((m) => m.id));
    expect(r.removedTurns).toBe(last - 10 - 1);
  });

  it("level 3 drops the middle behind a one-line marker and shrinks the recent turns to fit", () => {
    const run = generateRun({ seed: 2, steps: 40, steering: 0 });
    const { r, store } = compact(run.messages, 9_000);
    expect(r.level).toBe(3);
    expect(r.fits).toBe(true);
    const marker = r.messages.find((m) => (m.meta.ctxfold as { kind?: string } | undefined)?.kind === "turn-summary")!;
    const text = (marker.parts[0] as { text: string }).text;
    expect(text).toMatch(/^\[ctxfold: \d+ earlier turns \(turns 2–\d+\) removed to save context; the original messages: \S+\]$/);
    expect(getMessages(store, r.historyRef!).map((m) => m.id)).toContain(run.messages[4].id);
    // It kept as many recent turns as fit: one more (cut as level 1 cuts) would not have.
    const last = run.messages.at(-1)!.turn!.index;
    const recentTurns = [...new Set(r.messages.map((m) => m.turn?.index))].filter((t): t is number => t !== undefined && t > 1);
    expect(recentTurns.length).toBeGreaterThanOrEqual(1);
    expect(recentTurns.length).toBeLessThan(10);
    expect(Math.max(...recentTurns)).toBe(last);
    const next = run.messages.filter((m) => m.turn!.index === Math.min(...recentTurns) - 1);
    const nextTokens = estimate(truncateToolOutputs(next, 50, createMemoryStore()).messages);
    expect(r.tokensAfter + nextTokens).toBeGreaterThan(r.target - 5);
  });

  it("keeps Anthropic's extended thinking rule for a tool loop in progress", () => {
    const signed = (m: Message | undefined) => m?.parts[0]?.type === "reasoning" && !!(m.parts[0].signature || m.parts[0].redacted);
    let removedSome = 0;
    for (let seed = 400; seed < 420; seed++) {
      const run = generateRun({ seed, steps: 40, reasoning: 0.3, redacted: 0, steering: 0 });
      const input = prefix(run.messages, run.messages.at(-1)!.turn!.index - 2);
      expect(input.at(-1)!.role).toBe("tool");
      for (const keepFirstTurns of [0, 1, 2]) {
        const { r } = compact(input, 6_000, { keepFirstTurns });
        expectNoNewViolations(input, r.messages, `gen-${seed} keepFirstTurns ${keepFirstTurns}`);
        if (r.level < 2 || keepFirstTurns === 2) continue;
        removedSome++;
        // The summary starts a user turn: the first assistant message after it reasons first.
        const at = r.messages.findIndex((m) => m.parts.some((p) => p.type === "text" && p.text.startsWith("[ctxfold:")));
        expect(signed(r.messages.slice(at + 1).find((m) => m.role === "assistant")), `gen-${seed}`).toBe(true);
      }
    }
    expect(removedSome).toBeGreaterThan(5);
  });

  it("keeps the opening of a thinking turn in progress when no later turn opens with reasoning", () => {
    const run = generateRun({ seed: 17, steps: 30, reasoning: 0, steering: 0 });
    // Extended thinking without interleaving: only the first assistant message of the user turn reasons.
    const opener = run.messages.find((x) => x.role === "assistant")!;
    const input = prefix(run.messages, 25).map((m) =>
      m.id === opener.id ? { ...m, parts: [{ type: "reasoning" as const, text: "Plan the work.", signature: "c2lnbmF0dXJl" }, ...m.parts] } : m,
    );
    for (const keepFirstTurns of [0, 1, 2]) {
      const { r } = compact(input, 4_000, { keepFirstTurns });
      const label = `keepFirstTurns ${keepFirstTurns}`;
      expectNoNewViolations(input, r.messages, label);
      expect(r.level, label).toBeGreaterThanOrEqual(2);
      // The opening step and its results stay, and the summary follows them.
      const at = r.messages.findIndex((m) => m.parts.some((p) => p.type === "text" && p.text.startsWith("[ctxfold:")));
      const before = r.messages.slice(0, at);
      expect(
        before.map((m) => m.id),
        label,
      ).toContain(opener.id);
      expect(r.messages[at - 1].role, label).toBe("tool");
    }
  });

  it("when nothing more can go, returns the smallest result it reaches, over the target", () => {
    const run = generateRun({ seed: 2, steps: 40 });
    const { r } = compact(run.messages, 500);
    expect(r.level).toBe(3);
    expect(r.fits).toBe(false);
    expect(r.tokensAfter).toBeGreaterThan(r.target);
    // Keeps the system prompt, the task, the first step and one recent turn.
    const last = run.messages.at(-1)!.turn!.index;
    expect(r.messages.at(-1)!.turn!.index).toBe(last);
  });

  it("keeps tool calls and their results together (never cuts inside a turn)", () => {
    for (let seed = 1; seed <= 10; seed++) {
      const run = generateRun({ seed, steps: 30, parallel: 0.5 });
      for (const budget of [4000, 8000, 16_000]) {
        const { r } = compact(run.messages, budget);
        const calls = new Set(
          r.messages
            .flatMap((m) => m.parts)
            .filter((p) => p.type === "tool-call")
            .map((p) => (p as { id: string }).id),
        );
        const results = new Set(
          r.messages
            .flatMap((m) => m.parts)
            .filter((p) => p.type === "tool-result")
            .map((p) => (p as { callId: string }).callId),
        );
        expect([...calls].sort()).toEqual([...results].sort());
        // Turns are whole: a turn index present in the output has all its messages' ids.
        const outIds = new Set(r.messages.map((m) => m.id));
        const byTurn = new Map<number, Message[]>();
        for (const m of run.messages) byTurn.set(m.turn!.index, [...(byTurn.get(m.turn!.index) ?? []), m]);
        for (const ms of byTurn.values()) {
          const present = ms.filter((m) => outIds.has(m.id)).length;
          // A merged message leaves its id behind; tool messages never merge, so count those.
          const tools = ms.filter((m) => m.role === "tool");
          const toolsPresent = tools.filter((m) => outIds.has(m.id)).length;
          expect(toolsPresent === 0 || toolsPresent === tools.length).toBe(true);
          if (present === 0) expect(toolsPresent).toBe(0);
        }
      }
    }
  });
});

describe("compactMessages invariants", () => {
  it("introduces no provider violation, for every format, on 50 runs at several budgets (whole runs, runs in progress, no turn ids)", () => {
    for (let seed = 100; seed < 150; seed++) {
      const run = generateRun({ seed, steps: 10 + (seed % 35), reasoning: seed % 3 === 0 ? 0.9 : 0.3, parallel: 0.3, steering: 0.15 });
      const last = run.messages.at(-1)!.turn!.index;
      const inputs: [string, Message[]][] = [
        ["whole", run.messages],
        ["in progress", prefix(run.messages, Math.max(1, last - 1 - (seed % 4)))],
        ["no turn ids", stripTurns(run.messages)],
      ];
      for (const [kind, input] of inputs) {
        for (const budget of [2_000, 6_000, 15_000, 40_000]) {
          const config = seed % 5 === 0 ? { keepFirstTurns: seed % 2, keepRecent: seed % 4 } : {};
          const { r, store } = compact(input, budget, config);
          const label = `gen-${seed} ${kind} @${budget} level ${r.level}`;
          expectNoNewViolations(input, r.messages, label);
          expectRecoverable(input, r, store, label);
          expect(r.tokensAfter <= r.target).toBe(r.fits);
          if (r.level > 0) expect(r.tokensBefore).toBeGreaterThan(r.target);
        }
      }
    }
  });

  it("reaches the target whenever level 3 can", () => {
    for (let seed = 200; seed < 215; seed++) {
      const run = generateRun({ seed, steps: 20 + (seed % 20) });
      for (const input of [run.messages, stripTurns(run.messages)]) {
        // The smallest result level 3 reaches: every level at its strongest.
        const floor = compact(input, 10).r;
        expect(floor.fits).toBe(false);
        const cfg = resolveSessionConfig({});
        for (const slack of [0, 1, 50, 500, 3000]) {
          const max = Math.ceil((floor.tokensAfter + slack) / (cfg.compactAtPct - cfg.compactBudgetThresholdPct)) + 1;
          const { r } = compact(input, max);
          if (r.target >= floor.tokensAfter) {
            expect(r.fits, `gen-${seed} slack ${slack}`).toBe(true);
            expect(r.tokensAfter).toBeLessThanOrEqual(r.target);
          }
        }
      }
    }
  });

  it("keeps system messages and the first user message verbatim", () => {
    for (let seed = 300; seed < 320; seed++) {
      const run = generateRun({ seed, steps: 25 });
      const system = run.messages.filter((m) => m.role === "system");
      const task = run.messages.find((m) => m.role === "user")!;
      for (const budget of [3_000, 9_000]) {
        const { r } = compact(run.messages, budget);
        for (const s of system) expect(r.messages).toContain(s);
        expect(r.messages).toContain(task);
        // With keepFirstTurns ≤ 1 the summary may be merged into the task: its parts stay first, unchanged.
        for (const keepFirstTurns of [0, 1]) {
          const r2 = compact(run.messages, budget, { keepFirstTurns }).r;
          for (const s of system) expect(r2.messages).toContain(s);
          const kept = r2.messages.find((m) => m.id === task.id)!;
          expect(kept.parts.slice(0, task.parts.length)).toEqual(task.parts);
          task.parts.forEach((p, k) => expect(kept.parts[k]).toBe(p));
        }
      }
    }
  });

  it("keeps pinned messages and mid-run system messages with their turns", () => {
    const run = generateRun({ seed: 33, steps: 30, steering: 0 });
    const input = run.messages.map((m) => (m.turn!.index === 8 && m.role === "assistant" ? { ...m, pinned: true } : m));
    const at = input.findIndex((m) => m.turn!.index === 15);
    input.splice(at, 0, { id: "mid-system", role: "system", parts: [{ type: "text", text: "Reminder: keep going." }], turn: { loop: 0, index: 15 }, meta: {} });
    const { r, store } = compact(input, 6_000);
    expect(r.level).toBeGreaterThanOrEqual(2);
    for (const m of input.filter((m) => m.pinned || (m.turn!.index === 15 && m.role === "system"))) expect(r.messages.map((x) => x.id)).toContain(m.id);
    const pinned = input.find((m) => m.pinned)!;
    expect(r.messages).toContainEqual(pinned);
    expectNoNewViolations(input, r.messages, "pinned");
    expectRecoverable(input, r, store, "pinned");
  });

  it("compacting a compacted context again at the same budget changes nothing", () => {
    for (const seed of [5, 6, 7]) {
      const run = generateRun({ seed, steps: 40 });
      for (const budget of [5_000, 15_000]) {
        const store = createMemoryStore();
        const once = compact(run.messages, budget, {}, store).r;
        if (!once.fits) continue;
        const twice = compact(once.messages, budget, {}, store).r;
        expect(twice.level).toBe(0);
        twice.messages.forEach((m, i) => expect(m).toBe(once.messages[i]));
      }
    }
  });

  it("property: never mutates the input array or its messages", () => {
    const runs = [1, 2, 3, 4].map((seed) => generateRun({ seed, steps: 25, reasoning: 0.5 }).messages);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: runs.length - 1 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 200, max: 60_000 }),
        fc.record({
          keepFirstTurns: fc.integer({ min: 0, max: 4 }),
          keepRecent: fc.integer({ min: 0, max: 12 }),
          maxSummaryTokens: fc.integer({ min: 0, max: 3000 }),
          toolOutputMaxLines: fc.integer({ min: 0, max: 80 }),
        }),
        fc.boolean(),
        (which, upTo, budget, config, ids) => {
          const source = runs[which];
          const base = source.filter((m) => m.turn!.index <= upTo);
          const input = deepFreeze(structuredClone(ids ? base : stripTurns(base)));
          const snapshot = structuredClone(input);
          const { r } = compact(input, budget, config);
          expect(input).toEqual(snapshot);
          expect(r.messages).not.toBe(input);
          expect(r.tokensAfter <= r.target).toBe(r.fits);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("DefaultCompaction", () => {
  it("is the CompactionStrategy over compactMessages, with its own store", () => {
    const run = generateRun({ seed: 9, steps: 40 });
    const strategy = new DefaultCompaction({ counter });
    const config = resolveSessionConfig({});
    const out = strategy.compact(run.messages, config, 10_000);
    const again = compactMessages(run.messages, config, 10_000, { store: createMemoryStore(), counter });
    expect(out).toEqual(again.messages);
    const info = strategy.compactMessages(run.messages, config, 10_000);
    for (const ref of info.refs) expect(strategy.store.has(ref)).toBe(true);
    expect(strategy.compact(run.messages, config, 10_000_000)).toEqual(run.messages);
  });

  it("reads the deprecated keepRecentTurns as keepRecent, with the same result at every level", () => {
    const run = generateRun({ seed: 9, steps: 40 });
    for (const [n, budget] of [
      [1, 3_000],
      [4, 6_000],
      [10, 12_000],
    ]) {
      const under = (config: object) => compactMessages(run.messages, config, budget, { store: createMemoryStore(), counter });
      expect(under({ keepRecentTurns: n })).toEqual(under({ keepRecent: n }));
    }
    expect(() => compactMessages([], { keepRecentTurns: 3, keepRecent: 2 }, 1000)).toThrow(/^config\.keepRecentTurns: the deprecated name of keepRecent/);
  });

  it("rejects a bad context size and a bad config", () => {
    const strategy = new DefaultCompaction();
    expect(() => strategy.compact([], resolveSessionConfig({}), 0)).toThrow(/positive number/);
    expect(() => compactMessages([], { keepRecent: -1 }, 1000)).toThrow();
  });
});
