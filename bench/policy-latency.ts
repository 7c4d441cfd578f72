/**
 * `npm run bench:policy [-- --docs | --integrations]`: the tiered compactor in a session, as a
 * runner uses it, on generated 520-step runs (seeded; no corpus needed). Measures, in one process:
 * - appending one step: each call gives the session the conversation with one more step; the
 *   baseline is rendering that step to OpenAI Chat JSON (work a runner does per call anyway);
 * - the same through OpenAI chat input, parsed at every call (the integrations' path); the
 *   baseline is that parse;
 * - epoch compactions in a session called at every step, as a runner calls it (the epochs past
 *   step 400 of six generated runs, kFedSeeds), with the event loop given a turn between calls
 *   (a runner awaiting its model: idle-time preparation runs, and the next epoch is compacted
 *   ahead), the same with every epoch compacted in its own call (aheadRatio 0), and back to back
 *   (no idle time); one epoch compaction of the whole seed-5 run in a session last called 60
 *   steps earlier (twice the new steps); and cold (a fresh compactor). The baseline is one
 *   JSON.stringify of the seed-5 run;
 * - appending one step through an integration (compactOpenAIRequest, the AI SDK middleware's
 *   transformParams) on the dev corpus's three longest runs and the generated run: each call
 *   gets the conversation up to the next assistant message; its time is divided by one
 *   JSON.stringify of those messages (timed apart), and p50 / p99 of that ratio over the calls
 *   are reported, with the same message objects growing call by call and with messages parsed
 *   afresh for each call (a JSON round trip made outside the timed region). Each sequence runs
 *   three times (fresh sessions) and each call counts its fastest time (see bestOf).
 * Reported as p50 / p99 and as ratios to the baselines (absolute times move with the machine).
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { parseMessages, renderMessages } from "../src/adapters/index.js";
import { generateRun, stepEnds } from "../src/gen/run.js";
import type { Message } from "../src/model/schema.js";
import { ctxfoldMiddleware, type AiSdkPromptMessage } from "../src/integrations/ai-sdk.js";
import { compactOpenAIRequest } from "../src/integrations/requests.js";
import { createCompactor } from "../src/policy/index.js";
import { createMemoryStore } from "../src/store/index.js";
import { rewriteDocSection } from "./lib.js";

const kCorpus = fileURLToPath(new URL("../../../shared/corpus/dev.jsonl.gz", import.meta.url));

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const msf = (ms: number) => `${ms.toFixed(2)} ms`;

/** The budget of the runs whose epochs are timed: an epoch every ~35 steps of the generated run. */
const kEpochBudget = 32_000;

async function main(): Promise<void> {
  const messages = generateRun({ seed: 5, steps: 520 }).messages;
  if (process.argv.includes("--integrations")) {
    // Only the integration rows (no docs rewrite): a quicker look at the integrations alone.
    process.stdout.write((await integrationTable(messages)) + "\n");
    return;
  }
  const ends = stepEnds(messages);
  const appends = await timeAppends(messages, ends);
  const wire = await timeWireAppends(messages, ends);
  const fed = await timeFedEpochs();
  const whole = await timeWholeEpochs(messages);
  const md = [
    `Generated run: 520 steps, ${messages.length} messages, budget ${kEpochBudget.toLocaleString("en-US")} for epochs.`,
    "",
    "| in a session | p50 | p99 | baseline p50 | vs baseline | target |",
    "|---|---:|---:|---:|---:|---|",
    row("append one step", appends.append, us, appends.render, " (render the step)", 1, "p50 ≤ 20 µs, p99 ≤ 1 ms"),
    row("append one step, OpenAI chat input (parsed each call; steps past 400)", wire.compact, msf, wire.parse, " (parse the input)", 1),
    row(
      `one epoch compaction, session called every step, runner awaiting its model in between (${fed.idle.length} epochs past step 400 of runs seeded ${kFedSeeds.join(", ")}; ${fed.idle.filter((ms) => ms < kServedAheadMs).length} under ${kServedAheadMs} ms)`,
      fed.idle,
      msf,
      whole.stringify,
      " (JSON.stringify of the run)",
      2,
      "≤ 5 ms",
    ),
    row("the same, each epoch compacted in its own call (aheadRatio 0)", fed.own, msf, whole.stringify, "", 2),
    row("one epoch compaction, session called every step back to back (no idle time)", fed.busy, msf, whole.stringify, "", 2),
    row("one epoch compaction, session last called 60 steps before", whole.epoch, msf, whole.stringify, "", 1),
    row("one epoch compaction, cold compactor", whole.cold, msf, whole.stringify, "", 1),
    "",
    await integrationTable(messages),
  ].join("\n");
  if (process.argv.includes("--docs")) rewriteDocSection("policy", md);
  process.stdout.write(md + "\n");
}

