/**
 * Seeded generator of agent transcripts in OpenAI Chat Completions shape: a system prompt, a
 * task, then steps of assistant text with tool calls (sometimes parallel) answered by tool
 * results of every kind an agent sees (file reads, shell output with exit codes, search hits,
 * JSON API responses, web pages, failures), with occasional user steering. Tests, benchmarks
 * and the demo stand on it where ../shared/corpus is absent.
 */
import { createRng, generateText, type Rng, type TextKind } from "./text.js";

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface GenerateTranscriptOptions {
  seed: number;
  /** Tool steps (assistant turns with calls). @default 30 */
  steps?: number;
  /** Mean characters of a tool result; results vary from a tenth to ten times this. @default 2000 */
  meanResultChars?: number;
  /** Share of steps whose tool result is a failure. @default 0.12 */
  failureRate?: number;
  /** Share of assistant turns that make two or three parallel calls. @default 0.15 */
  parallelRate?: number;
}

const kTools = [
  { name: "read_file", kind: "code" as TextKind, args: (r: Rng) => ({ path: pick(r, kPaths) }) },
  { name: "bash", kind: "logs" as TextKind, args: (r: Rng) => ({ command: pick(r, kCommands) }) },
  { name: "grep", kind: "logs" as TextKind, args: (r: Rng) => ({ pattern: pick(r, kPatterns), path: "src/" }) },
  { name: "web_search", kind: "prose" as TextKind, args: (r: Rng) => ({ query: pick(r, kQueries) }) },
  { name: "fetch_url", kind: "prose" as TextKind, args: (r: Rng) => ({ url: `https://docs.example.com/${pick(r, kPatterns)}` }) },
  { name: "get_order", kind: "json" as TextKind, args: (r: Rng) => ({ order_id: `#W${1000000 + r.int(8999999)}` }) },
  { name: "write_file", kind: "prose" as TextKind, args: (r: Rng) => ({ path: pick(r, kPaths), content: generateText("code", 200 + r.int(1500), r) }) },
];
const kPaths = ["src/index.ts", "src/config.json", "lib/parser.py", "README.md", "tests/test_main.py", "pkg/server/handler.go", "docs/用户指南.md"];
const kCommands = ["pytest -x tests/", "git log --oneline -20", "ls -la src", "npm run build", "cat setup.cfg | head -50", "python -m pip install -e ."];
const kPatterns = ["TODO", "def compact", "import numpy", "handleRequest", "separability_matrix"];
const kQueries = ["context window compaction agents", "python best practices", "rust async cancellation", "日本語 トークナイザー"];

const pick = <T>(r: Rng, xs: readonly T[]): T => xs[r.int(xs.length)];

function toolResult(r: Rng, tool: (typeof kTools)[number], meanChars: number, failed: boolean): string {
  if (failed) {
    const heads = ["Error: ENOENT: no such file or directory", "Traceback (most recent call last):", "exit code 1", "HTTP 503 Service Unavailable", '{"error": "order not found"}'];
    return `${pick(r, heads)}\n${generateText("logs", 80 + r.int(400), r)}`;
  }
  const chars = Math.max(20, Math.round(meanChars * Math.exp((r.next() - 0.5) * 4.6)));
  const kind: TextKind = r.next() < 0.06 ? pick(r, ["cjk", "emoji", "intl"] as const) : tool.kind;
  return generateText(kind, chars, r);
}

/** One generated run. Same options give the same messages. */
export function generateTranscript(options: GenerateTranscriptOptions): ChatMessage[] {
  const r = createRng(options.seed);
  const steps = options.steps ?? 30;
  const meanChars = options.meanResultChars ?? 2000;
  const failureRate = options.failureRate ?? 0.12;
  const parallelRate = options.parallelRate ?? 0.15;
  const messages: ChatMessage[] = [
    { role: "system", content: `You are a careful software agent. ${generateText("prose", 600 + r.int(1200), r)}` },
    { role: "user", content: `Task: ${generateText("prose", 200 + r.int(800), r)}` },
  ];
  let callNo = 0;
  for (let s = 0; s < steps; s++) {
    if (s > 0 && r.next() < 0.04) messages.push({ role: "user", content: `Please also ${generateText("prose", 60 + r.int(200), r)}` });
    const n = r.next() < parallelRate ? 2 + r.int(2) : 1;
    const calls: ChatToolCall[] = [];
    const tools = [];
    for (let k = 0; k < n; k++) {
      const tool = pick(r, kTools);
      tools.push(tool);
      calls.push({ id: `call_${(++callNo).toString(36).padStart(6, "0")}`, type: "function", function: { name: tool.name, arguments: JSON.stringify(tool.args(r)) } });
    }
    messages.push({ role: "assistant", content: r.next() < 0.7 ? generateText("prose", 80 + r.int(500), r) : null, tool_calls: calls });
    for (let k = 0; k < n; k++) {
      messages.push({ role: "tool", tool_call_id: calls[k].id, content: toolResult(r, tools[k], meanChars, r.next() < failureRate) });
    }
  }
  messages.push({ role: "assistant", content: `Done. ${generateText("prose", 200 + r.int(600), r)}` });
  return messages;
}

/** Every text of a transcript that a tokenizer counts: contents, tool names and arguments. */
export function transcriptTexts(messages: readonly ChatMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.content) out.push(m.content);
    for (const c of m.tool_calls ?? []) out.push(c.function.name, c.function.arguments);
  }
  return out;
}
