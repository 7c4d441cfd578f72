/**
 * The tiered compactor (seed 003): the seven tests the seed names, then the invariants of
 * ../shared/DESIGN.md as properties over generated runs at 4k, 8k and 32k.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { kFormats, parseMessages, renderMessages } from "../../src/adapters/index.js";
import { readConfigFile } from "../../src/eval/index.js";
import { promptTokens } from "../../src/eval/tokens.js";
import { generateRun } from "../../src/gen/run.js";
import { tightTaskPrompt } from "../helpers.js";
import type { Message } from "../../src/model/schema.js";
import { messageTexts } from "../../src/model/texts.js";
import { isStepSummaryPart } from "../../src/steps/messages.js";
import { classify } from "../../src/policy/classify.js";
import { isLedgerPart } from "../../src/policy/relevance/ledger.js";
import type { PolicyEvent } from "../../src/policy/events.js";
import { compactionStats, type CtxfoldEvent } from "../../src/policy/telemetry.js";
import { compactionBlockStale, compactionEnded, compactionStarted, sessionOverlayCorrupt } from "../../src/block/events.js";
import { createCompactor, type Compactor } from "../../src/policy/index.js";
import { StepCache } from "../../src/policy/step-cache.js";
import { createMemoryStore, getMessages, reachableRefs, type OffloadStore } from "../../src/store/index.js";
import { newViolations, validate } from "../../src/validate/index.js";

const text = (m: Message) =>
  m.parts
    .filter((p) => p.type === "text")
    .map((p) => (p as { text: string }).text)
    .join("\n");
const run = (seed: number, steps: number, extra: Parameters<typeof generateRun>[0] = { seed }) => generateRun({ ...extra, seed, steps }).messages;
const setup = (config: Parameters<typeof createCompactor>[0] = {}) => {
  const store = createMemoryStore();
  const events: PolicyEvent[] = [];
  const compactor = createCompactor({ store, onEvent: (e) => events.push(e), ...config });
  return { store, events, compactor };
};

/**
 * A session over generated run `seed` (`steps` steps, in Anthropic's format, extended thinking
 * in some turns) called before every assistant message from `from` on, at `budget`: no call's
 * output, canonical or rendered and parsed back, has a provider error its input did not have.
 */
async function expectValidThinkingSession(seed: number, steps: number, budget: number, from: number): Promise<void> {
  const messages = run(seed, steps);
  const session = setup().compactor.session();
  for (let at = from; at < messages.length; at++) {
    if (messages[at].role !== "assistant") continue;
    const input = renderMessages(messages.slice(0, at), "anthropic");
    const r = await session.compact(input, { budget, format: "anthropic" });
    const before = validate(parseMessages(input, { format: "anthropic" }).messages, "anthropic");
    for (const out of [r.canonical, parseMessages(r.messages, { format: "anthropic" }).messages]) {
      const issues = newViolations(before, validate(out, "anthropic")).filter((i) => i.severity === "error");
      expect(issues, `seed ${seed}, call before message ${at}`).toEqual([]);
    }
  }
}

/** A long chat without tools: `turns` user/assistant pairs of long text, then a last question. */
function chat(turns: number): Message[] {
  const para = (k: number) =>
    Array.from({ length: 40 }, (_, j) => `Point ${k}.${j}: the service at node-${(k * 7 + j) % 13} reported latency ${100 + ((k * j) % 50)} ms.`).join(" ");
  const out: Message[] = [{ id: "sys", role: "system", parts: [{ type: "text", text: "You are a careful analyst." }], meta: {} }];
  for (let k = 0; k < turns; k++) {
    out.push({ id: `u${k}`, role: "user", parts: [{ type: "text", text: k === 0 ? "Task: analyse the latency logs below.\n" + para(k) : para(k) }], meta: {} });
    out.push({ id: `a${k}`, role: "assistant", parts: [{ type: "text", text: para(k + 1000) }], meta: {} });
  }
  out.push({ id: "last", role: "user", parts: [{ type: "text", text: "Now: which node is slowest? Answer in one line." }], meta: {} });
  return out;
}

/** The refs a compaction made that its output does not lead back to (see reachableRefs). */
function unreachable(store: OffloadStore, r: { canonical: readonly Message[]; refs: readonly string[] }): string[] {
  const reached = reachableRefs(store, [JSON.stringify(r.canonical)]);
  return [...new Set(r.refs)].filter((ref) => !reached.has(ref));
}