/** A row of the session table: the times' p50 and p99, the baseline's p50 (and what it is), their ratio with `digits` decimals, the target. */
function row(name: string, times: number[], unit: (ms: number) => string, baseline: number[], baselineNote: string, digits: number, target = ""): string {
  const ratio = (pct(times, 0.5) / pct(baseline, 0.5)).toFixed(digits);
  return `| ${name} | ${unit(pct(times, 0.5))} | ${unit(pct(times, 0.99))} | ${unit(pct(baseline, 0.5))}${baselineNote} | ${ratio}x |${target ? ` ${target} ` : " "}|`;
}

/**
 * Appending one step in a session (a budget large enough that appends stay in the epoch), three
 * rounds of fresh sessions; the baseline is rendering that step to OpenAI Chat JSON.
 */
async function timeAppends(messages: Message[], ends: number[]): Promise<{ append: number[]; render: number[] }> {
  const append: number[] = [];
  const render: number[] = [];
  for (let round = 0; round < 3; round++) {
    const compactor = createCompactor({ store: createMemoryStore() });
    const session = compactor.session();
    const big = compactor.measure(messages) * 2;
    await session.compactCanonical(messages.slice(0, ends[0]), { budget: big });
    for (let k = 1; k < ends.length; k++) {
      const view = messages.slice(0, ends[k]);
      let t = performance.now();
      await session.compactCanonical(view, { budget: big });
      append.push(performance.now() - t);
      t = performance.now();
      JSON.stringify(renderMessages(messages.slice(ends[k - 1], ends[k]), "openai-chat"));
      render.push(performance.now() - t);
    }
  }
  return { append, render };
}

/**
 * Appending one step through a provider format (OpenAI chat, as the integrations and
 * session.compact() receive it): the conversation is parsed again at every call and compared
 * with the previous call's; the baseline is that parse alone (work any such call does). Steps
 * past 400, with the rendered conversations made beforehand.
 */
async function timeWireAppends(messages: Message[], ends: number[]): Promise<{ compact: number[]; parse: number[] }> {
  const compact: number[] = [];
  const parse: number[] = [];
  const compactor = createCompactor({ store: createMemoryStore() });
  const session = compactor.session();
  const big = compactor.measure(messages) * 2;
  const views = ends.map((e) => renderMessages(messages.slice(0, e), "openai-chat"));
  for (let k = 0; k < ends.length; k++) {
    let t = performance.now();
    await session.compact(views[k], { budget: big, format: "openai-chat" });
    const took = performance.now() - t;
    t = performance.now();
    parseMessages(views[k], { format: "openai-chat" });
    if (k >= 400) {
      compact.push(took);
      parse.push(performance.now() - t);
    }
  }
  return { compact, parse };
}

/**
 * The generated runs (seeds) whose epochs a session fed at every step times. Several: whether
 * an epoch is compacted ahead turns on the sizes of the few steps before it crosses the soft
 * threshold, so one run's epochs past step 400 (seven or so) say little about the rest; on the
 * seed-5 run alone, six of seven are, on these six runs fewer than half.
 */
const kFedSeeds = [1, 2, 3, 4, 5, 6];
/** An epoch call faster than this was compacted ahead (one compacted in its call takes several ms here); the idle row counts them. */
const kServedAheadMs = 1;

/**
 * Epoch compactions in a session fed at every step, as a runner calls it (kEpochBudget), over
 * the runs of kFedSeeds; the epochs that start past step 400 are the samples. A runner awaits
 * its model between calls: `idle` gives the event loop one turn there (what any I/O wait gives,
 * and all idle-time work needs: the step preparation, and the next epoch compacted ahead);
 * `own` does the same with epochs compacted in their own call (aheadRatio 0); back to back
 * (`busy`) gives it none, so the epoch does all its work itself. Each run takes the three in
 * turn (the machine's load hits all).
 */
