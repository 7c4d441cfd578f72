/**
 * Text ctxfold writes never echoes a secret: secret-named tool-call argument values (without any
 * known prefix) and known secret shapes, in every wire format, through the tiered compactor, the
 * step compactor and block compaction, with or without redactOffload, where tool outputs and the
 * agent's text echo them too. A secret may stay only in a part the output keeps verbatim from the
 * input (that part is the caller's own).
 */
import { describe, expect, it } from "vitest";
import { kFormats, parseMessages, renderMessages, type Format } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import type { Message, Part } from "../../src/model/schema.js";
import { createCompactor } from "../../src/policy/index.js";
import { DefaultBlockCompaction, compactMessages, resolveSessionConfig, turnMapOf } from "../../src/session/index.js";
import { assignTurns } from "../../src/session/loops.js";
import { compactStepMessages } from "../../src/steps/messages.js";
import { StepReducer } from "../../src/steps/reducer.js";
import { createMemoryStore } from "../../src/store/index.js";

/** Secrets with no provider prefix, each under a secret-named key, and one in a command's flag. */
const kCalls: { name: string; args: Record<string, unknown> }[] = [
  { name: "deploy", args: { target: "prod", password: "Hunter2Hunter2Zebra" } },
  { name: "publish", args: { package: "web", token: "Zt9qLmX4vB7nQ2wK" } },
  { name: "configure", args: { service: "billing", api_key: "Q7mV2xN9pL4kR8sT" } },
  { name: "rotate", args: { name: "db", secret: "s3cr3tV4lu3Quokka" } },
  { name: "connect", args: { host: "db.internal", db_password: "P4ssw0rdNebula77", githubToken: "Gt5Yh8Kp2Wq6Ze3R", headers: { "X-Api-Key": "Hk4Jd9Lm2Vb6Nc8X" } } },
  { name: "run_shell", args: { command: "release-tool push --token Rk3Wm8Zp5Xq2Lv7N --verbose" } },
];
/** A known shape the user pasted into a steering message. */
const kUserSecret = "Mq8Ws3Ed5Rf7Tg9Y";
const kSecrets = [
  "Hunter2Hunter2Zebra", "Zt9qLmX4vB7nQ2wK", "Q7mV2xN9pL4kR8sT", "s3cr3tV4lu3Quokka",
  "P4ssw0rdNebula77", "Gt5Yh8Kp2Wq6Ze3R", "Hk4Jd9Lm2Vb6Nc8X", "Rk3Wm8Zp5Xq2Lv7N", kUserSecret,
];

/** A generated run with the secret calls planted among its first steps, and a steering message with a key in it. */
function plantedRun(seed: number): Message[] {
  const messages = structuredClone(generateRun({ seed, steps: 16, steering: 0, parallel: 0 }).messages);
  let planted = 0;
  // From the fourth step on: steps the step compactor lists (not the earliest, which it may omit).
  let calls = 0;
  for (let i = 0; i < messages.length && planted < kCalls.length; i++) {
    const m = messages[i];
    if (m.role !== "assistant" || !m.parts.some((p) => p.type === "tool-call") || ++calls < 4) continue;
    const { name, args } = kCalls[planted];
    const id = `call_secret_${planted}`;
    m.parts.push({ type: "tool-call", id, name, args: JSON.stringify(args) });
    const result = messages.slice(i + 1).find((x) => x.role === "tool")!;
    // Some outputs and the agent's text echo a value: what ctxfold writes from them must not.
    // …their own call's value, or (the last call) the first call's.
    const last = planted === kCalls.length - 1;
    const echo = planted % 2 === 0 ? ` (${Object.values(args).filter((v) => typeof v === "string").at(-1)} accepted)` : "";
    const text = last ? `Error: push rejected for user deploy:${kSecrets[0]}` : `${name}: done${echo}`;
    result.parts.push({ type: "tool-result", callId: id, name, content: [{ type: "text", text }], ...(last ? { isError: true } : {}) });
    if (planted === 4) m.parts.unshift({ type: "text", text: "I'll connect to db.internal with P4ssw0rdNebula77 and then check the replication lag on the primary." });
    planted++;
  }
  expect(planted).toBe(kCalls.length);
  const at = messages.findIndex((m, i) => i > 3 && m.role === "tool") + 1;
  messages.splice(at, 0, { id: "steer-secret", role: "user", parts: [{ type: "text", text: `Use DB_PASSWORD=${kUserSecret} for the staging database.` }], meta: {} });
  return messages;
}

