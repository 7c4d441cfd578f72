import { describe, expect, it } from "vitest";
import {
  cachePricedCost,
  cachePrefixShare,
  commonPrefix,
  commonPrefixTokens,
  contentText,
  criticalCore,
  criticalMessages,
  criticalVerbatim,
  failedVisible,
  failedToolResults,
  isFailedToolResult,
  kPricing,
  parsePricing,
  percentile,
  prefixSplit,
  recoverable,
  samplePoints,
  visibleHead,
  type ChatMessage,
  type PrefixCounter,
} from "../../src/eval/metrics.js";
import { thrown } from "../helpers.js";

const sys: ChatMessage = { role: "system", content: "You are an agent." };
const task: ChatMessage = { role: "user", content: "Fix the failing test in utils.py." };
const a1: ChatMessage = {
  role: "assistant",
  content: "Let me run the tests.",
  tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: '{"command": "pytest"}' } }],
};
const failed: ChatMessage = {
  role: "tool",
  tool_call_id: "call_1",
  content:
    '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "utils.py", line 3\nZeroDivisionError: division by zero\n</output>',
};
const steer: ChatMessage = { role: "user", content: "Look at line 3." };
const a2: ChatMessage = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_10", type: "function", function: { name: "bash", arguments: '{"command": "sed -n 3p utils.py"}' } }],
};
const ok: ChatMessage = { role: "tool", tool_call_id: "call_10", content: "<returncode>0</returncode>\n<output>\nx = 1 / 0\n</output>" };
const input = [sys, task, a1, failed, steer, a2, ok];

describe("contentText", () => {
  it("reads strings, text parts and nothing else", () => {
    expect(contentText(task)).toBe("Fix the failing test in utils.py.");
    expect(contentText(a2)).toBe("");
    expect(
      contentText({
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "image_url", image_url: { url: "x" } },
          { type: "text", text: "b" },
        ],
      }),
    ).toBe("a\nb");
  });
});

describe("critical verbatim", () => {
  it("finds system, task, latest user and the latest assistant message with text", () => {
    expect(criticalMessages(input)).toEqual([
      { kind: "system", index: 0 },
      { kind: "task", index: 1 },
      { kind: "latest user", index: 4 },
      { kind: "latest assistant text", index: 2 },
    ]);
    // The latest assistant text calls a tool: its call and the result answering it must fit too.
    expect(criticalCore(input).map((m) => [m.role, m.content])).toEqual([
      ["system", sys.content],
      ["user", task.content],
      ["assistant", a1.content],
      ["tool", failed.content],
      ["user", steer.content],
    ]);
    expect(criticalCore(input)[2].tool_calls).toEqual(a1.tool_calls);
  });

  it("holds for the input itself and for copies", () => {
    expect(criticalVerbatim(input, input)).toEqual({ system: true, task: true, "latest user": true, "latest assistant text": true });
    const copy = input.map((m) => JSON.parse(JSON.stringify(m)) as ChatMessage);
    expect(Object.values(criticalVerbatim(input, copy)).every(Boolean)).toBe(true);
  });

  it("accepts a critical text merged into a larger message of the same role", () => {
    const merged: ChatMessage = { role: "user", content: `Previous actions (summarized):\n- ran pytest\n\n${task.content as string}` };
    expect(criticalVerbatim(input, [sys, merged, a1, failed, steer])).toMatchObject({ task: true, "latest user": true });
  });

  it("fails when dropped, shortened, or moved to another role", () => {
    expect(criticalVerbatim(input, [sys, a1, failed, steer]).task).toBe(false);
    expect(criticalVerbatim(input, [sys, { role: "user", content: "Fix the failing test" }, steer]).task).toBe(false);
    expect(criticalVerbatim(input, [sys, { role: "assistant", content: task.content }, steer]).task).toBe(false);
    expect(criticalVerbatim(input, [task, a1, steer]).system).toBe(false);
    expect(criticalVerbatim(input, [sys, task, steer])["latest assistant text"]).toBe(false);
  });

  it("counts developer as system and absent kinds as absent", () => {
    const dev: ChatMessage = { role: "developer", content: "You are an agent." };
    expect(criticalVerbatim([sys, task], [dev, task])).toEqual({ system: true, task: true, "latest user": true });
  });
});

