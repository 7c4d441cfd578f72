/**
 * Epochs compacted ahead (settings.aheadRatio): a session nearing the soft threshold compacts
 * the conversation as it stands in idle time, and the call that crosses the soft threshold gets
 * that compaction with the messages since appended unchanged. What each call returns depends
 * only on the calls, never on timing; the events of an epoch are reported by the call that uses
 * it; a change of budget or format, or appended messages that leave no room, fall back to a
 * full epoch.
 */
import { describe, expect, it } from "vitest";
import { generateRun, stepEnds } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { createCompactor, type PolicyEvent } from "../../src/policy/index.js";
import { isLedgerPart } from "../../src/policy/relevance/ledger.js";
import { createMemoryStore } from "../../src/store/index.js";

const idle = () => new Promise((resolve) => setImmediate(resolve));
const messages = generateRun({ seed: 21, steps: 160 }).messages;
const budget = 16_000;
/** Where each step ends (an assistant message and its tool results), as a runner calls the session. */
const ends = stepEnds(messages).filter((e) => e >= 4);

/** A reach for epochs ahead at this budget that the generated run's steps, large against it, fit twice. */
const kAhead = { aheadRatio: 0.15, targetRatio: 0.3 };

const withoutLedger = (ms: readonly Message[]) => JSON.stringify(ms.map((m) => ({ ...m, parts: m.parts.filter((p) => !isLedgerPart(p)) })));

/** Each call's output and epoch over the run, the session given idle time between calls or not. */
async function calls(config: Parameters<typeof createCompactor>[0], giveIdle: boolean) {
  const events: PolicyEvent[] = [];
  const session = createCompactor({ store: createMemoryStore(), onEvent: (e) => events.push(e), ...config }).session();
  const out: { json: string; epoch: number; view: Message[]; canonical: Message[]; results: number }[] = [];
  for (const end of ends) {
    const view = messages.slice(0, end);
    const r = await session.compactCanonical(view, { budget });
    out.push({
      json: JSON.stringify(r.canonical),
      epoch: r.epoch,
      view,
      canonical: r.canonical,
      results: events.filter((e) => e.type === "compaction_result").length,
    });
    if (giveIdle) await idle();
  }
  return out;
}

describe("epochs compacted ahead", () => {
  it("give the same output whether the runner leaves idle time or not, and with idle preparation off", async () => {
    const a = await calls(kAhead, true);
    const b = await calls(kAhead, false);
    const c = await calls({ ...kAhead, idlePrepare: false }, true);
    expect(b.map((o) => o.json)).toEqual(a.map((o) => o.json));
    expect(c.map((o) => o.json)).toEqual(a.map((o) => o.json));
    expect(a.at(-1)!.epoch).toBeGreaterThan(3);
  });

  it("an epoch is a stateless compaction of an earlier point, to the target less the reach, the messages since appended unchanged", async () => {
    const out = await calls(kAhead, true);
    const counter = createCompactor({ store: createMemoryStore() });
    const reach = Math.floor(kAhead.aheadRatio * budget);
    let ahead = 0;
    for (const [k, o] of out.entries()) {
      if (k === 0 || o.epoch === out[k - 1].epoch) continue;
      const full = (await createCompactor({ store: createMemoryStore(), ...kAhead }).compactCanonical(o.view, { budget })).canonical;
      if (withoutLedger(o.canonical) === withoutLedger(full)) continue;
      // Planned at an earlier call j: its conversation, compacted to the target less the reach.
      let matched = false;
      for (let j = k - 1; j >= 0 && !matched; j--) {
        const since = o.view.slice(ends[j]);
        if (!since.every((m, i) => o.canonical[o.canonical.length - since.length + i] === m)) break;
        const target = Math.floor(kAhead.targetRatio * budget) - reach;
        const stateless = createCompactor({ store: createMemoryStore(), ...kAhead, targetRatio: (target + 0.5) / budget });
        const head = o.canonical.slice(0, o.canonical.length - since.length);
        matched = withoutLedger(head) === withoutLedger((await stateless.compactCanonical(messages.slice(0, ends[j]), { budget })).canonical);
        // The messages since fit twice the reach.
        if (matched) expect(counter.measure(since) - counter.measure([])).toBeLessThanOrEqual(2 * reach);
      }
      expect(matched).toBe(true);
      expect(counter.measure(o.canonical)).toBeLessThanOrEqual(0.85 * budget);
      ahead++;
    }
    expect(ahead).toBeGreaterThan(2);
  });

  it("report an epoch's events when the call that uses it returns, not while it is compacted in idle time", async () => {
    const out = await calls(kAhead, true);
    for (const [k, o] of out.entries()) {
      const epochs = o.epoch;
      // One compaction_result per epoch so far, whatever was compacted ahead and not yet used.
      expect(o.results).toBe(epochs);
      if (k > 0) expect(o.epoch - out[k - 1].epoch).toBeLessThanOrEqual(1);
    }
  });

  it("fall back to a full epoch when the budget changes after the lead point", async () => {
    const session = createCompactor({ store: createMemoryStore(), ...kAhead }).session();
    const stateless = createCompactor({ store: createMemoryStore() });
    let changed = false;
    for (const end of ends) {
      const view = messages.slice(0, end);
      const before = session.epoch;
      const b = changed ? budget + 2000 : budget;
      const r = await session.compactCanonical(view, { budget: b });
      await idle();
      if (changed && session.epoch !== before) {
        // The epoch planned at the old budget is dropped: this one compacts the whole view.
        expect(withoutLedger(r.canonical)).toBe(withoutLedger((await stateless.compactCanonical(view, { budget: b })).canonical));
        return;
      }
      // Past the lead point of the first epoch (ahead planned), change the budget.
      if (!changed && session.epoch >= 1 && stateless.measure(r.canonical) > 0.7 * budget) changed = true;
    }
    throw new Error("no epoch after the budget changed");
  });

  it("with aheadRatio 0, every epoch compacts the whole conversation in its own call", async () => {
    const stateless = createCompactor({ store: createMemoryStore() });
    const out = await calls({ aheadRatio: 0 }, true);
    for (const [k, o] of out.entries()) {
      if (k === 0 || o.epoch === out[k - 1].epoch) continue;
      expect(withoutLedger(o.canonical)).toBe(withoutLedger((await stateless.compactCanonical(o.view, { budget })).canonical));
    }
  });
});