async function timeFedEpochs(): Promise<{ idle: number[]; own: number[]; busy: number[] }> {
  const fed = { idle: [] as number[], own: [] as number[], busy: [] as number[] };
  for (let round = 0; round < 3 * kFedSeeds.length; round++) {
    const mode = (["idle", "own", "busy"] as const)[round % 3];
    const messages = generateRun({ seed: kFedSeeds[Math.floor(round / 3)], steps: 520 }).messages;
    const ends = stepEnds(messages);
    const session = createCompactor({ store: createMemoryStore(), ...(mode === "own" ? { aheadRatio: 0 } : {}) }).session();
    for (let k = 0; k < ends.length; k++) {
      const epochBefore = session.epoch;
      const t = performance.now();
      await session.compactCanonical(messages.slice(0, ends[k]), { budget: kEpochBudget });
      const took = performance.now() - t;
      if (session.epoch !== epochBefore && k >= 400) fed[mode].push(took);
      if (mode !== "busy") await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return fed;
}

/**
 * One epoch compaction of the whole run in a session last called 60 steps earlier (stress:
 * twice the new steps a runner's epoch sees), and cold (a fresh compactor); the baseline is one
 * JSON.stringify of the run.
 */
async function timeWholeEpochs(messages: Message[]): Promise<{ epoch: number[]; cold: number[]; stringify: number[] }> {
  const epoch: number[] = [];
  const cold: number[] = [];
  const stringify: number[] = [];
  for (let round = 0; round < 10; round++) {
    const compactor = createCompactor({ store: createMemoryStore() });
    const session = compactor.session();
    for (let i = 50; i < messages.length - 30; i += 60) await session.compactCanonical(messages.slice(0, i), { budget: kEpochBudget });
    let t = performance.now();
    await session.compactCanonical(messages, { budget: kEpochBudget });
    epoch.push(performance.now() - t);
    t = performance.now();
    await createCompactor({ store: createMemoryStore() }).compactCanonical(messages, { budget: kEpochBudget });
    cold.push(performance.now() - t);
    t = performance.now();
    JSON.stringify(messages);
    stringify.push(performance.now() - t);
  }
  return { epoch, cold, stringify };
}

// ---------------------------------------------------------------------------------------------
// Appending one step through an integration.

/** The dev corpus's `count` runs with the most messages (OpenAI chat), or none when the corpus is absent. */
function longestCorpusRuns(count: number): { id: string; messages: unknown[] }[] {
  if (!existsSync(kCorpus)) {
    process.stderr.write(`  integrations: corpus runs skipped, ${kCorpus} is absent\n`);
    return [];
  }
  const runs = gunzipSync(readFileSync(kCorpus))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; messages: unknown[] });
  return runs.sort((a, b) => b.messages.length - a.messages.length).slice(0, count);
}

/** An AI SDK provider prompt (LanguageModelV3Prompt) of OpenAI chat messages: user and assistant content as part arrays. */
function providerPrompt(chat: unknown[]): AiSdkPromptMessage[] {
  const prompt = renderMessages(parseMessages(chat, { format: "openai-chat" }).messages, "ai-sdk") as AiSdkPromptMessage[];
  const shaped = prompt.map((m) => (m.role !== "system" && typeof m.content === "string" ? { ...m, content: [{ type: "text", text: m.content }] } : m));
  return JSON.parse(JSON.stringify(shaped)) as AiSdkPromptMessage[];
}

interface CallTimes {
  /** Per call: its time over one JSON.stringify of its messages; `epoch` marks calls that compacted. */
  ratios: number[];
  epoch: boolean[];
  ms: number[];
}

/**
 * Calls `call` with wire[0..i) at every assistant message i (a model call), timing each against
 * one JSON.stringify of its messages. `fresh`: each call's list is a JSON round trip of it.
 */
async function timeCalls(wire: readonly unknown[], fresh: boolean, call: (list: unknown[]) => Promise<boolean>): Promise<CallTimes> {
  const out: CallTimes = { ratios: [], epoch: [], ms: [] };
  for (let i = 1; i < wire.length; i++) {
    if ((wire[i] as { role?: unknown }).role !== "assistant") continue;
    const list = fresh ? (JSON.parse(JSON.stringify(wire.slice(0, i))) as unknown[]) : wire.slice(0, i);
    let t = performance.now();
    JSON.stringify(list);
    const stringify = performance.now() - t;
    t = performance.now();
    const epoch = await call(list);
    const took = performance.now() - t;
    out.ratios.push(took / stringify);
    out.epoch.push(epoch);
    out.ms.push(took);
  }
  return out;
}

/** One run through compactOpenAIRequest (options of its own, so a session pool of its own). */
function viaRequests(chat: unknown[], budget: number, fresh: boolean): Promise<CallTimes> {
  let epoch = 0;
  const options = { budget, onEvent: (e: { type: string }) => (epoch = e.type === "compaction_result" ? epoch + 1 : epoch) };
  return timeCalls(chat, fresh, async (list) => {
    const before = epoch;
    await compactOpenAIRequest({ model: "gpt-4o", messages: list }, options);
    return epoch !== before;
  });
}

/** One run through the AI SDK middleware's transformParams (a middleware of its own). */
function viaMiddleware(prompt: AiSdkPromptMessage[], budget: number, fresh: boolean): Promise<CallTimes> {
  let epoch = 0;
  const middleware = ctxfoldMiddleware({ budget, onCompact: (info) => (epoch = info.newEpoch ? epoch + 1 : epoch) });
  return timeCalls(prompt, fresh, async (list) => {
    const before = epoch;
    await middleware.transformParams({ params: { prompt: list as AiSdkPromptMessage[] }, model: { modelId: "bench" } });
    return epoch !== before;
  });
}

