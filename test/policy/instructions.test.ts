/**
 * Standing instructions on the corpus: a user instruction planted 30% into every run of 20 or
 * more messages (at the first message boundary from there where a user message is valid) is in
 * every later compacted prompt, verbatim, at 8k and 32k, replayed in a session as a runner
 * would call it. The instruction names no term of any run, so only the mechanism that keeps
 * human turns (src/policy/relevance/instructions.ts) can keep it.
 */
import { describe, expect, it } from "vitest";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { marked } from "../../src/model/marks.js";
import type { Message } from "../../src/model/schema.js";
import { classify } from "../../src/policy/classify.js";
import { standingInstructions } from "../../src/policy/relevance/instructions.js";
import { generateRun } from "../../src/gen/run.js";
import { promptPoints, spread } from "../../src/eval/replay.js";
import { promptTokens } from "../../src/eval/tokens.js";
import { createCompactor } from "../../src/policy/index.js";
import { createMemoryStore, reachableRefs } from "../../src/store/index.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";

const kInstruction = "From now on, never modify files under tests/ and keep every public function's signature unchanged.";

/** Where the instruction goes: the first index from 30% of the run where a user message may stand (no call left unanswered before it). */
function plantAt(messages: readonly OpenAIChatMessage[]): number {
  for (let k = Math.max(1, Math.floor(messages.length * 0.3)); k < messages.length; k++) {
    const prev = messages[k - 1];
    const open = prev.role === "assistant" && (prev.tool_calls?.length ?? 0) > 0;
    if (!open && messages[k].role !== "tool") return k;
  }
  return -1;
}

const user = (id: string, text: string, meta: Message["meta"] = {}): Message => ({ id, role: "user", parts: [{ type: "text", text }], meta });
const words = (t: string) => t.split(/\s+/).length;

describe("which user turns are standing instructions", () => {
  const settings = { instructionTokens: 10, instructionRatio: 0.5 };
  it("user turns after the task, text only, at most instructionTokens, newest first within instructionRatio × budget", () => {
    const msgs: Message[] = [
      user("task", "fix the parser"),
      user("u1", "never touch tests/"),
      { id: "t", role: "tool", parts: [{ type: "tool-result", callId: "c", content: [{ type: "text", text: "ok" }] }], meta: {} },
      user("long", "paste ".repeat(40)),
      user("note", "[Earlier context, merged]", { ctxfold: { kind: "merge", ref: "r" } }),
      user("u2", "use pnpm not npm"),
      { id: "a", role: "assistant", parts: [{ type: "text", text: "done" }], meta: {} },
      user("latest", "go on"),
    ];
    // The latest user message is critical: it takes none of the room.
    expect([...standingInstructions(msgs, classify(msgs), settings, 100, words).keys()].sort()).toEqual([1, 5]);
    // Room for one: the newest; where the newest does not fit, the next that does.
    expect([...standingInstructions(msgs, classify(msgs), settings, 8, words).keys()]).toEqual([5]);
    expect([...standingInstructions(msgs, classify(msgs), settings, 6, words).keys()]).toEqual([1]);
    // Off.
    expect(standingInstructions(msgs, classify(msgs), { ...settings, instructionTokens: 0 }, 100, words).size).toBe(0);
    expect(standingInstructions(msgs, classify(msgs), { ...settings, instructionRatio: 0 }, 100, words).size).toBe(0);
  });

  it("a turn repeated word for word later counts once, as its latest copy; ctxfold's parts joined to a turn are not its text", () => {
    const msgs: Message[] = [
      user("task", "fix the parser"),
      user("r1", "Provide EXACTLY ONE action."),
      user("x", "keep the API"),
      user("r2", "Provide EXACTLY ONE action."),
      {
        id: "j",
        role: "user",
        parts: [{ type: "text", text: "stop and ask first" }, marked({ type: "text", text: "[summary]" }, { kind: "step-summary", ref: "r", failed: [] })],
        meta: {},
      },
      user("latest", "go on"),
    ];
    const kept = standingInstructions(msgs, classify(msgs), settings, 100, words);
    expect([...kept.keys()].sort()).toEqual([2, 3, 4]);
    // Of the joined message, its own turn, not the step summary.
    expect(kept.get(4)).toEqual([msgs[4].parts[0]]);
  });
});

describe("a planted instruction on generated runs", () => {
  it("stays verbatim through stage 4's merges, in a session; with instructionTokens 0 the merges lose it", async () => {
    const instruction = "Never modify files under tests/ and ask before deleting anything.";
    const replay = async (config: { instructionTokens?: number }) => {
      let merged = 0;
      const lost: string[] = [];
      for (const seed of [3, 5, 8]) {
        const run = generateRun({ seed, steps: 40 }).messages;
        const k = run.findIndex((m, i) => i >= run.length * 0.3 && m.role === "assistant" && run[i - 1].role !== "assistant");
        const messages = [...run.slice(0, k), user("planted", instruction), ...run.slice(k)];
        for (const budget of [1500, 2000]) {
          const session = createCompactor({ store: createMemoryStore(), ...config }).session();
          for (let p = k + 2; p <= messages.length; p += 3) {
            const r = await session.compactCanonical(messages.slice(0, p), { budget });
            if (r.stages.some((s) => s.stage === 4 && s.compacted > 0)) merged++;
            if (r.tier !== "normal" && !JSON.stringify(r.canonical).includes(instruction)) lost.push(`seed ${seed} @${p} ${budget}`);
          }
        }
      }
      return { merged, lost };
    };
    const on = await replay({});
    expect(on.merged).toBeGreaterThan(3);
    expect(on.lost).toEqual([]);
    expect((await replay({ instructionTokens: 0 })).lost.length).toBeGreaterThan(0);
  });
});