/** The run as one format's wire messages, read back: what a caller of that format hands ctxfold. */
function throughFormat(messages: readonly Message[], format: Format): { wire: unknown; canonical: Message[] } {
  const wire = renderMessages(messages, format);
  return { wire, canonical: parseMessages(wire, { format }).messages };
}

const partKey = (p: Part): string => {
  const { meta: _, ...rest } = p;
  return JSON.stringify(rest);
};

/** Every secret (or its first 8 characters: a cut copy leaks too) found in `output` outside the parts it keeps verbatim from `input`, with where. */
function leaks(input: readonly Message[], output: readonly Message[]): string[] {
  const verbatim = new Set(input.flatMap((m) => m.parts.map(partKey)));
  const found: string[] = [];
  output.forEach((m, i) => m.parts.forEach((p, k) => {
    const key = partKey(p);
    if (verbatim.has(key)) return;
    for (const s of kSecrets) if (key.includes(s.slice(0, 8))) found.push(`message ${i} (${m.role}) part ${k}: ${s} in ${key.slice(0, 300)}`);
  }));
  return found;
}

const written = (input: readonly Message[], output: readonly Message[]): string => {
  const verbatim = new Set(input.flatMap((m) => m.parts.map(partKey)));
  return output.flatMap((m) => m.parts.map(partKey)).filter((k) => !verbatim.has(k)).join("\n");
};

describe("text ctxfold writes never echoes a secret", () => {
  const runs = [7, 19].map(plantedRun);

  it.each(kFormats)("the tiered compactor, %s, at every tier, with and without redactOffload", async (format) => {
    for (const run of runs) {
      const { wire, canonical } = throughFormat(run, format);
      for (const redactOffload of [false, true]) {
        for (const budget of [1500, 4000, 9000]) {
          const r = await createCompactor({ store: createMemoryStore(), redactOffload }).compact(wire as unknown[], { budget, format });
          expect(leaks(canonical, r.canonical), `${format} @${budget} redactOffload=${redactOffload}`).toEqual([]);
          const out = JSON.stringify(r.messages);
          for (const s of kSecrets) if (out.includes(s.slice(0, 8))) expect(leaks(canonical, parseMessages(r.messages, { format }).messages)).toEqual([]);
        }
      }
    }
  });

  it("the tiered compactor writes the secret calls' redacted arguments where it compacts them", async () => {
    const { wire, canonical } = throughFormat(runs[0], "openai-chat");
    const r = await createCompactor({ store: createMemoryStore() }).compact(wire as unknown[], { budget: 4000, format: "openai-chat" });
    expect(r.tier).not.toBe("normal");
    expect(written(canonical, r.canonical)).toContain("Called deploy(prod, [REDACTED:credential])");
  });

  it("a caller's summariser answer is redacted before it goes into the prompt", async () => {
    const key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
    const summarizer = (text: string) => `Summary (${text.length} chars). The deploy used OPENAI_API_KEY=${key}.`;
    const r = await createCompactor({ store: createMemoryStore(), summarizer }).compactCanonical(runs[1], { budget: 1500 });
    const out = JSON.stringify(r.canonical);
    expect(out).toContain("OPENAI_API_KEY=[REDACTED:");
    expect(out).not.toContain(key);
  });

  it.each(kFormats)("the step compactor, %s", (format) => {
    for (const run of runs) {
      const { canonical } = throughFormat(run, format);
      const r = compactStepMessages(canonical, { reducer: new StepReducer({ store: createMemoryStore() }), force: true });
      expect(r.compacted).toBe(true);
      expect(leaks(canonical, r.messages), format).toEqual([]);
      const summary = written(canonical, r.messages);
      expect(summary).toContain("Called deploy(prod, [REDACTED:credential])");
    }
  });

  it.each(kFormats)("block compaction and session compaction, %s", (format) => {
    for (const run of runs) {
      const { canonical } = throughFormat(run, format);
      const loop = { id: 0, messages: assignTurns(canonical, 0) };
      const config = resolveSessionConfig({ keepFirstTurns: 1, keepRecentTurns: 2, maxSummaryTokens: 4000 });
      const section = new DefaultBlockCompaction({ store: createMemoryStore() }).keepCompacted(loop, turnMapOf(loop), config, true)!;
      expect(section.messages).toHaveLength(1);
      expect(leaks(loop.messages, section.messages), format).toEqual([]);
      expect(written(loop.messages, section.messages)).toContain("DB_PASSWORD=[REDACTED:credential]");
      const r = compactMessages(loop.messages, { keepRecentTurns: 2, maxSummaryTokens: 4000 }, 3000);
      expect(r.level).toBeGreaterThanOrEqual(2);
      expect(leaks(loop.messages, r.messages), format).toEqual([]);
    }
  });
});