describe("failed tool results", () => {
  it("detects errors and non-zero exit codes", () => {
    expect(isFailedToolResult(failed)).toBe(true);
    expect(isFailedToolResult(ok)).toBe(false);
    expect(isFailedToolResult({ role: "tool", tool_call_id: "c", content: "Error: user not found" })).toBe(true);
    expect(isFailedToolResult({ role: "tool", tool_call_id: "c", content: '{"error": "no such flight"}' })).toBe(true);
    expect(isFailedToolResult({ role: "tool", tool_call_id: "c", content: "exit code 2" })).toBe(true);
    expect(isFailedToolResult({ role: "tool", tool_call_id: "c", content: "all good" })).toBe(false);
    expect(isFailedToolResult({ role: "user", content: "Error: not a tool" })).toBe(false);
  });

  it("reads an exit code only in the result of a call that runs a command, or of a call the prompt does not show", () => {
    const script = '1\t#!/usr/bin/env bash\n2\tmake build || { echo "exit code 1"; exit 1; }';
    const call = (id: string, name: string, args: object) => ({ id, type: "function" as const, function: { name, arguments: JSON.stringify(args) } });
    const prompt: ChatMessage[] = [
      { role: "assistant", content: null, tool_calls: [call("r", "Read", { file_path: "build.sh" }), call("b", "Bash", { command: "make build" })] },
      { role: "tool", tool_call_id: "r", content: script },
      { role: "tool", tool_call_id: "b", content: "make: *** [build] exit code 1" },
      { role: "tool", tool_call_id: "orphan", content: "exit code 1" },
    ];
    // The file read that mentions an exit code has not failed; the command and the unknown call have.
    expect(failedToolResults(prompt).map((m) => (m as { tool_call_id: string }).tool_call_id)).toEqual(["b", "orphan"]);
    expect(isFailedToolResult(prompt[1])).toBe(true);
    expect(isFailedToolResult(prompt[1], call("r", "Read", { file_path: "build.sh" }))).toBe(false);
  });

  it("takes the error head, ignoring heads under 8 characters", () => {
    expect(visibleHead(contentText(failed))).toBe("ZeroDivisionError: division by zero");
    expect(visibleHead("Error")).toBe("");
  });

  it("is visible when kept whole, when its error head or its id is in some output text", () => {
    expect(failedVisible(failed, input)).toBe(true);
    expect(failedVisible(failed, [sys, task, { ...failed }])).toBe(true);
    expect(failedVisible(failed, [sys, task, steer])).toBe(false);
    const summary: ChatMessage = { role: "user", content: "Previous actions:\n✗ bash failed: ZeroDivisionError: division by zero" };
    expect(failedVisible(failed, [sys, summary, steer])).toBe(true);
    expect(failedVisible(failed, [sys, { role: "user", content: "step call_1 failed (see ref)" }])).toBe(true);
  });

  it("does not take a longer id or a shortened answer for it", () => {
    expect(failedVisible(failed, [sys, { role: "user", content: "step call_10 ok" }])).toBe(false);
    expect(failedVisible(failed, [sys, a1, { role: "tool", tool_call_id: "call_1", content: "<returncode>1</returncode> [output offloaded]" }])).toBe(false);
  });
});

describe("cache-prefix share", () => {
  // One token per character, plus one per message.
  const count: PrefixCounter = { message: (m) => contentText(m).length + 1, text: (s) => s.length };
  const m = (role: "user" | "assistant", content: string): ChatMessage => ({ role, content });
  const A = m("user", "aaaa");
  const B = m("assistant", "bbbbbb");
  const C = m("user", "cc");

  it("counts whole equal messages, then the common start of the first differing one", () => {
    expect(commonPrefixTokens([A, B], [A, B, C], count)).toBe(5 + 7);
    expect(cachePrefixShare([A, B], [A, B, C], count)).toBeCloseTo(12 / 15);
    expect(commonPrefixTokens([A, m("assistant", "bbbXYZ")], [A, B, C], count)).toBe(5 + 3);
    expect(commonPrefixTokens([A, m("user", "bbbbbb")], [A, B], count)).toBe(5);
    expect(commonPrefixTokens([C, A, B], [A, B], count)).toBe(0);
    expect(cachePrefixShare([A, B, C], [A, B, C], count)).toBe(1);
    expect(cachePrefixShare([A], [], count)).toBe(1);
  });

  it("compares messages by value, whatever their key order", () => {
    const x: ChatMessage = { role: "tool", tool_call_id: "t", content: "out" };
    const y = { content: "out", tool_call_id: "t", role: "tool" } as ChatMessage;
    expect(commonPrefixTokens([A, x], [A, y], count)).toBe(5 + 4);
    // Tool results of different calls share no partial prefix.
    expect(commonPrefixTokens([x], [{ role: "tool", tool_call_id: "u", content: "out" }], count)).toBe(0);
  });

  it("never cuts a surrogate pair", () => {
    expect(commonPrefix("ab😀", "ab😁")).toBe("ab");
    expect(commonPrefix("abc", "abd")).toBe("ab");
  });
});

