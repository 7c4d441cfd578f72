/**
 * The validators on recorded runs: they never throw, and newViolations tells a real change
 * (one tool result dropped) apart from what the recording already had wrong.
 */
import { describe, expect, it } from "vitest";
import { kFormats, openaiChatAdapter } from "../../src/adapters/index.js";
import { newViolations, validate } from "../../src/validate/index.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";

describe.skipIf(!hasCorpus)(`validators on the corpus${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  const runs = hasCorpus ? corpusLines().map((l) => JSON.parse(l) as CorpusRun) : [];

  it("validate runs on every run in every format and reports only known codes with paths", () => {
    for (const run of runs) {
      const messages = openaiChatAdapter.parse(run.messages, { source: run.id });
      for (const format of kFormats) {
        const r = validate(messages, format);
        expect(r.ok).toBe(r.issues.every((i) => i.severity !== "error"));
        for (const i of r.issues) expect(i.path).toMatch(/^messages\[\d+\]/);
      }
    }
  });

  it("dropping one tool result is reported as exactly one new unanswered call", () => {
    let checked = 0;
    for (const run of runs) {
      const messages = openaiChatAdapter.parse(run.messages, { source: run.id });
      // A tool message in the middle of the run, so the call's assistant turn is closed by a later message.
      const at = messages.findIndex((m, i) => m.role === "tool" && i > messages.length / 2 && messages.slice(i + 1).some((n) => n.role === "assistant"));
      if (at < 0) continue;
      const callId = (messages[at]!.parts[0] as { callId: string }).callId;
      const before = validate(messages, "openai-chat");
      const after = validate(
        messages.filter((_, i) => i !== at),
        "openai-chat",
      );
      expect(newViolations(before, after).map((i) => [i.code, i.key])).toEqual([["TOOL_CALL_UNANSWERED", callId]]);
      expect(newViolations(before, before)).toEqual([]);
      checked++;
    }
    expect(checked).toBeGreaterThan(200);
  });
});
