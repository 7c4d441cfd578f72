/**
 * Runs whose tool calls carry secrets under secret-named argument keys (no provider prefix),
 * echoed by some outputs and by the agent's text, and how to find a secret in what ctxfold wrote:
 * shared by the tests of redaction through the API and through the CLI.
 */
import { expect } from "vitest";
import { parseMessages, renderMessages, type Format } from "../src/adapters/index.js";
import { generateRun } from "../src/gen/run.js";
import type { Message, Part } from "../src/model/schema.js";

/** Secrets with no provider prefix, each under a secret-named key, and one in a command's flag. */
export const kCalls: { name: string; args: Record<string, unknown> }[] = [
  { name: "deploy", args: { target: "prod", password: "Hunter2Hunter2Zebra" } },
  { name: "publish", args: { package: "web", token: "Zt9qLmX4vB7nQ2wK" } },
  { name: "configure", args: { service: "billing", api_key: "Q7mV2xN9pL4kR8sT" } },
  { name: "rotate", args: { name: "db", secret: "s3cr3tV4lu3Quokka" } },
  {
    name: "connect",
    args: { host: "db.internal", db_password: "P4ssw0rdNebula77", githubToken: "Gt5Yh8Kp2Wq6Ze3R", headers: { "X-Api-Key": "Hk4Jd9Lm2Vb6Nc8X" } },
  },
  { name: "run_shell", args: { command: "release-tool push --token Rk3Wm8Zp5Xq2Lv7N --verbose" } },
];
/** A known shape the user pasted into a steering message. */
export const kUserSecret = "Mq8Ws3Ed5Rf7Tg9Y";
export const kSecrets = [
  "Hunter2Hunter2Zebra",
  "Zt9qLmX4vB7nQ2wK",
  "Q7mV2xN9pL4kR8sT",
  "s3cr3tV4lu3Quokka",
  "P4ssw0rdNebula77",
  "Gt5Yh8Kp2Wq6Ze3R",
  "Hk4Jd9Lm2Vb6Nc8X",
  "Rk3Wm8Zp5Xq2Lv7N",
  kUserSecret,
];

/** A generated run with the secret calls planted among its first steps, and a steering message with a key in it. */
export function plantedRun(seed: number): Message[] {
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
    const echo =
      planted % 2 === 0
        ? ` (${Object.values(args)
            .filter((v) => typeof v === "string")
            .at(-1)} accepted)`
        : "";
    const text = last ? `Error: push rejected for user deploy:${kSecrets[0]}` : `${name}: done${echo}`;
    result.parts.push({ type: "tool-result", callId: id, name, content: [{ type: "text", text }], ...(last ? { isError: true } : {}) });
    if (planted === 4)
      m.parts.unshift({ type: "text", text: "I'll connect to db.internal with P4ssw0rdNebula77 and then check the replication lag on the primary." });
    planted++;
  }
  expect(planted).toBe(kCalls.length);
  const at = messages.findIndex((m, i) => i > 3 && m.role === "tool") + 1;
  messages.splice(at, 0, {
    id: "steer-secret",
    role: "user",
    parts: [{ type: "text", text: `Use DB_PASSWORD=${kUserSecret} for the staging database.` }],
    meta: {},
  });
  return messages;
}

/** The run as one format's wire messages, read back: what a caller of that format hands ctxfold. */
export function throughFormat(messages: readonly Message[], format: Format): { wire: unknown; canonical: Message[] } {
  const wire = renderMessages(messages, format);
  return { wire, canonical: parseMessages(wire, { format }).messages };
}

const partKey = (p: Part): string => {
  const { meta: _, ...rest } = p;
  return JSON.stringify(rest);
};

/** Every secret (or its first 8 characters: a cut copy leaks too) found in `output` outside the parts it keeps verbatim from `input`, with where. */
export function leaks(input: readonly Message[], output: readonly Message[]): string[] {
  const verbatim = new Set(input.flatMap((m) => m.parts.map(partKey)));
  const found: string[] = [];
  output.forEach((m, i) =>
    m.parts.forEach((p, k) => {
      const key = partKey(p);
      if (verbatim.has(key)) return;
      for (const s of kSecrets) if (key.includes(s.slice(0, 8))) found.push(`message ${i} (${m.role}) part ${k}: ${s} in ${key.slice(0, 300)}`);
    }),
  );
  return found;
}

export const written = (input: readonly Message[], output: readonly Message[]): string => {
  const verbatim = new Set(input.flatMap((m) => m.parts.map(partKey)));
  return output
    .flatMap((m) => m.parts.map(partKey))
    .filter((k) => !verbatim.has(k))
    .join("\n");
};
