/**
 * The request helpers' own store (pool-store.ts): the originals their compactions remove are held
 * in memory up to `maxStoreBytes`, whole conversations going least recently compacted first, and
 * with the conversations the pool forgets (maxSessions); a caller's `store` holds every original
 * for the caller to read.
 */
import { describe, expect, it } from "vitest";
import { kDefaultMaxSessionTokens, sessionPoolFor } from "../../src/integrations/common.js";
import { kDefaultMaxStoreBytes } from "../../src/integrations/pool-store.js";
import { compactOpenAIRequest, type RequestOptions } from "../../src/integrations/requests.js";
import { createMemoryStore, refPattern } from "../../src/store/index.js";

/** Conversation `i`: a task, one tool call whose output (~12 KB, its own) the budget cannot keep, and a follow-up. */
function conversation(i: number) {
  const output = Array.from(
    { length: 200 },
    (_, k) => `conversation ${i} row ${k}: value=${(i * 7919 + k * 104729) % 1_000_003} path=src/m${k % 17}/f${i}.ts`,
  ).join("\n");
  return {
    model: "gpt-4o",
    messages: [
      { role: "system", content: "You are a careful coding agent." },
      { role: "user", content: `Task ${i}: find why the build of package ${i} fails.` },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "read_log", arguments: JSON.stringify({ package: i }) } }],
      },
      { role: "tool", tool_call_id: `call_${i}`, content: output },
      { role: "user", content: "Go on." },
    ],
  };
}

/** The refs a compacted body names. */
function refsIn(body: unknown): string[] {
  return [...JSON.stringify(body).matchAll(refPattern("workspace/outputs"))].map((m) => m[0]);
}

describe("the request helpers' own store is bounded by bytes", () => {
  it("1,200 calls of different conversations: the held bytes never pass maxStoreBytes; the oldest conversations' originals go first", async () => {
    const bound = 1024 * 1024;
    const options: RequestOptions = { budget: 600, maxStoreBytes: bound };
    const pool = sessionPoolFor(options);
    const store = pool.compactor.store;
    let peak = 0;
    let offloaded = 0;
    const first: string[] = [];
    let last: string[] = [];
    for (let i = 0; i < 1200; i++) {
      const out = await compactOpenAIRequest(conversation(i), options);
      last = refsIn(out);
      expect(last.length, `conversation ${i} offloaded nothing`).toBeGreaterThan(0);
      if (i === 0) first.push(...last);
      offloaded += last.reduce((n, r) => n + (store.has(r) ? store.get(r).length : 0), 0);
      peak = Math.max(peak, pool.storeBytes!);
      expect(pool.storeBytes!).toBeLessThanOrEqual(bound);
    }
    // Far more went through than the bound holds: eviction did the bounding.
    expect(offloaded).toBeGreaterThan(5 * bound);
    expect(peak).toBeGreaterThan(bound / 2);
    // The latest conversation's originals are held; the first one's went.
    for (const r of last) expect(store.getText(r).length).toBeGreaterThan(0);
    for (const r of first) {
      expect(store.has(r)).toBe(false);
      expect(() => store.get(r)).toThrow(expect.objectContaining({ code: "E_REF_NOT_FOUND" }));
    }
  }, 300_000);

  it("with maxSessions the pool's forgotten conversations take their originals along; the default bound is 64 MiB", async () => {
    const options: RequestOptions = { budget: 600, maxSessions: 10 };
    const pool = sessionPoolFor(options);
    let perConversation = 0;
    for (let i = 0; i < 200; i++) {
      await compactOpenAIRequest(conversation(i), options);
      if (i === 0) perConversation = pool.storeBytes!;
      expect(pool.size).toBeLessThanOrEqual(10);
    }
    expect(perConversation).toBeGreaterThan(0);
    expect(pool.storeBytes!).toBeLessThanOrEqual(10 * 1.2 * perConversation);
    expect(kDefaultMaxStoreBytes).toBe(64 * 1024 * 1024);
    // Inline options share the module-wide pool, bounded by the default.
    await compactOpenAIRequest(conversation(0), { budget: 600 });
    expect(sessionPoolFor({ budget: 600 }).storeBytes).toBeGreaterThan(0);
    expect(sessionPoolFor({ budget: 600 }).storeBytes).toBeLessThanOrEqual(kDefaultMaxStoreBytes);
  }, 120_000);

  it("the sessions are bounded by the tokens they hold: past maxSessionTokens the least recently used go", async () => {
    const probe: RequestOptions = { budget: 600, maxSessions: 5 };
    await compactOpenAIRequest(conversation(0), probe);
    const each = sessionPoolFor(probe).sessionTokens;
    expect(each).toBeGreaterThan(1000);
    const options: RequestOptions = { budget: 600, maxSessionTokens: 10 * each };
    const pool = sessionPoolFor(options);
    for (let i = 0; i < 300; i++) {
      await compactOpenAIRequest(conversation(i), options);
      expect(pool.sessionTokens).toBeLessThanOrEqual(10 * each * 1.05);
    }
    expect(pool.size).toBeGreaterThanOrEqual(9);
    expect(pool.size).toBeLessThanOrEqual(11);
    // Its originals went with each forgotten conversation.
    expect(pool.storeBytes!).toBeLessThanOrEqual(11 * 1.2 * (sessionPoolFor(probe).storeBytes! || 1));
    await expect(compactOpenAIRequest(conversation(1), { budget: 600, maxSessionTokens: 1.5 })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "maxSessionTokens",
    });
    expect(kDefaultMaxSessionTokens).toBe(32_000_000);
  }, 120_000);

  it("a caller's store holds every original for the caller to read (the pool does not bound it)", async () => {
    const store = createMemoryStore();
    const options: RequestOptions = { budget: 600, store, maxStoreBytes: 1 };
    const pool = sessionPoolFor(options);
    const out = await compactOpenAIRequest(conversation(7), options);
    expect(pool.storeBytes).toBeUndefined();
    const refs = refsIn(out);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.map((r) => store.getText(r)).join("\n")).toContain("conversation 7 row 199");
  });

  it("a maxStoreBytes that is no byte count is named", async () => {
    await expect(compactOpenAIRequest(conversation(1), { budget: 600, maxStoreBytes: -1 })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "maxStoreBytes",
    });
  });
});