/** The critical messages of an input: system, task, latest user, latest assistant text. */
function criticalOf(messages: readonly Message[]): Message[] {
  const classes = classify(messages);
  return messages.filter((_, i) => classes[i] === "critical");
}

describe("seed 003's seven tests", () => {
  it("test_no_compaction_when_under_budget", async () => {
    const { compactor, store, events } = setup();
    const wire = renderMessages(run(1, 6), "openai-chat");
    const r = await compactor.compact(wire, { budget: 1_000_000, format: "openai-chat" });
    expect(r.tier).toBe("normal");
    expect(r.stages).toEqual([]);
    expect(JSON.stringify(r.messages)).toBe(JSON.stringify(wire));
    expect(store.refs()).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(["compaction_skipped"]);
    expect(events[0]).toMatchObject({ reason: "no_pressure" });
  });

  it("test_compaction_order_tool_trace_before_critical_context", async () => {
    const { compactor } = setup();
    const messages = run(2, 30);
    const before = compactor.measure(messages);
    const r = await compactor.compactCanonical(messages, { budget: Math.floor(before / 0.9) });
    // Pressure tier: tool arguments and outputs first; it stops as soon as the target is met.
    expect(r.tier).toBe("pressure");
    expect(r.stages.map((s) => s.stage)).toEqual([...r.stages.map((s) => s.stage)].sort());
    expect(r.stages[0].stage).toBe(1);
    expect(r.stages.some((s) => s.stage === 4)).toBe(false);
    // Critical messages whole (the step summary may join the task's message as a part of its own).
    for (const m of criticalOf(messages))
      expect(r.canonical.some((o) => o === m || (o.role === m.role && JSON.stringify(o.parts).includes(JSON.stringify(m.parts).slice(1, -1))))).toBe(true);
    expect(r.tokensAfter).toBeLessThan(before);
  });

  it("test_preserve_latest_critical_turns_under_pressure", async () => {
    const { compactor } = setup();
    const messages = run(3, 40, { seed: 3, steering: 0.2 });
    const before = compactor.measure(messages);
    const r = await compactor.compactCanonical(messages, { budget: Math.floor(before / 0.95) });
    expect(r.tier).toBe("pressure");
    // Every part of a critical message is in the output as it came (stage 3 may join a ledger or
    // step summary to its message, or join it to its neighbour).
    const outParts = new Set(r.canonical.flatMap((o) => o.parts));
    for (const m of criticalOf(messages)) for (const p of m.parts) expect(outParts.has(p), m.id).toBe(true);
    // The latest assistant/tool exchange is not replaced.
    const lastCall = messages.findLastIndex((m) => m.parts.some((p) => p.type === "tool-call"));
    for (const m of messages.slice(lastCall)) expect(r.canonical).toContainEqual(m);
  });

  it("test_critical_tier_old_context_merge_without_latest_instruction_loss", async () => {
    const { compactor, events } = setup();
    const messages = chat(40);
    const r = await compactor.compactCanonical(messages, { budget: 6000 });
    expect(r.tier).toBe("critical");
    expect(r.status).toBe("ok");
    expect(r.tokensAfter).toBeLessThanOrEqual(6000);
    const latestUser = messages.findLast((m) => m.role === "user" && m.parts.some((p) => p.type === "text"))!;
    expect(r.canonical.some((m) => m.parts.some((p) => p.type === "text" && p.text === text(latestUser)))).toBe(true);
    expect(r.canonical[0]).toEqual(messages[0]);
    expect(events.filter((e) => e.type === "compaction_stage").map((e) => (e as { stage: number }).stage)).toContain(4);
  });

  it("test_memory_extractor_compacts_large_tool_args", async () => {
    const { compactor } = setup();
    const doc = "lorem ipsum dolor sit amet ".repeat(4000);
    const messages: Message[] = [
      { id: "u", role: "user", parts: [{ type: "text", text: "write the report" }], meta: {} },
      {
        id: "a",
        role: "assistant",
        parts: [{ type: "tool-call", id: "c1", name: "write_file", args: JSON.stringify({ path: "report.md", content: doc }) }],
        meta: {},
      },
      { id: "t", role: "tool", parts: [{ type: "tool-result", callId: "c1", content: [{ type: "text", text: "ok" }] }], meta: {} },
    ];
    const p = await compactor.extractionPayload(messages, { targetTokens: 500 });
    expect(p.text).not.toContain("lorem ipsum dolor sit amet lorem");
    expect(p.text).toContain("report.md");
    expect(p.tokens).toBeLessThanOrEqual(500);
    const small = await compactor.extractionPayload(messages, { targetTokens: 30 });
    expect(small.tokens).toBeLessThanOrEqual(30);
  });

  it("test_timeout_near_skips_nonessential_compaction", async () => {
    const { compactor } = setup();
    const messages = run(5, 60);
    const r = await compactor.compactCanonical(messages, { budget: 5000, deadline: { remainingMs: 10 } });
    for (const s of r.stages.filter((x) => x.stage >= 3)) expect(s.skipped.deadline).toBe(1);
    expect(r.stages.filter((x) => x.stage <= 2).every((s) => !s.skipped.deadline)).toBe(true);
    expect((await compactor.extractionPayload(messages, { targetTokens: 100, deadline: { remainingMs: 10 } })).skipped).toBe("deadline");
  });

  it("test_no_hard_truncation_marker_inserted_by_runner_compaction_path", async () => {
    const { compactor, store } = setup();
    for (const budget of [4000, 8000]) {
      const r = await compactor.compactCanonical(run(6, 80), { budget });
      const out = messageTexts(r.canonical).join("\n");
      expect(out).not.toMatch(/\[truncated\]|\.\.\.truncated|<truncated>|\(truncated\)/i);
      for (const ref of r.refs) expect(() => store.get(ref)).not.toThrow();
      expect(r.refs.length).toBeGreaterThan(0);
    }
  });
});

