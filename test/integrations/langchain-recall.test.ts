/**
 * The LangChain recall tool (src/integrations/langchain-recall.ts): a real StructuredTool,
 * invoked as LangChain invokes tools (bare arguments, and a model's tool call giving a
 * ToolMessage with the page as its artifact); typed errors for bad refs and bad options.
 */
import { ToolMessage } from "@langchain/core/messages";
import { StructuredTool } from "@langchain/core/tools";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import { ctxfoldRecallTool, type RecallResult } from "../../src/integrations/langchain.js";
import { pageText } from "../../src/recall/index.js";
import { createMemoryStore, createPackStore, putMessages } from "../../src/store/index.js";
import { rejection } from "../helpers.js";
import { createCompactor } from "../../src/policy/index.js";
import { agentRun as scopeRun } from "../store/scope-runs.js";

describe("ctxfoldRecallTool (LangChain)", () => {
  it("is a StructuredTool named recall; invoked with arguments it gives the original text", async () => {
    const store = createMemoryStore();
    const ref = store.put("Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'x'\n", { kind: "shell", ext: "log" });
    const tool = await ctxfoldRecallTool({ store });
    expect(tool).toBeInstanceOf(StructuredTool);
    expect(tool.name).toBe("recall");
    expect(await tool.invoke({ ref })).toBe(store.getText(ref));
  });

  it("a model's tool call gets a ToolMessage: the page's text (with the offset of the rest) and the page as its artifact", async () => {
    const store = createMemoryStore();
    const ref = store.put("x".repeat(40_000));
    const tool = await ctxfoldRecallTool({ store, maxBytes: 10_000 });
    const message = (await tool.invoke({ name: "recall", args: { ref, offset: 10_000 }, id: "call_1", type: "tool_call" })) as ToolMessage;
    expect(message).toBeInstanceOf(ToolMessage);
    expect(message.tool_call_id).toBe("call_1");
    const page = message.artifact as RecallResult;
    expect(page).toMatchObject({ type: "text", offset: 10_000, end: 20_000, next: 20_000, size: 40_000 });
    expect(message.content).toBe(pageText(page));
    expect(message.content).toContain('"offset": 20000');
  });

  it("a history ref gives the removed messages as LangChain message dicts (or in the format asked for)", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ctxfold-lc-recall-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const store = createPackStore({ dir });
    const removed = generateRun({ seed: 8, steps: 4 }).messages.slice(2);
    const { ref } = putMessages(store, removed);
    store.flush();
    const reader = createPackStore({ dir });
    const call = { name: "recall", args: { ref }, id: "c", type: "tool_call" as const };
    const page = ((await (await ctxfoldRecallTool({ store: reader, maxBytes: 1 << 20 })).invoke(call)) as ToolMessage).artifact as RecallResult;
    expect(page).toMatchObject({ type: "messages", format: "langchain", count: removed.length });
    expect(page.type === "messages" && page.messages).toEqual(renderMessages(removed, "langchain"));
    const anthropic = ((await (await ctxfoldRecallTool({ store: reader, format: "anthropic", maxBytes: 1 << 20 })).invoke(call)) as ToolMessage)
      .artifact as RecallResult;
    expect(anthropic.type === "messages" && anthropic.messages).toEqual((renderMessages(removed, "anthropic") as { messages: unknown[] }).messages);
  });

  it("scope { refs }: another conversation's refs reject as absent ones; { run } needs a store over a directory", async () => {
    const store = createMemoryStore();
    const compactor = createCompactor({ store });
    const mine = (await compactor.compact(scopeRun("c1", "alpha", "one").messages, { budget: 2000 })).refs;
    const theirs = (await compactor.compact(scopeRun("c2", "password123", "two").messages, { budget: 2000 })).refs.filter((r) => !mine.includes(r));
    const tool = await ctxfoldRecallTool({ store, scope: { refs: mine } });
    for (const ref of mine) expect(await tool.invoke({ ref })).toBe(await (await ctxfoldRecallTool({ store })).invoke({ ref }));
    for (const ref of theirs) {
      const absent = ref.replace(/_[0-9a-f]+/, (m) => `_${"0".repeat(m.length - 1)}`);
      const [e, none] = [await rejection(tool.invoke({ ref })), await rejection(tool.invoke({ ref: absent }))];
      expect({ code: e.code, message: e.message.split(ref).join("<ref>") }).toEqual({ code: none.code, message: none.message.split(absent).join("<ref>") });
    }
    expect(await rejection(ctxfoldRecallTool({ store, scope: { run: "x" } }))).toMatchObject({ code: "E_BAD_INPUT", path: "scope" });
  });

  it("bad refs reject with the typed error; arguments the schema refuses are LangChain's own error; bad options are E_BAD_INPUT", async () => {
    const store = createMemoryStore();
    const ref = store.put("abc");
    const tool = await ctxfoldRecallTool({ store });
    expect(await rejection(tool.invoke({ ref: `other/${ref.split("/").pop()}` }))).toMatchObject({ code: "E_BAD_REF" });
    expect(await rejection(tool.invoke({ ref: "workspace/outputs/output_0123456789abcdef.txt" }))).toMatchObject({ code: "E_REF_NOT_FOUND" });
    expect(await rejection(tool.invoke({ ref, offset: 3 }))).toMatchObject({ code: "E_BAD_INPUT", path: "offset" });
    await expect(tool.invoke({ offset: 1 } as never)).rejects.toThrow(/schema/i);
    expect(await rejection(ctxfoldRecallTool({ store: "nope" } as never))).toMatchObject({ code: "E_BAD_INPUT", path: "store" });
  });
});
