/**
 * Enormous tool outputs, as the bench gate times them (scope "enormous"): what ctxfold does with
 * a 0.5-4 MB output when it meets one, each against counting the lines of the same texts one
 * character at a time in JavaScript, the plainest pass over them. JavaScript against JavaScript,
 * allocating nothing: measured 5 times at a load average of 8-9 on 2 cores, each ratio's runs
 * stayed within 1.1-1.3× of each other but for one outlier (JSON.stringify of the same inputs, or
 * Buffer.byteLength, moved 2-18×). The tests check what these functions return on the same
 * inputs; the gate checks that they stay that fast:
 *
 * - the extractive summaries of a 1 MB log (an error line in its middle) and of a 1 MB line with
 *   no newline, timed together (test/summarize/extractive.test.ts);
 * - the ledger's facts of a 4 MB output, read in its head and tail windows only
 *   (test/policy/relevance/ledger.test.ts);
 * - the focus lines of a 1 MB, 60,000-line output, scanned in its head and tail
 *   (test/policy/relevance/focus.test.ts);
 * - next-step evidence over an output that the next message writes half of back, and how much of
 *   it the output's first fifth keeps (test/eval/evidence.test.ts has it at 5 MB): 500 KB here,
 *   where one call already takes ~0.2 s, so that the pair's blocks stay short.
 *
 * Each call works on fresh message objects: ctxfold memoises per message object, and what is
 * timed is the first sight of an output.
 */
import type { OpenAIChatMessage } from "../src/adapters/openai-chat.js";
import { evidenceKept, nextStepEvidence } from "../src/eval/evidence.js";
import { createRng, syntheticText } from "../src/gen/text.js";
import type { Message } from "../src/model/schema.js";
import { focusLines } from "../src/policy/relevance/focus.js";
import { messageFacts } from "../src/policy/relevance/ledger-facts.js";
import { summarizeExtractive } from "../src/summarize/extractive.js";
import { TokenCounter } from "../src/tokens/token-counter.js";
import type { Case } from "./lib.js";

/** The case every ratio of this scope divides by (bench/ratios.ts names it so). */
const kReferenceCase = "line count";

/** The size of the output next-step evidence reads (see the module comment). */
const kEvidenceBytes = 500_000;

/** The lines of `text`, one character at a time: the plainest JavaScript pass over a text. */
function lineCount(text: string): number {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/**
 * `text` as one sequential string. Concatenation, `slice` and `+=` leave V8 cons and sliced
 * strings, which it flattens on first read and the collector later short-cuts, or not: the line
 * count of the same 4 MB text ran 7.7 or 11 ms by whether a collection had happened in between
 * (the `facts 4 MB` ratio took 120 or 170 from one process to the next). Every text a case reads
 * is made flat once, here, so that both sides of a pair read the same kind of string in every run.
 */
function flat(text: string): string {
  return Buffer.from(text, "utf8").toString("utf8");
}

/** The two contenders of one group: ctxfold's `name` doing `fn`, and the line count of `texts`, what `fn` reads. */
function pair(group: string, name: string, texts: readonly string[], fn: () => unknown): Case[] {
  const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0);
  return [
    { group, name, bytes, fn },
    { group, name: kReferenceCase, bytes, fn: () => texts.reduce((n, t) => n + lineCount(t), 0) },
  ];
}

/** A 1 MB log of the generator's kind with a database error in its middle. */
function logWithError(): string {
  const text = syntheticText("logs", 1 << 20, createRng(11));
  const cut = text.indexOf("\n", text.length >> 1) + 1;
  return flat(`${text.slice(0, cut)}DatabaseError: connection refused to db-7 at 10.0.0.7:5432\n${text.slice(cut)}`);
}

function summaryCases(counter: TokenCounter): Case[] {
  const log = logWithError();
  const line = flat(
    Array.from({ length: 150_000 }, (_, i) => `tok${i % 977}`)
      .join(" ")
      .slice(0, 1 << 20),
  );
  // One pair for both: the one-line path alone moved 2× between processes under load.
  return pair("summary 1 MB log + 1 MB line", "ctxfold extractive", [log, line], () => [
    summarizeExtractive(log, 500, "tool-output:bash", counter),
    summarizeExtractive(line, 200, "one-line", counter),
  ]);
}

const toolResult = (id: string, text: string): Message => ({
  id: `t_${id}`,
  role: "tool",
  parts: [{ type: "tool-result", callId: id, content: [{ type: "text", text }] }],
  meta: {},
});

function factsCase(): Case[] {
  const huge = flat(`first_visible_name at the top\n${"x".repeat(2_000_000)} hidden_middle_name ${"y".repeat(2_000_000)}\nlast_visible_name at the end`);
  const m = toolResult("7", huge);
  return pair("facts 4 MB output", "ctxfold ledger facts", [huge], () => messageFacts({ ...m }));
}

function focusCase(): Case[] {
  const n = 60_000;
  const big = flat(
    Array.from({ length: n }, (_, i) =>
      i === 10 ? "head hit parse_config" : i === n / 2 ? "middle parse_config" : i === n - 3 ? "tail hit parse_config" : `filler line ${i} with some words`,
    ).join("\n"),
  );
  const quarter = (s: string) => Math.ceil(s.length / 4);
  return pair("focus 1 MB output", "ctxfold focus lines", [big], () => focusLines(big, ["parse_config"], 200, quarter));
}

function evidenceCase(): Case[] {
  let big = "";
  for (let i = 0; big.length < kEvidenceBytes; i++) big += `row_${i} = compute_${i % 997}(x.y${i % 31})\n`;
  big = flat(big);
  const call = (id: string, name: string, args: string) => ({ id, type: "function" as const, function: { name, arguments: args } });
  const task = "Fix the crash in parseConfig (config/loader.py).";
  const readArgs = JSON.stringify({ path: "data/rows.py" });
  const writeArgs = JSON.stringify({ path: "out/rows.py", content: big.slice(0, big.length >> 1) + "new_row_x = 1\n" });
  const prompt: OpenAIChatMessage[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: task },
    { role: "assistant", content: null, tool_calls: [call("call_1", "read_file", readArgs)] },
    { role: "tool", tool_call_id: "call_1", content: big },
  ];
  const write: OpenAIChatMessage = { role: "assistant", content: null, tool_calls: [call("call_2", "write_file", writeArgs)] };
  const kept = [...prompt.slice(0, 3), { ...prompt[3], content: big.slice(0, big.length / 5) }] as OpenAIChatMessage[];
  const fresh = (ms: readonly OpenAIChatMessage[]) => ms.map((m) => ({ ...m }));
  // The texts it reads terms in: the messages' contents and the calls' arguments.
  const texts = [task, readArgs, big, writeArgs];
  return pair("evidence 500 KB output", "ctxfold next-step evidence", texts, () => {
    const evidence = nextStepEvidence(fresh(prompt), { ...write });
    return evidenceKept(evidence, fresh(kept));
  });
}

/** The gate's cases for enormous outputs (see the module comment). */
export function enormousCases(): Case[] {
  const counter = new TokenCounter({ encoding: "o200k_base" });
  return [...summaryCases(counter), ...factsCase(), ...focusCase(), ...evidenceCase()];
}