/**
 * Rounds of each sequence of calls (a fresh session each): per call the fastest round's time
 * (and stringify's), so that a call the shared machine preempted or a collection of someone
 * else's garbage does not pass for the call's own cost.
 */
const kRounds = 3;

async function bestOf(rounds: number, run: () => Promise<CallTimes>): Promise<CallTimes> {
  const best = await run();
  for (let r = 1; r < rounds; r++) {
    const t = await run();
    for (let k = 0; k < best.ms.length; k++) {
      const stringify = Math.min(best.ms[k]! / best.ratios[k]!, t.ms[k]! / t.ratios[k]!);
      best.ms[k] = Math.min(best.ms[k]!, t.ms[k]!);
      best.ratios[k] = best.ms[k]! / stringify;
    }
  }
  return best;
}

/**
 * A conversation's first calls: the first makes its session and parses what there is, and every
 * one of them is set against the JSON of a few messages (tens of µs), so fixed costs dominate
 * their ratios. The table shows the appends' p99 with and without them.
 */
const kFirstCalls = 5;

/** p50 and p99 of the per-call ratios of the runs, all calls and calls that started no epoch. */
function summary(times: CallTimes[]): {
  p50: number;
  p99: number;
  p99Appends: number;
  p99Later: number;
  p99Epochs: number;
  epochs: number;
  calls: number;
  ms50: number;
  ms99: number;
} {
  const ratios = times.flatMap((t) => t.ratios);
  const appends = times.flatMap((t) => t.ratios.filter((_, k) => !t.epoch[k]));
  const later = times.flatMap((t) => t.ratios.filter((_, k) => !t.epoch[k] && k >= kFirstCalls));
  const epochs = times.flatMap((t) => t.ratios.filter((_, k) => t.epoch[k]));
  const ms = times.flatMap((t) => t.ms);
  return {
    p50: pct(ratios, 0.5),
    p99: pct(ratios, 0.99),
    p99Appends: pct(appends, 0.99),
    p99Later: pct(later, 0.99),
    p99Epochs: epochs.length > 0 ? pct(epochs, 0.99) : Number.NaN,
    epochs: epochs.length,
    calls: ratios.length,
    ms50: pct(ms, 0.5),
    ms99: pct(ms, 0.99),
  };
}

/** The integration rows: each entry point, each input, same objects and parsed afresh. */
async function integrationTable(generated: readonly Message[]): Promise<string> {
  const budget = 32_000;
  const corpus = longestCorpusRuns(3);
  const inputs: { name: string; chat: unknown[] }[] = [
    ...(corpus.length > 0 ? [{ name: `dev corpus, 3 longest runs (${corpus.map((r) => r.messages.length).join(", ")} messages)`, chat: [] as unknown[] }] : []),
    {
      name: `generated run (520 steps, ${generated.length} messages)`,
      chat: JSON.parse(JSON.stringify(renderMessages(generated, "openai-chat"))) as unknown[],
    },
  ];
  const rows: string[] = [];
  const x = (r: number) => (Number.isNaN(r) ? "–" : `${r.toFixed(r < 0.1 ? 3 : 2)}x`);
  for (const entry of ["compactOpenAIRequest", "AI SDK middleware"] as const) {
    for (const input of inputs) {
      const chats = input.chat.length > 0 ? [input.chat] : corpus.map((r) => r.messages);
      for (const fresh of [false, true]) {
        const times: CallTimes[] = [];
        for (const chat of chats) {
          const prompt = entry === "compactOpenAIRequest" ? chat : providerPrompt(chat);
          times.push(
            await bestOf(kRounds, () =>
              entry === "compactOpenAIRequest" ? viaRequests(prompt, budget, fresh) : viaMiddleware(prompt as AiSdkPromptMessage[], budget, fresh),
            ),
          );
        }
        const s = summary(times);
        rows.push(
          `| ${entry}, ${input.name}, ${fresh ? "parsed afresh each call" : "same objects growing"} | ${s.calls} (${s.epochs} epochs) | ${x(s.p50)} | ${x(s.p99)} | ${x(s.p99Appends)} | ${x(s.p99Later)} | ${x(s.p99Epochs)} | ${msf(s.ms50)} / ${msf(s.ms99)} |`,
        );
      }
    }
  }
  return [
    `Appending one step through an integration (a call at every assistant message, budget ${budget.toLocaleString("en-US")}): each call's time over one JSON.stringify of its messages. Targets: p50 ≤ 0.1x, p99 ≤ 1x.`,
    "",
    `| entry point, input, messages | calls | p50 | p99 | p99, appends | p99, appends after a conversation's first ${kFirstCalls} calls | p99, epoch calls | time p50 / p99 |`,
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
  ].join("\n");
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:policy: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