describe("invariants over generated runs", () => {
  const budgets = [4000, 8000, 32000];
  const runs = Array.from({ length: 24 }, (_, k) => generateRun({ seed: 100 + k, steps: 10 + ((k * 13) % 90) }).messages);

  it("budget, validity, critical verbatim, recoverable, non-destructive, deterministic, idempotent", async () => {
    for (const budget of budgets) {
      for (const messages of runs) {
        const snapshot = JSON.stringify(messages);
        const { compactor, store } = setup();
        const r = await compactor.compactCanonical(messages, { budget });
        // 8. non-destructive
        expect(JSON.stringify(messages)).toBe(snapshot);
        // 1. budget (or a typed infeasible result)
        if (r.status === "ok") expect(r.tokensAfter).toBeLessThanOrEqual(budget);
        else expect(r.infeasible!.criticalTokens).toBeGreaterThan(0);
        // 2. validity: nothing the input did not have
        for (const f of kFormats) expect(newViolations(validate(messages, f), validate(r.canonical, f)), `${budget} ${f}`).toEqual([]);
        // 3. critical verbatim (as a message, or its parts inside a merged one)
        const outParts = new Set(r.canonical.flatMap((m) => m.parts));
        for (const m of criticalOf(messages)) for (const p of m.parts) expect(outParts.has(p)).toBe(true);
        // 5. recoverable: every ref resolves, and every one is reachable from the output
        for (const ref of r.refs) expect(store.get(ref).byteLength).toBeGreaterThan(0);
        expect(unreachable(store, r), `${budget}`).toEqual([]);
        // 6. deterministic
        const again = await setup().compactor.compactCanonical(messages, { budget });
        expect(JSON.stringify(again.canonical)).toBe(JSON.stringify(r.canonical));
        // 9. idempotent
        if (r.status === "ok") {
          const twice = await compactor.compactCanonical(r.canonical, { budget });
          expect(twice.canonical).toEqual(r.canonical);
        }
      }
    }
  });

  it("every original stays reachable from the output when stage 4 merges past a step summary inside the task", async () => {
    // A task that takes most of a 2k budget: stage 3 puts the step summary into the task message
    // (critical), stage 4 merges the rest and must then take the summary in, originals and all,
    // rather than shrink it away (it was the only thing naming the removed steps).
    const m = (id: string, role: Message["role"], parts: Message["parts"]): Message => ({ id, role, parts, meta: {} });
    const messages: Message[] = [
      m("s", "system", [{ type: "text", text: "You are a coding agent. Use one bash command per step." }]),
      m("u", "user", [{ type: "text", text: "Fix the failing parser test in src/parser.py. ".repeat(150) }]),
    ];
    for (let k = 0; k < 30; k++) {
      const thought = `THOUGHT: step ${k}. ` + `I will inspect module_${k}.py around line ${k * 10} to see how tokens are split. `.repeat(8);
      messages.push(
        m(`a${k}`, "assistant", [
          { type: "text", text: thought },
          { type: "tool-call", id: `call_${k}`, name: "bash", args: JSON.stringify({ command: `sed -n 1,80p src/module_${k}.py` }) },
        ]),
      );
      if (k % 5 === 4) {
        messages.push(m(`n${k}`, "assistant", [{ type: "text", text: `THOUGHT: let me think about module_${k} before the next command. `.repeat(10) }]));
        messages.push(m(`f${k}`, "user", [{ type: "text", text: "Please always provide EXACTLY ONE action in triple backticks. ".repeat(6) }]));
      }
      const failed = k % 7 === 3;
      const out =
        (failed ? "Traceback (most recent call last):\nValueError: bad token\n" : "") +
        Array.from({ length: 60 }, (_, j) => `def f_${k}_${j}(x): return x + ${j}`).join("\n");
      messages.push(m(`t${k}`, "tool", [{ type: "tool-result", callId: `call_${k}`, name: "bash", isError: failed, content: [{ type: "text", text: out }] }]));
    }
    messages.push(m("end", "assistant", [{ type: "text", text: "I have fixed the parser." }]));
    const { store, compactor } = setup();
    const r = await compactor.compactCanonical(messages, { budget: 2000 });
    expect(unreachable(store, r)).toEqual([]);
    const merge = r.canonical.flatMap((x) => x.parts).find((p) => p.type === "text" && p.text.startsWith("[Earlier context, merged"));
    expect(merge).toBeDefined();
    // The merge's one index gives back every message the output no longer holds.
    const ref = /originals: (\S+)\]/.exec((merge as { text: string }).text)![1];
    const back = new Set(getMessages(store, ref).map((x) => x.id));
    const kept = new Set(r.canonical.map((x) => x.id));
    expect(messages.filter((x) => !kept.has(x.id) && !back.has(x.id)).map((x) => x.id)).toEqual([]);
    // The step summary stage 3 joined to the task was taken into the merge, not left beside it.
    expect(r.canonical[1].parts.some(isStepSummaryPart)).toBe(false);
  });

  it("within budget where the critical messages fit, however many exchanges follow the latest assistant text", async () => {
    // A coding agent's shape: a long task, the assistant's one text (with a call) early, then
    // only tool exchanges, each call's arguments under argTokens. Stages 1–3 leave everything
    // from the critical exchange on whole; stage 4 must reach past it rather than refuse.
    const m = (id: string, role: Message["role"], parts: Message["parts"]): Message => ({ id, role, parts, meta: {} });
    const call = (k: number, name: string, args: object) => m(`a${k}`, "assistant", [{ type: "tool-call", id: `c${k}`, name, args: JSON.stringify(args) }]);
    const result = (k: number, out: string) =>
      m(`t${k}`, "tool", [{ type: "tool-result", callId: `c${k}`, name: "Read", content: [{ type: "text", text: out }] }]);
    const messages: Message[] = [
      m("u", "user", [{ type: "text", text: "Implement the conn mcp command with a modern layout. ".repeat(120) }]),
      m("a0", "assistant", [
        { type: "text", text: "I'll look at the codebase first, then plan the command in a todo list." },
        { type: "tool-call", id: "c0", name: "TodoWrite", args: JSON.stringify({ todos: ["read cmd/", "add mcp.go", "wire it in root.go"] }) },
      ]),
      m("t0", "tool", [{ type: "tool-result", callId: "c0", name: "TodoWrite", content: [{ type: "text", text: "Todos have been modified." }] }]),
    ];
    for (let k = 1; k <= 12; k++) {
      messages.push(call(k, "Read", { file_path: `/repo/cmd/file_${k}.go`, limit: 200 }));
      messages.push(result(k, Array.from({ length: 40 }, (_, j) => `${j}→func handler_${k}_${j}(w http.ResponseWriter) { serve(w, ${j}) }`).join("\n")));
    }
    const { store, compactor } = setup();
    const critical = compactor.measure(criticalOf(messages).concat(messages[2]));
    const budget = critical + 400;
    expect(compactor.measure(messages)).toBeGreaterThan(2 * budget);
    const r = await compactor.compactCanonical(messages, { budget });
    expect(r.status).toBe("ok");
    expect(r.tokensAfter).toBeLessThanOrEqual(budget);
    // The critical messages verbatim, the critical call still answered, everything recoverable.
    const outParts = new Set(r.canonical.flatMap((x) => x.parts));
    for (const x of criticalOf(messages)) for (const p of x.parts.filter((p) => p.type === "text")) expect(outParts.has(p)).toBe(true);
    expect(r.canonical.some((x) => x.parts.some((p) => p.type === "tool-result" && p.callId === "c0"))).toBe(true);
    expect(newViolations(validate(messages, "anthropic"), validate(r.canonical, "anthropic"))).toEqual([]);
    expect(unreachable(store, r)).toEqual([]);
  });

  it("failures stay visible: each failed result, or its error head, is in the output", async () => {
    const { compactor } = setup();
    for (const messages of runs.slice(0, 8)) {
      const r = await compactor.compactCanonical(messages, { budget: 8000 });
      const out = messageTexts(r.canonical).join("\n");
      for (const m of messages) {
        for (const p of m.parts) {
          if (p.type !== "tool-result" || !p.isError) continue;
          const kept = r.canonical.some((o) => o.parts.includes(p));
          expect(kept || out.includes("✗") || out.includes("failed")).toBe(true);
        }
      }
    }
  });

  it("a failed latest output summarised to a sliver (critical tier) keeps its call id and whole error head", async () => {
    // The task takes most of the budget, so stage 4 must shrink the latest (failed) output to a
    // few tokens; a head cut to fit ("…test_xfail_run…") would not tell the agent what failed.
    const head = "FAILED testing/test_skipping.py::TestXFail::test_xfail_run_with_skip_mark[test_input0-expected0]";
    const log = [
      "<returncode>1</returncode>",
      ...Array.from({ length: 200 }, (_, i) => `testing/test_skipping.py::test_${i} PASSED`),
      head,
      "=== 1 failed, 200 passed in 1.81s ===",
    ].join("\n");
    const m = (id: string, role: Message["role"], parts: Message["parts"]): Message => ({ id, role, parts, meta: {} });
    const messages: Message[] = [
      m("s", "system", [{ type: "text", text: "You are a coding agent." }]),
      m("u", "user", [{ type: "text", text: "Fix the skipping bug. ".repeat(1300) }]),
      m("a", "assistant", [{ type: "tool-call", id: "call_87", name: "bash", args: '{"command":"pytest testing/test_skipping.py"}' }]),
      m("t", "tool", [{ type: "tool-result", callId: "call_87", name: "bash", content: [{ type: "text", text: log }] }]),
    ];
    const { compactor } = setup();
    const budget = 8000;
    const r = await compactor.compactCanonical(messages, { budget });
    expect(r.status).toBe("ok");
    expect(r.tokensAfter).toBeLessThanOrEqual(budget);
    const last = text(r.canonical.at(-1)!) || JSON.stringify(r.canonical.at(-1)!.parts);
    expect(last).toContain(`call call_87 failed (exit 1): ${head}`);
  });

  it("with extended thinking (Anthropic), the turn in progress still opens with signed thinking after every epoch", async () => {
    // Generated runs reason at ~30% of assistant turns: a tail cut at a step without thinking,
    // after a summary in the user message, opened the turn without it (THINKING_DROPPED).
    for (const [seed, steps] of [
      [14, 130],
      [46, 60],
      [53, 60],
      [58, 60],
    ] as const)
      await expectValidThinkingSession(seed, steps, 16_000, 2);
  }, 120_000);

  it("with extended thinking, an epoch whose opener lacks room only for the ledger gives the ledger up, and the turn still opens with signed thinking", async () => {
    // At 8k these runs' epochs landed just above the soft threshold with the turn's opener put
    // back, so it was left out, and the next calls opened the turn without thinking.
    for (const seed of [14, 46, 58]) await expectValidThinkingSession(seed, 150, 8000, 4);
  }, 120_000);

  it("stable prefix: in a session, calls between epochs only append", async () => {
    const { compactor } = setup();
    const messages = generateRun({ seed: 7, steps: 120 }).messages;
    const session = compactor.session();
    let prev: string[] | undefined;
    let prevEpoch = 0;
    let stable = 0;
    for (let i = 10; i <= messages.length; i += 3) {
      const r = await session.compactCanonical(messages.slice(0, i), { budget: 8000 });
      const rendered = (renderMessages(r.canonical, "openai-chat") as unknown[]).map((x) => JSON.stringify(x));
      if (prev && r.epoch === prevEpoch) {
        expect(rendered.slice(0, prev.length)).toEqual(prev);
        stable++;
      }
      prev = rendered;
      prevEpoch = r.epoch;
    }
    expect(stable).toBeGreaterThan(10);
    expect(session.epoch).toBeGreaterThan(0);
  });
});

