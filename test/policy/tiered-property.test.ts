/**
 * The tiered compactor's invariants as properties: fast-check draws a generated run (seed and
 * shape: steps, parallel calls, failures, reasoning, steering, redacted reasoning), one of the
 * five provider formats and a budget (a fraction of the run's size, or a few hundred tokens at
 * most, where the result must be budget_infeasible), renders the run in that format and
 * compacts it through the public API. For every such case:
 *
 * 1. budget: "ok" means the output's exact tokens are within the budget; anything else is
 *    "budget_infeasible", over the budget, with the critical set's tokens.
 * 2. validity: the output breaks no provider rule the input did not already break.
 * 3. critical verbatim: system prompt, task, latest user message and latest assistant text are
 *    in the output unchanged (the eval's definition, src/eval/metrics.ts).
 * 4. failures visible: each failed tool result of the input is still there whole, or an "ok"
 *    output names its call id and its error head (../shared/DESIGN.md's invariant; it does not
 *    hold today, see the test), and at least one of them wherever stage 4 did not run (the
 *    eval's failedVisible).
 * 5. recoverable: every input message the output no longer holds is stored whole, or each of its
 *    texts is in the output or, byte for byte, in the store through the refs the output names.
 * 6. deterministic: a fresh compactor gives the same output and stores the same bytes.
 * 7. idempotent: compacting an "ok" output again at the same budget changes nothing.
 *
 * Compactions are shared between the properties (every property draws the same cases from the
 * same fast-check seed); a failing property shrinks to its own smallest case.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { kFormats, parseMessages, renderMessages, type Format } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { promptTokens } from "../../src/eval/contenders.js";
import { contentText, criticalVerbatim, failedVisible, visibleHead } from "../../src/eval/metrics.js";
import { generateRun, type GenerateRunOptions } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { messageTexts } from "../../src/model/texts.js";
import { createCompactor, kDefaultTieredSettings, type CompactResult } from "../../src/policy/index.js";
import { extractExitCode, isFailedOutput, parseJsonOutput } from "../../src/steps/detect.js";
import { resultText } from "../../src/steps/reducer.js";
import { createMemoryStore, getMessages, reachableRefs, type MemoryOffloadStore } from "../../src/store/index.js";
import { newViolations, usesThinking, validate } from "../../src/validate/index.js";

/** Cases per property; every property draws the same cases (fast-check seed kSeed). */
const kRuns = 100;
const kSeed = 3003;

interface Case {
  run: GenerateRunOptions;
  format: Format;
  /** A fraction of the input's size, or a number of tokens. */
  budget: { fraction: number } | { tokens: number };
}

const { softRatio, hardRatio } = kDefaultTieredSettings;
const probability = fc.double({ min: 0, max: 1, noNaN: true });
const caseArb: fc.Arbitrary<Case> = fc.record({
  run: fc.record({
    seed: fc.nat(),
    steps: fc.integer({ min: 0, max: 30 }),
    parallel: probability,
    failures: probability,
    reasoning: probability,
    steering: probability,
    redacted: probability,
  }),
  format: fc.constantFrom(...kFormats),
  budget: fc.oneof(
    ...(
      [
        [1, 0.02, 0.3], // far below the input: stage 4 merges, or the critical set does not fit
        [3, 0.3, 1 / hardRatio], // below the input: the critical tier
        [2, 1 / hardRatio, 1 / softRatio], // the pressure tier
        [1, 1 / softRatio, 1.5], // the normal tier: nothing to do
      ] as const
    ).map(([weight, min, max]) => ({ weight, arbitrary: fc.double({ min, max, maxExcluded: true, noNaN: true }).map((fraction) => ({ fraction })) })),
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 400 }).map((tokens) => ({ tokens })) },
  ),
});

interface Compacted {
  /** The run as the compactor parses it from the rendered input. */
  input: Message[];
  budget: number;
  store: MemoryOffloadStore;
  result: CompactResult;
}

const kCompacted = new Map<string, Promise<Compacted>>();
afterAll(() => kCompacted.clear());

async function compactFresh(c: Case): Promise<Compacted> {
  const wire = renderMessages(generateRun(c.run).messages, c.format);
  const input = parseMessages(wire, { format: c.format }).messages;
  const store = createMemoryStore();
  const compactor = createCompactor({ store });
  const budget = "tokens" in c.budget ? c.budget.tokens : Math.max(1, Math.floor(c.budget.fraction * compactor.measure(input)));
  const result = await compactor.compact(wire, { budget, format: c.format });
  return { input, budget, store, result };
}