describe("bad input for standing instructions", () => {
  const assistant = (id: string, text: string): Message => ({ id, role: "assistant", parts: [{ type: "text", text }], meta: {} });
  const para = (k: number) => Array.from({ length: 60 }, (_, j) => `Point ${k}.${j}: service node-${(k * 7 + j) % 13} answered in ${100 + j} ms.`).join(" ");

  it("a chat without tool calls, a sub-agent run opening with the assistant, [image] and non-English turns: kept verbatim, never a throw", async () => {
    const turns = ["[image]", "テストディレクトリのファイルは変更しないでください。", "Ne modifie jamais les fichiers de tests/."];
    const messages: Message[] = [assistant("open", "Sub-agent here: I will audit the latency logs."), user("task", `Audit these logs. ${para(0)}`)];
    for (let k = 1; k <= 24; k++) {
      messages.push(assistant(`a${k}`, para(k)));
      messages.push(user(`u${k}`, k % 8 === 1 ? turns[(k - 1) / 8] : para(k + 100)));
    }
    messages.push(user("last", "Which node is slowest?"));
    const compactor = createCompactor({ store: createMemoryStore() });
    for (const budget of [3000, 8000]) {
      const r = await compactor.compactCanonical(messages, { budget });
      expect(r.status, `${budget}`).toBe("ok");
      expect(r.tokensAfter).toBeLessThanOrEqual(budget);
      const out = JSON.stringify(r.canonical);
      for (const t of turns) expect(out, `${budget}: ${t}`).toContain(JSON.stringify(t).slice(1, -1));
    }
  });

  it("a user turn of 50,000 tokens is history, not an instruction: summarised with its ref; as the task, critical and refused with the sizes", async () => {
    const huge = "The build log follows, line by line. ".repeat(6500);
    const store = createMemoryStore();
    const compactor = createCompactor({ store });
    expect(compactor.measure([user("x", huge)])).toBeGreaterThan(40_000);
    const mid: Message[] = [
      user("task", "Fix the build."),
      assistant("a", "Please paste the log."),
      user("log", huge),
      assistant("b", "Reading it."),
      user("last", "Go on."),
    ];
    const r = await compactor.compactCanonical(mid, { budget: 8000 });
    expect(r.status).toBe("ok");
    expect(r.tokensAfter).toBeLessThanOrEqual(8000);
    // Not kept verbatim, and every original it stands for is reachable from the output.
    expect(JSON.stringify(r.canonical)).not.toContain(huge);
    const reached = reachableRefs(store, [JSON.stringify(r.canonical)]);
    expect(r.refs.length).toBeGreaterThan(0);
    expect(r.refs.filter((ref) => !reached.has(ref))).toEqual([]);
    const first = await compactor.compactCanonical([user("task", huge), assistant("a", "ok")], { budget: 8000 });
    expect(first.status).toBe("budget_infeasible");
    expect(first.infeasible!.criticalTokens).toBeGreaterThan(8000);
  });
});

describe.skipIf(!hasCorpus)(`a planted instruction${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  it("is in every later compacted prompt, verbatim, on every source at 8k and 32k", async () => {
    const runs = corpusLines().map((l) => JSON.parse(l) as CorpusRun & { messages: OpenAIChatMessage[] });
    const lost: Record<string, { prompts: number; lost: number; first?: string }> = {};
    for (const run of runs) {
      if (run.messages.length < 20) continue;
      const k = plantAt(run.messages);
      if (k < 0) continue;
      const messages = [...run.messages.slice(0, k), { role: "user", content: kInstruction } as OpenAIChatMessage, ...run.messages.slice(k)];
      const points = spread(
        promptPoints(messages).filter((p) => p > k + 1),
        10,
      );
      const source = run.id.split("/")[0];
      for (const budget of [8000, 32000]) {
        const session = createCompactor({ store: createMemoryStore() }).session();
        const row = (lost[`${source}@${budget}`] ??= { prompts: 0, lost: 0 });
        for (const p of points) {
          const prompt = messages.slice(0, p);
          if (promptTokens(prompt) <= budget) continue;
          const r = await session.compact(prompt, { budget, format: "openai-chat" });
          row.prompts++;
          if (!JSON.stringify(r.messages).includes(kInstruction)) {
            row.lost++;
            row.first ??= `${run.id} @${p}`;
          }
        }
      }
    }
    const bad = Object.entries(lost).filter(([, r]) => r.lost > 0);
    expect(Object.values(lost).reduce((n, r) => n + r.prompts, 0)).toBeGreaterThan(1000);
    expect(bad, JSON.stringify(lost, null, 1)).toEqual([]);
  }, 600_000);
});