describe("a session's work between calls", () => {
  const idle = () => new Promise((resolve) => setImmediate(resolve));

  it("idle-time preparation changes no output: with it, without it and stateless give the same bytes", async () => {
    const messages = run(12, 150);
    const prepare = vi.spyOn(StepCache.prototype, "prepare");
    /** The canonical output of each call of one session over the growing conversation, and its epochs. */
    const outputs = async (compactor: Compactor) => {
      const session = compactor.session();
      const out: { json: string; epoch: boolean; merged: boolean; view: Message[]; canonical: Message[] }[] = [];
      for (let i = 4; i <= messages.length; i += 3) {
        const view = messages.slice(0, i);
        const r = await session.compactCanonical(view, { budget: 8000 });
        out.push({ json: JSON.stringify(r.canonical), epoch: r.stages.length > 0, merged: r.stages.some((x) => x.stage === 4), view, canonical: r.canonical });
        await idle();
      }
      return out;
    };
    // Calls over this conversation (idle work other tests' sessions left may run in between).
    const ours = () => prepare.mock.calls.filter(([list]) => list[0] === messages[0]).length;
    const without = await outputs(setup({ idlePrepare: false }).compactor);
    expect(ours()).toBe(0);
    const withIdle = await outputs(setup().compactor);
    // It ran between calls, over appended messages, and only in the session that has it on.
    expect(ours()).toBeGreaterThan(0);
    prepare.mockRestore();
    expect(withIdle.map((o) => o.json)).toEqual(without.map((o) => o.json));
    // With no epoch compacted ahead (see session-ahead.test.ts), an epoch is a stateless
    // compaction of the same messages but for its ledger, which starts with the previous epoch's
    // lines (append-only, for prompt caches): compared without it. Where stage 4 merged, the
    // ledger's earlier lines made the work larger than a stateless call's, and the merge may
    // take more: those epochs are not compared.
    const plain = await outputs(setup({ aheadRatio: 0 }).compactor);
    const stateless = setup().compactor;
    const withoutLedger = (messages: readonly Message[]) => JSON.stringify(messages.map((m) => ({ ...m, parts: m.parts.filter((p) => !isLedgerPart(p)) })));
    let epochs = 0;
    for (const o of plain.filter((o) => o.epoch && !o.merged)) {
      epochs++;
      expect(withoutLedger(o.canonical)).toBe(withoutLedger((await stateless.compactCanonical(o.view, { budget: 8000 })).canonical));
    }
    expect(epochs).toBeGreaterThan(3);
  });

  it("prepare works through a conversation in slices and always makes progress", () => {
    const messages = run(3, 40);
    const steps = new StepCache();
    expect(steps.prepare(messages, 0, 0)).toBe(1);
    let at = 0;
    let slices = 0;
    while (at < messages.length) {
      at = steps.prepare(messages, at, 0.01);
      slices++;
    }
    expect(at).toBe(messages.length);
    expect(slices).toBeGreaterThan(1);
  });

  it("one compactor over growing lists, cut anywhere (calls still unanswered at the end), equals a fresh compactor each time", async () => {
    const messages = run(21, 90);
    // One call answered only near the end, made between a call and its result: every list
    // from it on holds a step that straddles the unanswered call.
    const at = messages.findIndex((m, i) => i > 60 && m.role === "assistant" && m.parts.some((p) => p.type === "tool-call"));
    messages.splice(at + 1, 0, {
      id: "late-call",
      role: "assistant",
      parts: [{ type: "tool-call", id: "late", name: "bash", args: '{"command":"sleep 100"}' }],
      meta: {},
    });
    messages.splice(messages.length - 4, 0, {
      id: "late-result",
      role: "tool",
      parts: [{ type: "tool-result", callId: "late", content: [{ type: "text", text: "done" }] }],
      meta: {},
    });
    const { compactor } = setup();
    for (let i = 30; i <= messages.length; i += i > at - 5 && i < at + 20 ? 1 : 7) {
      const view = messages.slice(0, i);
      const reused = await compactor.compactCanonical(view, { budget: 6000 });
      const fresh = await setup().compactor.compactCanonical(view, { budget: 6000 });
      expect(JSON.stringify(reused.canonical), `${i} messages`).toBe(JSON.stringify(fresh.canonical));
    }
  });
});