/** The compaction of a case, made once for all the properties that draw it. */
function compacted(c: Case): Promise<Compacted> {
  const key = JSON.stringify(c);
  let hit = kCompacted.get(key);
  if (!hit) kCompacted.set(key, (hit = compactFresh(c)));
  return hit;
}

const chat = (messages: readonly Message[]) => renderMessages(messages, "openai-chat") as OpenAIChatMessage[];

/** Every (ref, bytes) of a store, in the order stored. */
const storedBytes = (store: MemoryOffloadStore) => store.refs().map((ref) => [ref, Buffer.from(store.get(ref)).toString("hex")]);

/** What a reader of `output` gets back from the store: the text of every ref it reaches, and the texts of the stored messages among them. */
function recoverableTexts(store: MemoryOffloadStore, output: readonly Message[]): { reached: Set<string>; stored: Set<string>; inMessages: Set<string> } {
  const reached = reachableRefs(store, [JSON.stringify(output)]);
  const stored = new Set<string>();
  const inMessages = new Set<string>();
  for (const ref of reached) {
    expect(store.has(ref), `${ref} is named but not stored`).toBe(true);
    const text = store.getText(ref);
    stored.add(text);
    // An index of stored messages (putMessages): the messages it names, read back and validated.
    if (!text.startsWith('{"ctxfold":"messages"')) continue;
    for (const m of getMessages(store, ref)) for (const t of messageTexts([m])) inMessages.add(t);
  }
  return { reached, stored, inMessages };
}

const property = (check: (c: Case) => Promise<void>, options: fc.Parameters<[Case]> = {}) =>
  fc.assert(fc.asyncProperty(caseArb, check), { numRuns: kRuns, seed: kSeed, ...options });

/** The failed tool results of the input (isFailedOutput), as the OpenAI Chat tool messages the eval's failedVisible reads, with their error heads. */
function failedResults(input: readonly Message[]): { callId: string; message: OpenAIChatMessage; text: string; head: string }[] {
  const out = [];
  for (const m of input) {
    for (const p of m.parts) {
      if (p.type !== "tool-result") continue;
      const text = resultText(p.content);
      const json = parseJsonOutput(text);
      if (!isFailedOutput(text, json, p.isError, extractExitCode(text, json))) continue;
      out.push({ callId: p.callId, message: { role: "tool", tool_call_id: p.callId, content: text } as OpenAIChatMessage, text, head: visibleHead(text) });
    }
  }
  return out;
}

