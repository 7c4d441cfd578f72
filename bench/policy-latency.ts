/**
 * `npm run bench:policy [-- --readme]`: the tiered compactor in a session, as a runner uses it,
 * on a generated 520-step run (seeded; no corpus needed). Measures, in one process:
 * - appending one step: each call gives the session the conversation with one more step; the
 *   baseline is rendering that step to OpenAI Chat JSON (work a runner does per call anyway);
 * - the same through OpenAI chat input, parsed at every call (the integrations' path); the
 *   baseline is that parse;
 * - epoch compactions in a session called at every step, as a runner calls it (the epochs
 *   past step 400), with the event loop given a turn between calls (a runner awaiting its
 *   model: idle-time preparation runs) and back to back (it cannot); one epoch compaction of the whole run in a session last called 60 steps
 *   earlier (twice the new steps); and cold (a fresh compactor). The baseline is one
 *   JSON.stringify of the run.
 * Reported as p50 / p99 and as ratios to the baselines (absolute times move with the machine).
 */
import { parseMessages, renderMessages } from "../src/adapters/index.js";
import { generateRun } from "../src/gen/run.js";
import { createCompactor } from "../src/policy/index.js";
import { createMemoryStore } from "../src/store/index.js";
import { rewriteReadmeSection } from "./lib.js";

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const msf = (ms: number) => `${ms.toFixed(2)} ms`;

async function main(): Promise<void> {
  const messages = generateRun({ seed: 5, steps: 520 }).messages;
  const ends: number[] = [];
  for (let i = 0; i < messages.length; ) {
    let j = i + 1;
    while (j < messages.length && messages[j].role === "tool") j++;
    ends.push(j);
    i = j;
  }
  const budget = 32_000;

  // Appending one step in a session (budget large enough that appends stay in the epoch).
  const appendTimes: number[] = [];
  const renderTimes: number[] = [];
  for (let round = 0; round < 3; round++) {
    const compactor = createCompactor({ store: createMemoryStore() });
    const session = compactor.session();
    const big = compactor.measure(messages) * 2;
    await session.compactCanonical(messages.slice(0, ends[0]), { budget: big });
    for (let k = 1; k < ends.length; k++) {
      const view = messages.slice(0, ends[k]);
      let t = performance.now();
      await session.compactCanonical(view, { budget: big });
      appendTimes.push(performance.now() - t);
      t = performance.now();
      JSON.stringify(renderMessages(messages.slice(ends[k - 1], ends[k]), "openai-chat"));
      renderTimes.push(performance.now() - t);
    }
  }

  // Appending one step through a provider format (OpenAI chat, as the integrations and
  // session.compact() receive it): the conversation is parsed again at every call and compared
  // with the previous call's; the baseline is that parse alone (work any such call does). Steps
  // past 400, with the rendered conversations made beforehand.
  const wireTimes: number[] = [];
  const parseTimes: number[] = [];
  {
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
        wireTimes.push(took);
        parseTimes.push(performance.now() - t);
      }
    }
  }

  // Epoch compactions in a session fed at every step, as a runner calls it (budget 32k: an
  // epoch every ~35 steps); the epochs that start past step 400 are the samples. A runner
  // awaits its model between calls: `idle` gives the event loop one turn there (what any I/O
  // wait gives, and all idle-time preparation needs); back to back gives it none, so the epoch
  // does all its work itself. Rounds alternate between the two (the machine's load hits both).
  const fed = { idle: [] as number[], busy: [] as number[] };
  for (let round = 0; round < 16; round++) {
    const idle = round % 2 === 0;
    const session = createCompactor({ store: createMemoryStore() }).session();
    for (let k = 0; k < ends.length; k++) {
      const epochBefore = session.epoch;
      const t = performance.now();
      await session.compactCanonical(messages.slice(0, ends[k]), { budget });
      const took = performance.now() - t;
      if (session.epoch !== epochBefore && k >= 400) (idle ? fed.idle : fed.busy).push(took);
      if (idle) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // One epoch compaction of the whole run in a session last called 60 steps earlier (stress:
  // twice the new steps a runner's epoch sees), and cold (a fresh compactor).
  const epoch: number[] = [];
  const cold: number[] = [];
  const stringify: number[] = [];
  for (let round = 0; round < 10; round++) {
    const compactor = createCompactor({ store: createMemoryStore() });
    const session = compactor.session();
    for (let i = 50; i < messages.length - 30; i += 60) await session.compactCanonical(messages.slice(0, i), { budget });
    let t = performance.now();
    await session.compactCanonical(messages, { budget });
    epoch.push(performance.now() - t);
    t = performance.now();
    await createCompactor({ store: createMemoryStore() }).compactCanonical(messages, { budget });
    cold.push(performance.now() - t);
    t = performance.now();
    JSON.stringify(messages);
    stringify.push(performance.now() - t);
  }

  const md = [
    `Generated run: 520 steps, ${messages.length} messages, budget ${budget.toLocaleString("en-US")} for epochs.`,
    "",
    "| in a session | p50 | p99 | baseline p50 | vs baseline | target |",
    "|---|---:|---:|---:|---:|---|",
    `| append one step | ${us(pct(appendTimes, 0.5))} | ${us(pct(appendTimes, 0.99))} | ${us(pct(renderTimes, 0.5))} (render the step) | ${(pct(appendTimes, 0.5) / pct(renderTimes, 0.5)).toFixed(1)}x | p50 ≤ 20 µs, p99 ≤ 1 ms |`,
    `| append one step, OpenAI chat input (parsed each call; steps past 400) | ${msf(pct(wireTimes, 0.5))} | ${msf(pct(wireTimes, 0.99))} | ${msf(pct(parseTimes, 0.5))} (parse the input) | ${(pct(wireTimes, 0.5) / pct(parseTimes, 0.5)).toFixed(1)}x | |`,
    `| one epoch compaction, session called every step, runner awaiting its model in between (${fed.idle.length} epochs past step 400) | ${msf(pct(fed.idle, 0.5))} | ${msf(pct(fed.idle, 0.99))} | ${msf(pct(stringify, 0.5))} (JSON.stringify of the run) | ${(pct(fed.idle, 0.5) / pct(stringify, 0.5)).toFixed(2)}x | ≤ 5 ms |`,
    `| one epoch compaction, session called every step back to back (no idle time) | ${msf(pct(fed.busy, 0.5))} | ${msf(pct(fed.busy, 0.99))} | ${msf(pct(stringify, 0.5))} | ${(pct(fed.busy, 0.5) / pct(stringify, 0.5)).toFixed(2)}x | |`,
    `| one epoch compaction, session last called 60 steps before | ${msf(pct(epoch, 0.5))} | ${msf(pct(epoch, 0.99))} | ${msf(pct(stringify, 0.5))} | ${(pct(epoch, 0.5) / pct(stringify, 0.5)).toFixed(1)}x | |`,
    `| one epoch compaction, cold compactor | ${msf(pct(cold, 0.5))} | ${msf(pct(cold, 0.99))} | ${msf(pct(stringify, 0.5))} | ${(pct(cold, 0.5) / pct(stringify, 0.5)).toFixed(1)}x | |`,
  ].join("\n");
  if (process.argv.includes("--readme")) rewriteReadmeSection("policy", md);
  process.stdout.write(md + "\n");
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:policy: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
