/**
 * The recall hint (src/policy/recall-hint.ts): off by default, one line after the first ref of
 * text compaction wrote when on, within the budget, never in the caller's parts, stable within a
 * session's epoch, idempotent, and per call over the compactor's setting.
 */
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { messageTexts } from "../../src/model/texts.js";
import { createCompactor } from "../../src/policy/index.js";
import { kDefaultRecallHint } from "../../src/policy/recall-hint.js";
import { refPattern } from "../../src/store/index.js";
import { newViolations, validate } from "../../src/validate/index.js";
import { exactTokens } from "../integrations/harness.js";
import { thrown } from "../helpers.js";

const kBudget = 6000;
const run = (seed = 4, steps = 40) => generateRun({ seed, steps }).messages;
const occurrences = (messages: readonly Message[], line: string) => messageTexts(messages).join("\n").split(line).length - 1;

/** The text of the first part holding a ref of the default prefix, and its message index. */
function firstRefText(messages: readonly Message[]): { index: number; text: string } | undefined {
  const pattern = refPattern("workspace/outputs");
  for (let i = 0; i < messages.length; i++) {
    for (const t of messageTexts([messages[i]])) {
      pattern.lastIndex = 0;
      if (pattern.test(t)) return { index: i, text: t };
    }
  }
  return undefined;
}

