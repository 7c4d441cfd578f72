/** redactOffload: secrets leave the offload store too, and what it keeps stays recoverable. */
import { describe, expect, it } from "vitest";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { createCompactor } from "../../src/policy/index.js";
import { createMemoryStore, getMessages, reachableRefs } from "../../src/store/index.js";

const kKey = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
const kPem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----";

/** A generated run whose tool outputs and a call's arguments carry an API key and a private key. */
function leakyRun(): Message[] {
  const messages = structuredClone(generateRun({ seed: 41, steps: 40 }).messages);
  let planted = 0;
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type === "tool-result" && planted < 6) {
        p.content = [{ type: "text", text: `OPENAI_API_KEY=${kKey}\n${kPem}\n` + "log line\n".repeat(400) }];
        planted++;
      }
      if (p.type === "tool-call" && planted === 6) {
        p.args = JSON.stringify({ command: `curl -H "Authorization: Bearer ${kKey}" https://api.example.com/v1/models`, note: "x".repeat(2000) });
        planted++;
      }
    }
  }
  expect(planted).toBe(7);
  return messages;
}

const storedTexts = (store: ReturnType<typeof createMemoryStore>) => store.refs().map((r) => store.getText(r));

describe("redactOffload", () => {
  it("keeps secrets out of every stored original, and every original stays reachable", async () => {
    const messages = leakyRun();
    for (const budget of [2000, 6000]) {
      const store = createMemoryStore();
      const r = await createCompactor({ store, redactOffload: true }).compactCanonical(messages, { budget });
      expect(r.tier).not.toBe("normal");
      const texts = storedTexts(store);
      expect(texts.length).toBeGreaterThan(3);
      for (const t of texts) {
        expect(t).not.toContain(kKey);
        expect(t).not.toContain("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7");
      }
      expect(texts.join("\n")).toContain("[REDACTED:");
      expect(JSON.stringify(r.canonical)).not.toContain(kKey);
      // Stored messages are still valid messages (redacted string by string, not as JSON text).
      const reached = reachableRefs(store, [JSON.stringify(r.canonical)]);
      for (const ref of r.refs) expect(reached.has(ref), ref).toBe(true);
      for (const ref of r.refs.filter((x) => x.includes("/history_"))) expect(() => getMessages(store, ref)).not.toThrow();
    }
  });

  it("is off by default: the store keeps the originals byte for byte (the recovery path)", async () => {
    const store = createMemoryStore();
    await createCompactor({ store }).compactCanonical(leakyRun(), { budget: 2000 });
    expect(storedTexts(store).some((t) => t.includes(kKey))).toBe(true);
  });

  it("is a boolean option: anything else is a located error", () => {
    expect(() => createCompactor({ redactOffload: "yes" as unknown as boolean })).toThrow(/redactOffload/);
  });
});