describe("bad input", () => {
  it("invalid config names the field; a bad budget is typed", async () => {
    expect(() => createCompactor({ softRatio: 2 })).toThrowError(/config\.softRatio/);
    expect(() => createCompactor({ soft_ratio: 0.5 } as never)).toThrowError(/unknown option "soft_ratio"/);
    await expect(createCompactor().compactCanonical([], { budget: -1 })).rejects.toThrowError(/options\.budget/);
  });

  it("reads the deprecated preserveRecentSteps as keepRecent: the same settings and the same compaction", async () => {
    const messages = run(17, 30, { seed: 17, parallel: 0.4 });
    // In the pressure tier (usage between soft and hard), where stages 1–3 keep all keepRecent exchanges.
    const { tokensBefore } = await createCompactor().compactCanonical(messages, { budget: 1e7 });
    const budget = Math.ceil(tokensBefore / 0.9);
    const outputs = new Set<string>();
    for (const n of [0, 1, 3]) {
      expect(createCompactor({ preserveRecentSteps: n }).settings).toEqual(createCompactor({ keepRecent: n }).settings);
      expect(createCompactor({ preserveRecentSteps: n, keepRecent: n }).settings).toEqual(createCompactor({ keepRecent: n }).settings);
      const byOld = setup({ preserveRecentSteps: n });
      const byNew = setup({ keepRecent: n });
      const [a, b] = [await byOld.compactor.compactCanonical(messages, { budget }), await byNew.compactor.compactCanonical(messages, { budget })];
      expect(JSON.stringify(a.canonical), `keepRecent ${n}`).toBe(JSON.stringify(b.canonical));
      expect(byOld.events.map((e) => e.type)).toEqual(byNew.events.map((e) => e.type));
      outputs.add(JSON.stringify(b.canonical));
    }
    expect(outputs.size).toBe(3); // the setting is read: each count compacts differently
    expect(createCompactor({ preserveRecentSteps: 1 }).settings).not.toHaveProperty("preserveRecentSteps");
  });

  it("a config giving preserveRecentSteps and keepRecent different values is an error naming the deprecated field", () => {
    expect(() => createCompactor({ preserveRecentSteps: 1, keepRecent: 2 })).toThrowError(
      "config.preserveRecentSteps: the deprecated name of keepRecent, given beside it with another value (1 and 2): give keepRecent only",
    );
    expect(() => createCompactor({ preserveRecentSteps: -1 })).toThrowError(/^config\.preserveRecentSteps: /);
  });

  it("a config file may use the deprecated preserveRecentSteps", () => {
    const dir = mkdtempSync(join(tmpdir(), "ctxfold-config-"));
    try {
      const file = join(dir, "old.json");
      writeFileSync(file, JSON.stringify({ preserveRecentSteps: 3 }));
      expect(createCompactor(readConfigFile(file)).settings.keepRecent).toBe(3);
      writeFileSync(file, JSON.stringify({ preserveRecentSteps: 3, keepRecent: 4 }));
      expect(() => readConfigFile(file)).toThrowError(`${file}.preserveRecentSteps: the deprecated name of keepRecent`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a call without its options, or with options that are no object, is typed and names the field", async () => {
    const input = [{ role: "user", content: "hi" }];
    const budgetMissing = { code: "E_BAD_INPUT", path: "options.budget", message: "options.budget: expected a positive integer token budget, got undefined" };
    const compactor = createCompactor();
    await expect(compactor.compact(input, undefined as never)).rejects.toMatchObject(budgetMissing);
    await expect(compactor.compactCanonical([], undefined as never)).rejects.toMatchObject(budgetMissing);
    await expect(compactor.session().compact(input, undefined as never)).rejects.toMatchObject(budgetMissing);
    await expect(compactor.session().compactCanonical([], undefined as never)).rejects.toMatchObject(budgetMissing);
    await expect(compactor.extractionPayload([], undefined as never)).rejects.toMatchObject({ code: "E_BAD_INPUT", path: "options.targetTokens" });
    // The budget passed where its options go: said so, not read as a missing budget.
    await expect(compactor.compact(input, 8000 as never)).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options",
      message: "options: expected an object { budget, format?, deadline?, recallHint? }, got 8000",
    });
    await expect(compactor.session().compact(input, null as never)).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options",
      message: expect.stringMatching(/got null$/),
    });
    await expect(compactor.compact(input, { budget: 100, deadline: "soon" as never })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options.deadline",
      message: expect.stringMatching(/got "soon"$/),
    });
    await expect(compactor.compact(input, { budget: 100, deadline: { remainingMs: Number.NaN } })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options.deadline.remainingMs",
      message: expect.stringMatching(/got NaN$/),
    });
  });

  it("a non-finite budget is shown as given (JSON would show null)", async () => {
    for (const [budget, shown] of [
      [Number.NaN, "NaN"],
      [Infinity, "Infinity"],
      [-Infinity, "-Infinity"],
    ] as const) {
      await expect(createCompactor().compactCanonical([], { budget })).rejects.toMatchObject({
        code: "E_BAD_INPUT",
        path: "options.budget",
        message: `options.budget: expected a positive integer token budget, got ${shown}`,
      });
    }
    await expect(createCompactor().extractionPayload([], { targetTokens: Number.NaN })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options.targetTokens",
      message: expect.stringMatching(/got NaN$/),
    });
    // Config values go through zod, which shows them as given.
    expect(() => createCompactor({ argTokens: Infinity })).toThrowError(/^config\.argTokens: .*Infinity$/);
  });

  it("a budget below the critical set is BudgetInfeasible with the sizes", async () => {
    const { compactor } = setup();
    const r = await compactor.compactCanonical(run(8, 20), { budget: 50 });
    expect(r.status).toBe("budget_infeasible");
    expect(r.infeasible!.criticalTokens).toBeGreaterThan(50);
    expect(r.infeasible!.budget).toBe(50);
  });

  it("a refusal where the critical messages fit but not the ref of what was removed gives their own size", async () => {
    const { messages, critical } = tightTaskPrompt();
    const own = promptTokens(critical); // exact, as the compactor counts the OpenAI chat format
    const budget = own + 5;
    const r = await setup().compactor.compact(messages, { budget, format: "openai-chat" });
    expect(r.status).toBe("budget_infeasible");
    expect(r.tokensAfter).toBeGreaterThan(budget);
    // The critical messages as given, not with the merged summary ctxfold wrote into the task.
    expect(r.infeasible).toEqual({ criticalTokens: own, budget });
  });

  it("a summariser that never answers times out into the extractive one with an event", async () => {
    const { compactor, events } = setup({ summarizer: () => new Promise<string>(() => {}), summarizerTimeoutMs: 50 });
    const r = await compactor.compactCanonical(chat(30), { budget: 4000 });
    expect(r.status).toBe("ok");
    const timeouts = events.filter((e) => e.type === "summarizer_fallback" && /timed out after 50 ms/.test(e.reason));
    // One wait per call, not one per summarised part.
    expect(timeouts).toHaveLength(1);
  });

  it("a throwing summariser falls back to the extractive one with an event", async () => {
    const { compactor, events } = setup({
      summarizer: () => {
        throw new Error("model down");
      },
    });
    const r = await compactor.compactCanonical(chat(30), { budget: 4000 });
    expect(r.status).toBe("ok");
    expect(events.some((e) => e.type === "summarizer_fallback" && e.reason === "model down")).toBe(true);
  });
});