describe("tiered compaction: properties over generated runs in every format and any budget", () => {
  const seen = { ok: 0, infeasible: 0, tiers: new Set<string>(), formats: new Set<string>() };

  it("1. budget: ok means within the budget by exact count; else budget_infeasible, over it, with the critical tokens", async () => {
    await property(async (c) => {
      const { budget, result: r } = await compacted(c);
      seen.tiers.add(r.tier);
      seen.formats.add(c.format);
      // Exact o200k with OpenAI's overheads over the output as OpenAI Chat: the eval's measure, and the compactor's.
      const tokens = promptTokens(chat(r.canonical));
      if (r.status === "ok") {
        seen.ok++;
        expect(tokens).toBeLessThanOrEqual(budget);
        expect(r.infeasible).toBeUndefined();
      } else {
        seen.infeasible++;
        expect(r.status).toBe("budget_infeasible");
        expect(tokens).toBeGreaterThan(budget);
        expect(r.infeasible).toMatchObject({ budget });
        expect(Number.isInteger(r.infeasible!.criticalTokens) && r.infeasible!.criticalTokens > 0).toBe(true);
      }
    });
    // The cases reached every tier and both outcomes, in every format.
    expect(seen.ok).toBeGreaterThan(0);
    expect(seen.infeasible).toBeGreaterThan(0);
    expect([...seen.tiers].sort()).toEqual(["critical", "normal", "pressure"]);
    expect(seen.formats.size).toBe(kFormats.length);
  }, 120_000);

  it("2. validity: no provider-rule violation the input did not have, canonical and as rendered", async () => {
    await property(async (c) => {
      const { input, result: r } = await compacted(c);
      // A compaction may drop every reasoning part of a thinking transcript: judged as one.
      const options = { thinking: usesThinking(input) };
      const rendered = parseMessages(r.messages, { format: c.format }).messages;
      for (const f of kFormats) {
        const before = validate(input, f, options);
        expect(newViolations(before, validate(r.canonical, f, options)), f).toEqual([]);
        if (f === c.format) expect(newViolations(before, validate(rendered, f, options)), `${f} as rendered`).toEqual([]);
      }
    });
  }, 120_000);

  it("3. critical verbatim: system prompt, task, latest user message, latest assistant text", async () => {
    await property(async (c) => {
      const { input, result: r } = await compacted(c);
      const verbatim = criticalVerbatim(chat(input), chat(r.canonical));
      expect(
        Object.entries(verbatim)
          .filter(([, ok]) => !ok)
          .map(([kind]) => kind),
      ).toEqual([]);
    });
  }, 120_000);

  // Defect: error heads (at the tightest budgets ids too) leave ok outputs: stage 3's step summary gives older steps their plain summary line when every step failed, and stage 4 shrinks it to its ref.
  it.fails("4. failures visible: each failed tool result of an ok output is kept whole, or its call id and its error head are in the output", async () => {
    await property(
      async (c) => {
        const { input, result: r } = await compacted(c);
        if (r.status !== "ok") return;
        const out = chat(r.canonical);
        const texts = out.map(contentText);
        for (const f of failedResults(input)) {
          if (out.some((o) => o.role === "tool" && o.tool_call_id === f.callId && contentText(o) === f.text)) continue;
          const callNamed = failedVisible(f.message, out, "");
          const headShown = f.head === "" || texts.some((t) => t.includes(f.head));
          expect({ call: f.callId, head: f.head, callNamed, headShown }).toMatchObject({ callNamed: true, headShown: true });
        }
      },
      { endOnFailure: true },
    );
  }, 120_000);

  it("4b. failures visible as the eval counts them (kept whole, call id or error head), wherever stage 4 did not run", async () => {
    await property(async (c) => {
      const { input, result: r } = await compacted(c);
      if (r.stages.some((s) => s.stage === 4)) return;
      const out = chat(r.canonical);
      const hidden = failedResults(input).filter((f) => !failedVisible(f.message, out, f.head));
      expect(hidden.map((f) => `${f.callId}: ${f.head}`)).toEqual([]);
    });
  }, 120_000);

  it("5. recoverable: what the output no longer holds comes back byte for byte through the refs it names", async () => {
    await property(async (c) => {
      const { input, store, result: r } = await compacted(c);
      const { reached, stored, inMessages } = recoverableTexts(store, r.canonical);
      expect(r.refs.filter((ref) => !reached.has(ref))).toEqual([]);
      const kept = new Set(r.canonical.map((m) => JSON.stringify(m)));
      const out = messageTexts(r.canonical);
      for (const m of input) {
        // Held as it was, or stored whole (its JSON is what putMessages stores)…
        const json = JSON.stringify(m);
        if (kept.has(json) || stored.has(json)) continue;
        // …or each of its texts is still in the output, stored as it was, or in a stored message.
        const lost = messageTexts([m]).filter((t) => t !== "" && !out.some((o) => o.includes(t)) && !stored.has(t) && !inMessages.has(t));
        expect(lost.map((t) => `${m.id}: ${t.slice(0, 80)}`)).toEqual([]);
      }
    });
  }, 120_000);

  it("6. deterministic: a fresh compactor gives the same output and stores the same bytes in the same order", async () => {
    await property(async (c) => {
      const first = await compacted(c);
      const again = await compactFresh(c);
      expect(JSON.stringify(again.result.messages)).toBe(JSON.stringify(first.result.messages));
      expect(storedBytes(again.store)).toEqual(storedBytes(first.store));
    });
  }, 120_000);

  it("7. idempotent: an ok output compacted again at the same budget comes back unchanged, nothing removed or shortened", async () => {
    await property(async (c) => {
      const { budget, result: r } = await compacted(c);
      if (r.status !== "ok") return;
      const twice = await createCompactor({ store: createMemoryStore() }).compact(r.messages, { budget, format: c.format });
      expect(JSON.stringify(twice.messages)).toBe(JSON.stringify(r.messages));
      expect(twice.refs).toEqual([]);
    });
  }, 120_000);
});
