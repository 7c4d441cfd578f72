/** render.ts: what the five renderers share. */
import { describe, expect, it } from "vitest";
import { openaiChatAdapter } from "../../src/adapters/openai-chat.js";
import { ContentRuns, eachMessage, signatureFields } from "../../src/adapters/render.js";
import type { Message } from "../../src/model/schema.js";

describe("render", () => {
  it("hands back untouched groups whole and builds the rest", () => {
    const wire = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ];
    const messages = openaiChatAdapter.parse(wire);
    const edited: Message[] = [messages[0]!, { ...messages[1]!, parts: [] }];
    const seen: string[] = [];
    eachMessage(
      edited,
      "openai-chat",
      undefined,
      (raw, i) => seen.push(`reused ${i} ${JSON.stringify(raw)}`),
      (i) => (seen.push(`built ${i}`), i + 1),
    );
    expect(seen).toEqual([`reused 0 ${JSON.stringify(wire[0])}`, "built 1"]);
    seen.length = 0;
    eachMessage(
      edited,
      "openai-chat",
      { reuse: false },
      () => seen.push("reused"),
      (i) => (seen.push(`built ${i}`), i + 1),
    );
    expect(seen).toEqual(["built 0", "built 1"]);
  });

  it("gathers consecutive content parts into one wire message, the first one marked", () => {
    const out: string[] = [];
    const runs = new ContentRuns<string, string>(out, (parts, at, first) => `${first ? "first " : ""}${parts.join("+")}@${at.join(",")}`);
    runs.add("a", 0);
    runs.add("b", 1);
    runs.push("call");
    runs.add("c", 3);
    runs.flush();
    runs.flush();
    expect(out).toEqual(["first a+b@0,1", "call", "c@3"]);
    expect(runs.emitted).toBe(3);
  });

  it("writes a reasoning part's signature and redacted data under the format's keys", () => {
    expect(signatureFields({ type: "reasoning", text: "t" }, "redacted")).toBeUndefined();
    expect(signatureFields({ type: "reasoning", signature: "s", redacted: "r" }, "redactedData")).toEqual({ signature: "s", redactedData: "r" });
  });
});