describe("cache-priced cost", () => {
  const count: PrefixCounter = { message: (m) => contentText(m).length + 1, text: (s) => s.length };
  const m = (role: "user" | "assistant", content: string): ChatMessage => ({ role, content });
  const A = m("user", "aaaa"); // 5
  const B = m("assistant", "bbbbbb"); // 7
  const C = m("user", "cc"); // 3

  it("splits the later output into its common prefix with the earlier one and the rest", () => {
    expect(prefixSplit([A, B], [A, B, C], count)).toEqual({ total: 15, cached: 12 });
    expect(prefixSplit([A, m("assistant", "bbbXYZ")], [A, B, C], count)).toEqual({ total: 15, cached: 8 });
    expect(prefixSplit([C, A], [A, B], count)).toEqual({ total: 12, cached: 0 });
    expect(prefixSplit([A, B, C], [A], count)).toEqual({ total: 5, cached: 5 });
    expect(prefixSplit([A], [], count)).toEqual({ total: 0, cached: 0 });
  });

  it("prices the prefix at the read price and the rest at the write price, per preset and custom", () => {
    const split = prefixSplit([A, B], [A, B, C], count);
    expect(cachePricedCost(split, kPricing.anthropic)).toBeCloseTo(12 * 0.1 + 3 * 1.25, 12); // 4.95
    expect(cachePricedCost(split, kPricing.openai)).toBeCloseTo(12 * 0.1 + 3 * 1.0, 12); // 4.2
    expect(cachePricedCost(split, { name: "custom", read: 0.5, write: 2 })).toBe(12);
    // Nothing cached: every token at the write price; all cached: every token at the read price.
    expect(cachePricedCost({ total: 100, cached: 0 }, kPricing.anthropic)).toBe(125);
    expect(cachePricedCost({ total: 100, cached: 100 }, kPricing.openai)).toBeCloseTo(10, 12);
  });

  it("--pricing: a preset, or read=R,write=W; anything else names the pricing field", () => {
    expect(parsePricing("anthropic")).toEqual({ name: "anthropic", read: 0.1, write: 1.25 });
    expect(parsePricing(" openai ")).toEqual({ name: "openai", read: 0.1, write: 1.0 });
    expect(parsePricing("read=0.5,write=2")).toEqual({ name: "custom", read: 0.5, write: 2 });
    expect(parsePricing("write=1.1, read=0")).toEqual({ name: "custom", read: 0, write: 1.1 });
    const bad: [string, RegExp][] = [
      ["gemini", /^pricing: bad item "gemini": expected anthropic, openai or read=R,write=W/],
      ["read=0.1", /^pricing: missing write/],
      ["write=1", /^pricing: missing read/],
      ["read=0.1,write=0", /^pricing: write must be above 0/],
      ["read=-1,write=1", /^pricing: bad item "read=-1"/],
      ["read=0.1,read=0.2,write=1", /^pricing: read given twice/],
      ["read=0.1,,write=1", /^pricing: empty item/],
      ["", /^pricing: empty item/],
    ];
    for (const [spec, message] of bad) expect(thrown(() => parsePricing(spec), "E_BAD_INPUT").message, spec).toMatch(message);
  });
});

describe("recoverable", () => {
  const big = "x".repeat(5000) + "\nresult line\n";
  const tool: ChatMessage = { role: "tool", tool_call_id: "call_1", content: big };
  const shortened: ChatMessage = { role: "tool", tool_call_id: "call_1", content: "Read file (5 KB) → workspace/outputs/read_1.txt" };
  const inp = [sys, task, a1, tool];

  it("counts the bytes no output text holds any more, and those a stored text gives back", () => {
    expect(recoverable(inp, inp, [])).toEqual({ affected: 0, recovered: 0 });
    expect(recoverable(inp, [sys, task, a1, shortened], [big])).toEqual({ affected: 5013, recovered: 5013 });
    expect(recoverable(inp, [sys, task, a1, shortened], [])).toEqual({ affected: 5013, recovered: 0 });
    expect(recoverable(inp, [sys, task, a1, shortened], [JSON.stringify([{ role: "tool", parts: [{ text: big }] }])])).toEqual({
      affected: 5013,
      recovered: 5013,
    });
  });

  it("counts dropped messages' texts and tool-call arguments", () => {
    const bytes = Buffer.byteLength(a1.content as string) + Buffer.byteLength('{"command": "pytest"}') + 5013;
    expect(recoverable(inp, [sys, task], [JSON.stringify([a1, tool])])).toEqual({ affected: bytes, recovered: bytes });
  });
});

describe("samplePoints", () => {
  it("keeps every point of a short run", () => {
    expect(samplePoints(3, 40)).toEqual([
      { point: 0, withPrev: false },
      { point: 1, withPrev: true },
      { point: 2, withPrev: true },
    ]);
  });

  it("samples a long run as evenly spaced consecutive pairs ending with the last two points", () => {
    const s = samplePoints(100, 40);
    expect(s).toHaveLength(40);
    expect(s[0]).toEqual({ point: 0, withPrev: false });
    expect(s.at(-1)).toEqual({ point: 99, withPrev: true });
    for (let k = 0; k < s.length; k += 2) {
      expect(s[k + 1].point).toBe(s[k].point + 1);
      expect(s[k].withPrev).toBe(false);
      expect(s[k + 1].withPrev).toBe(true);
      if (k > 0) expect(s[k].point).toBeGreaterThan(s[k - 1].point);
    }
    expect(samplePoints(41, 40)).toHaveLength(40);
    expect(samplePoints(10, 3)).toEqual([
      { point: 8, withPrev: false },
      { point: 9, withPrev: true },
    ]);
  });
});

describe("percentile", () => {
  it("takes the nearest rank", () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });
});