describe("recallHint", () => {
  it("is off by default: the output is byte-identical to one compacted with recallHint: false", async () => {
    const messages = run();
    const plain = await createCompactor().compactCanonical(messages, { budget: kBudget });
    const off = await createCompactor({ recallHint: false }).compactCanonical(messages, { budget: kBudget });
    expect(JSON.stringify(off.canonical)).toBe(JSON.stringify(plain.canonical));
    expect(occurrences(plain.canonical, kDefaultRecallHint)).toBe(0);
  });

  it("on: one line, right after the line of the first ref, within the budget, no new provider violation, the caller's parts untouched", async () => {
    const messages = run();
    const plain = await createCompactor().compactCanonical(messages, { budget: kBudget });
    const r = await createCompactor({ recallHint: true }).compactCanonical(messages, { budget: kBudget });
    expect(r.status).toBe("ok");
    expect(occurrences(r.canonical, kDefaultRecallHint)).toBe(1);
    const first = firstRefText(r.canonical)!;
    expect(first.index).toBe(firstRefText(plain.canonical)!.index);
    const lines = first.text.split("\n");
    const at = lines.indexOf(kDefaultRecallHint);
    expect(at).toBeGreaterThan(0);
    expect(refPattern("workspace/outputs").test(lines[at - 1])).toBe(true);
    expect(lines.slice(0, at - 1).some((l) => refPattern("workspace/outputs").test(l))).toBe(false);
    expect(exactTokens(r.canonical)).toBeLessThanOrEqual(kBudget);
    expect(r.tokensAfter).toBeLessThanOrEqual(kBudget);
    for (const format of ["openai-chat", "anthropic", "ai-sdk"] as const) {
      expect(newViolations(validate(messages, format), validate(r.canonical, format))).toEqual([]);
    }
    // Every part the caller sent that the output keeps is the very object it sent.
    const sent = new Set(messages.flatMap((m) => m.parts));
    const kept = r.canonical
      .flatMap((m) => m.parts)
      .filter((p) => messageTexts([{ id: "x", role: "user", parts: [p] }]).some((t) => t.includes(kDefaultRecallHint)));
    expect(kept.every((p) => !sent.has(p))).toBe(true);
  });

  it("a string is the line itself; the hint never goes into the caller's own text, even where it names a ref", async () => {
    const messages = run(6, 40);
    // The task names a ref of the store: it is the caller's text, and stays verbatim.
    const task = messages.findIndex((m) => m.role === "user");
    const mentioned = "see workspace/outputs/output_0123456789abcdef.txt for the log";
    messages[task] = { ...messages[task], parts: [{ type: "text", text: mentioned }] };
    const line = "Call recall(ref) to read a ref.";
    const r = await createCompactor({ recallHint: line }).compactCanonical(messages, { budget: kBudget });
    expect(occurrences(r.canonical, line)).toBe(1);
    // The task's message may have taken in what followed it (a step summary, steering): its own part is as sent.
    expect(r.canonical.find((m) => m.id === messages[task].id)!.parts[0]).toEqual({ type: "text", text: mentioned });
    expect(firstRefText(r.canonical)!.text).toBe(mentioned);
  });

  it("holds in legacy mode too", async () => {
    const r = await createCompactor({ mode: "legacy", recallHint: true }).compactCanonical(run(), { budget: kBudget });
    expect(occurrences(r.canonical, kDefaultRecallHint)).toBe(1);
    expect(exactTokens(r.canonical)).toBeLessThanOrEqual(kBudget);
  });

  it("is idempotent: compacting the output again changes nothing, and compacting it further adds no second line", async () => {
    const compactor = createCompactor({ recallHint: true });
    const once = await compactor.compact(renderMessages(run(), "openai-chat") as object[], { budget: kBudget, format: "openai-chat" });
    const twice = await compactor.compact(once.messages, { budget: kBudget, format: "openai-chat" });
    expect(JSON.stringify(twice.messages)).toBe(JSON.stringify(once.messages));
    // Compacted further, an output that holds the line gets no second one.
    const smaller = await compactor.compact(once.messages, { budget: kBudget / 3, format: "openai-chat" });
    expect(smaller.tier).not.toBe("normal");
    expect(occurrences(smaller.canonical, kDefaultRecallHint)).toBe(1);
  });

  it("a call's recallHint overrides the setting; bad values are typed errors naming the option", async () => {
    const messages = run();
    const on = createCompactor({ recallHint: true });
    expect(occurrences((await on.compactCanonical(messages, { budget: kBudget, recallHint: false })).canonical, kDefaultRecallHint)).toBe(0);
    const off = createCompactor();
    expect(occurrences((await off.compactCanonical(messages, { budget: kBudget, recallHint: true })).canonical, kDefaultRecallHint)).toBe(1);
    expect(occurrences((await off.compactCanonical(messages, { budget: kBudget, recallHint: "Use recall." })).canonical, "Use recall.")).toBe(1);
    expect(thrown(() => createCompactor({ recallHint: "two\nlines" }), "E_BAD_INPUT").path).toBe("config.recallHint");
    expect(thrown(() => createCompactor({ recallHint: 1 as never }), "E_BAD_INPUT").path).toBe("config.recallHint");
    await expect(off.compactCanonical(messages, { budget: kBudget, recallHint: "" })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options.recallHint",
    });
  });

  it("in a session, the line stays where its epoch put it: every call of an epoch keeps the prefix byte-identical", async () => {
    const messages = run(9, 80);
    const session = createCompactor({ recallHint: true }).session();
    let prev: { epoch: number; wire: string[] } | undefined;
    let calls = 0;
    let hinted = 0;
    for (let end = 10; end <= messages.length; end += 3) {
      const r = await session.compactCanonical(messages.slice(0, end), { budget: kBudget });
      const wire = r.canonical.map((m) => JSON.stringify(m));
      expect(occurrences(r.canonical, kDefaultRecallHint)).toBeLessThanOrEqual(1);
      if (r.epoch > 0) {
        expect(occurrences(r.canonical, kDefaultRecallHint)).toBe(1);
        hinted++;
      }
      if (prev && prev.epoch === r.epoch) {
        expect(wire.slice(0, prev.wire.length)).toEqual(prev.wire);
        calls++;
      }
      prev = { epoch: r.epoch, wire };
    }
    expect(hinted).toBeGreaterThan(5);
    expect(calls).toBeGreaterThan(5);
  });
});