describe("telemetry", () => {
  it("run aggregates: calls, compactions, tiers, stages with savings, skip reasons", async () => {
    const { compactor } = setup();
    const messages = generateRun({ seed: 31, steps: 80 }).messages;
    const session = compactor.session();
    for (let i = 20; i <= messages.length; i += 20) await session.compactCanonical(messages.slice(0, i), { budget: 8000 });
    await compactor.compactCanonical(messages.slice(0, 5), { budget: 1_000_000 });
    const st = compactor.stats();
    const calls = Math.floor(messages.length / 20) + 1;
    expect(st.calls).toBe(calls);
    expect(st.compactions).toBe(session.epoch);
    expect(st.tiers.normal + st.tiers.pressure + st.tiers.critical).toBe(calls);
    expect(st.skipped.no_pressure).toBe(calls - st.compactions);
    const stage3 = st.stages.historical_text!;
    expect(stage3.runs).toBeGreaterThan(0);
    expect(stage3.saved).toBeGreaterThan(0);
    expect(st.tokensOut).toBeLessThan(st.tokensIn);
  });

  it("one aggregation for both systems: the compactor's stats are its events summed, and session events sum the same way", async () => {
    const { compactor, events } = setup();
    const messages = generateRun({ seed: 32, steps: 40 }).messages;
    const session = compactor.session();
    for (let i = 10; i <= messages.length; i += 10) await session.compactCanonical(messages.slice(0, i), { budget: 6000 });
    expect(compactor.stats()).toEqual(compactionStats(events));
    const info = { loopIds: [1], maxContextTokens: 1000, tokensBefore: 900 };
    const block: CtxfoldEvent[] = [
      compactionStarted(info),
      compactionEnded({ ...info, tokensAfter: 400 }, 3),
      compactionBlockStale({ loopId: 1, reason: "turns moved" }),
      sessionOverlayCorrupt({ sessionId: "s", path: "b.json", reason: "bad JSON" }),
    ];
    const st = compactionStats([...events, ...block]);
    expect(st).toMatchObject({ calls: compactor.stats().calls + 1, compactions: compactor.stats().compactions + 1, staleBlocks: 1, corruptOverlays: 1 });
    expect(st.tokensIn - compactor.stats().tokensIn).toBe(900);
  });
});
