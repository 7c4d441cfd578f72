/**
 * The AI SDK recall tool (src/integrations/ai-sdk-recall.ts) through a real generateText loop:
 * the model reads a ref in its compacted prompt (with the recall hint the middleware adds
 * because the call offers the tool), calls `recall`, and gets the original back; bad refs are
 * tool errors the model reads, never a crash.
 */
import { generateText, stepCountIs, wrapLanguageModel, type LanguageModelV3CallOptions, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { kDefaultRecallHint } from "../../src/policy/recall-hint.js";
import { ctxfoldMiddleware, ctxfoldRecallTool, type RecallResult } from "../../src/integrations/ai-sdk.js";
import { pageText } from "../../src/recall/index.js";
import { createMemoryStore, getMessages, putMessages, refPattern } from "../../src/store/index.js";
import { agentRun, callPoints, historyIn } from "./harness.js";
import { generateRun } from "../../src/gen/run.js";
import { renderMessages } from "../../src/adapters/index.js";
import { rejection, thrown } from "../helpers.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createCompactor } from "../../src/policy/index.js";
import { compactChunk } from "../../src/pool/job.js";
import { createPackStore, reachableRefs } from "../../src/store/index.js";
import { agentRun as scopeRun } from "../store/scope-runs.js";

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const done = { content: [{ type: "text" as const, text: "done" }], finishReason: { unified: "stop" as const, raw: "stop" }, usage, warnings: [] };
const callRecall = (input: object) => ({
  content: [{ type: "tool-call" as const, toolCallId: "call-r1", toolName: "recall", input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
  usage,
  warnings: [],
});

/** All text of a provider prompt (what the model reads). */
const promptText = (prompt: LanguageModelV3CallOptions["prompt"]) => JSON.stringify(prompt);

describe("ctxfoldRecallTool (AI SDK)", () => {
  it("in generateText with the ctxfold middleware: the prompt carries the hint, the model recalls the first ref and gets the original", async () => {
    const store = createMemoryStore();
    const run = agentRun(60);
    const at = callPoints(run).at(-1)!;
    const refs: string[] = [];
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        if (refs.length > 0) return done;
        // The model does what the hint says: it calls recall with the first ref it reads.
        const pattern = refPattern(store.prefix);
        const first = pattern.exec(promptText(options.prompt))![0];
        refs.push(first);
        return callRecall({ ref: first });
      },
    });
    // A budget a page (16 KiB) fits in beside the compacted prompt (a page above it would be compacted in the next call).
    const wrapped = wrapLanguageModel({ model, middleware: ctxfoldMiddleware({ budget: 20_000, store }) });
    const r = await generateText({
      model: wrapped,
      messages: historyIn(run, at, "ai-sdk") as ModelMessage[],
      allowSystemInMessages: true,
      tools: { recall: ctxfoldRecallTool({ store }) },
      stopWhen: stepCountIs(3),
    });
    const [first, second] = model.doGenerateCalls;
    expect(promptText(first.prompt)).toContain(kDefaultRecallHint);
    // The tool ran on the ref and gave back exactly what the store holds.
    const result = r.steps[0].toolResults[0];
    expect(result.toolName).toBe("recall");
    const page = result.output as RecallResult;
    if (page.type === "text") expect(page.text).toBe(store.getText(refs[0]));
    else expect(page.count).toBe(getMessages(store, refs[0]).length);
    // The next call's prompt holds the page's text as the tool result the model reads.
    const tool = second.prompt.findLast((m) => m.role === "tool")!;
    expect(tool.content).toContainEqual(expect.objectContaining({ type: "tool-result", toolName: "recall", output: { type: "text", value: pageText(page) } }));
    expect(r.text).toBe("done");
  }, 60_000);

  it("without the recall tool the middleware adds no hint; recallHint: false keeps it off even with the tool", async () => {
    const run = agentRun(60);
    const messages = historyIn(run, callPoints(run).at(-1)!, "ai-sdk") as ModelMessage[];
    for (const [options, tools, hinted] of [
      [{}, false, false],
      [{ recallHint: false }, true, false],
      [{ recallHint: true }, false, true],
    ] as const) {
      const store = createMemoryStore();
      const model = new MockLanguageModelV3({ doGenerate: done });
      const wrapped = wrapLanguageModel({ model, middleware: ctxfoldMiddleware({ budget: 6000, store, ...options }) });
      await generateText({ model: wrapped, messages, allowSystemInMessages: true, ...(tools ? { tools: { recall: ctxfoldRecallTool({ store }) } } : {}) });
      expect(promptText(model.doGenerateCalls[0].prompt).includes(kDefaultRecallHint)).toBe(hinted);
    }
  }, 60_000);

  it("pages a large output, and gives a history's messages as ModelMessages", async () => {
    const store = createMemoryStore();
    const big = "0123456789abcdef\n".repeat(5000);
    const ref = store.put(big);
    const removed = generateRun({ seed: 2, steps: 5 }).messages.slice(2);
    const { ref: history } = putMessages(store, removed);
    const tool = ctxfoldRecallTool({ store });
    const first = await tool.execute({ ref });
    expect(first).toMatchObject({ type: "text", offset: 0, next: 16384 });
    const second = await tool.execute({ ref, offset: first.next });
    expect(second).toMatchObject({ type: "text", offset: 16384, next: 32768 });
    expect(tool.toModelOutput({ output: first }).value).toContain(`"offset": ${first.next}`);
    const messages = await tool.execute({ ref: history });
    expect(messages).toMatchObject({ type: "messages", format: "ai-sdk", count: removed.length });
    expect((messages as { messages: unknown[] }).messages).toEqual(renderMessages(removed, "ai-sdk"));
    const openai = await ctxfoldRecallTool({ store, format: "openai-chat" }).execute({ ref: history });
    expect((openai as { messages: unknown[] }).messages).toEqual(renderMessages(removed, "openai-chat"));
  });

  it("a bad ref is a tool error the model reads (the typed error's message), and the loop goes on", async () => {
    const store = createMemoryStore();
    store.put("something");
    const model = new MockLanguageModelV3({ doGenerate: [callRecall({ ref: "elsewhere/output_0123456789abcdef.txt" }), done] });
    const r = await generateText({ model, prompt: "go", tools: { recall: ctxfoldRecallTool({ store }) }, stopWhen: stepCountIs(3) });
    const error = r.steps[0].content.find((c) => c.type === "tool-error");
    expect(error).toMatchObject({ toolName: "recall", error: { code: "E_BAD_REF" } });
    const sent = JSON.stringify(model.doGenerateCalls[1].prompt);
    expect(sent).toContain("another store");
    expect(r.text).toBe("done");
  });

  it("scope { refs }: one conversation's refs; another's answer as absent ones; a Set given stays current", async () => {
    const store = createMemoryStore();
    const compactor = createCompactor({ store });
    const mine = new Set((await compactor.compact(scopeRun("c1", "alpha", "one").messages, { budget: 2000 })).refs);
    const theirs = (await compactor.compact(scopeRun("c2", "password123", "two").messages, { budget: 2000 })).refs.filter((r) => !mine.has(r));
    expect(theirs.length).toBeGreaterThan(0);
    const tool = ctxfoldRecallTool({ store, scope: { refs: mine } });
    const whole = ctxfoldRecallTool({ store });
    for (const ref of mine) expect(await tool.execute({ ref })).toEqual(await whole.execute({ ref }));
    const shape = (e: { code: string; message: string }, ref: string) => ({ code: e.code, message: e.message.split(ref).join("<ref>") });
    for (const ref of theirs) {
      const absent = ref.replace(/_[0-9a-f]+/, (m) => `_${"0".repeat(m.length - 1)}`);
      expect(shape(await rejection(tool.execute({ ref })), ref)).toEqual(shape(await rejection(tool.execute({ ref: absent })), absent));
    }
    for (const ref of theirs) mine.add(ref);
    expect(await tool.execute({ ref: theirs[0] })).toEqual(await whole.execute({ ref: theirs[0] }));
  });

  it("scope { run }: the refs ctxfold compact recorded for that run in the store's directory", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-recall-scope-"));
    try {
      const lines = [scopeRun("run-a", "alpha", "shared"), scopeRun("run-b", "password123", "shared")].map((r) => JSON.stringify(r)).join("\n");
      const out = Buffer.from(
        (await compactChunk(Buffer.from(`${lines}\n`), 1, { budget: 2000, format: "auto", mode: "tiered", offloadDir: dir, file: "in.jsonl" })).out,
      )
        .toString("utf8")
        .trim()
        .split("\n");
      const store = createPackStore({ dir });
      const [a, b] = out.map((line) => reachableRefs(store, [line]));
      const tool = ctxfoldRecallTool({ store, scope: { run: "run-a" } });
      for (const ref of a) expect((await tool.execute({ ref })).ref).toBe(ref);
      for (const ref of [...b].filter((r) => !a.has(r))) expect(await rejection(tool.execute({ ref }))).toMatchObject({ code: "E_REF_NOT_FOUND" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("bad options are E_BAD_INPUT naming the field, at construction", () => {
    expect(thrown(() => ctxfoldRecallTool({ store: createMemoryStore(), scope: { run: "a" } }), "E_BAD_INPUT").path).toBe("scope");
    expect(thrown(() => ctxfoldRecallTool({ store: createMemoryStore(), scope: { refs: 3 } as never }), "E_BAD_INPUT").path).toBe("scope.refs");
    expect(thrown(() => ctxfoldRecallTool({ store: createMemoryStore(), scope: "run-a" as never }), "E_BAD_INPUT").path).toBe("scope");
    expect(thrown(() => ctxfoldRecallTool({} as never), "E_BAD_INPUT").path).toBe("store");
    expect(thrown(() => ctxfoldRecallTool({ store: createMemoryStore(), format: "xml" as never }), "E_BAD_INPUT").path).toBe("format");
    expect(thrown(() => ctxfoldRecallTool({ store: createMemoryStore(), maxBytes: 3 }), "E_BAD_INPUT").path).toBe("maxBytes");
  });
});
