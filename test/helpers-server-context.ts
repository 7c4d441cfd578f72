/**
 * Conversations that carry the providers' server-side context features, shaped as the APIs
 * return them and as agents send them back:
 * - OpenAI Responses: reasoning items with `encrypted_content` (store: false), a `compaction`
 *   item from server-side compaction (`context_management: [{ type: "compaction" }]`), which the
 *   stream emits before the reasoning and call that continue the turn, and the window
 *   `/responses/compact` returns (the user messages, then one compaction item).
 * - Anthropic: signed thinking, a threshold `compaction` block (`compact_20260112`) at the start
 *   of an assistant response, and an on-demand signed `compaction` block (`compact-2026-09-04`)
 *   sent first as an assistant message of its own.
 */

/** A file's content, long enough that a few of them exceed a small budget. */
function fileText(k: number, lines = 60): string {
  return Array.from(
    { length: lines },
    (_, j) => `export const value${k}_${j} = compute(${k}, ${j}); // module ${k} line ${j}: keeps the cache warm for node-${(k * 7 + j) % 13}`,
  ).join("\n");
}

/** Opaque provider ciphertext (base64-looking, deterministic). */
const cipher = (tag: string, n = 240): string => `gAAAAB${Buffer.from(tag.repeat(Math.ceil(n / tag.length)).slice(0, n)).toString("base64")}`;

// ---------------------------------------------------------------------------------------------
// OpenAI Responses.

type Item = Record<string, unknown>;

function responsesStep(k: number): Item[] {
  return [
    {
      type: "reasoning",
      id: `rs_${k}`,
      summary: k % 3 === 0 ? [{ type: "summary_text", text: `Step ${k}: read the next module.` }] : [],
      encrypted_content: cipher(`reasoning-${k}-`),
    },
    {
      type: "function_call",
      id: `fc_${k}`,
      call_id: `call_${k}`,
      name: "read_file",
      arguments: JSON.stringify({ path: `src/module${k}.ts` }),
      status: "completed",
    },
    { type: "function_call_output", call_id: `call_${k}`, output: fileText(k) },
  ];
}

/** The server-side compaction item, as the API returns it in a response's output. */
export const responsesCompaction = (tag: string): Item => ({ type: "compaction", id: `cmp_${tag}`, encrypted_content: cipher(`compaction-${tag}-`, 600) });

/**
 * A stateless (store: false) Responses agent loop: `steps` read_file steps with encrypted
 * reasoning; after step `compactAt` the next response opens with a server-side compaction item,
 * then the reasoning and call that continue the turn. Ends with a user question.
 */
export function responsesAgentInput(steps: number, compactAt: number): Item[] {
  const out: Item[] = [
    { role: "developer", content: "You are a coding agent. Read files with read_file." },
    { role: "user", content: "Task: find where the cache is warmed and explain it." },
  ];
  for (let k = 0; k < steps; k++) {
    if (k === compactAt) out.push(responsesCompaction("a"));
    out.push(...responsesStep(k));
  }
  out.push({
    type: "message",
    id: "msg_final",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "The cache is warmed in every module's compute call.", annotations: [] }],
  });
  out.push({ role: "user", content: "Which module warms node-3 first?" });
  return out;
}

/** The window `/responses/compact` returns (the user messages, then one compaction item), continued by `steps` more steps. */
export function responsesCompactedWindow(steps: number): Item[] {
  const out: Item[] = [
    { role: "user", content: [{ type: "input_text", text: "Task: find where the cache is warmed and explain it." }] },
    { role: "user", content: [{ type: "input_text", text: "Also list the modules that touch node-3." }] },
    responsesCompaction("w"),
  ];
  for (let k = 0; k < steps; k++) out.push(...responsesStep(100 + k));
  out.push({ role: "user", content: "Summarise what you found." });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Anthropic.

type Block = Record<string, unknown>;
interface AnthropicMsg {
  role: "user" | "assistant";
  content: string | Block[];
}

const thinking = (k: number): Block => ({ type: "thinking", thinking: `I should read module ${k} next.`, signature: cipher(`sig-${k}-`, 120) });
const toolUse = (k: number): Block => ({ type: "tool_use", id: `toolu_${k}`, name: "read_file", input: { path: `src/module${k}.ts` } });
const toolResult = (k: number): AnthropicMsg => ({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${k}`, content: fileText(k) }] });

/** A threshold compaction block (`compact_20260112`), as it opens the assistant response. */
export const thresholdBlock: Block = {
  type: "compaction",
  content: "Summary of the conversation: the user asked where the cache is warmed; modules 0-5 were read, each warms it in compute().",
  encrypted_content: cipher("anthropic-compaction-", 300),
};

/** An on-demand compaction block (`compact-2026-09-04`): readable summary and a signature. */
export const onDemandBlock: Block = {
  type: "compaction",
  content: "Summary of the conversation: the user is tracing cache warming; modules 0-9 were read.",
  signature: cipher("anthropic-ondemand-", 160),
};

/**
 * An Anthropic agent loop with extended thinking and threshold compaction: `steps` read_file
 * steps; the response of step `compactAt` opens with the compaction block. The request body
 * carries `context_management` with all three edits.
 */
export function anthropicThresholdBody(steps: number, compactAt: number): Record<string, unknown> & { messages: AnthropicMsg[] } {
  const messages: AnthropicMsg[] = [{ role: "user", content: "Task: find where the cache is warmed and explain it." }];
  for (let k = 0; k < steps; k++) {
    const opener = k === compactAt ? [thresholdBlock] : [];
    messages.push({ role: "assistant", content: [...opener, thinking(k), toolUse(k)] }, toolResult(k));
  }
  return {
    model: "claude-opus-4-6",
    max_tokens: 4096,
    system: "You are a coding agent. Read files with read_file.",
    thinking: { type: "enabled", budget_tokens: 2048 },
    context_management: {
      edits: [
        { type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 2 } },
        {
          type: "clear_tool_uses_20250919",
          trigger: { type: "input_tokens", value: 30000 },
          keep: { type: "tool_uses", value: 3 },
          clear_at_least: { type: "input_tokens", value: 5000 },
        },
        { type: "compact_20260112", trigger: { type: "input_tokens", value: 150000 } },
      ],
    },
    messages,
  };
}

/**
 * A conversation continued after on-demand compaction: the signed block first, as an assistant
 * message of its own, then a new question and `steps` read_file steps with thinking.
 */
export function anthropicOnDemandBody(steps: number): Record<string, unknown> & { messages: AnthropicMsg[] } {
  const messages: AnthropicMsg[] = [
    { role: "assistant", content: [onDemandBlock] },
    { role: "user", content: "Now read the remaining modules and tell me which warms node-3 first." },
  ];
  for (let k = 0; k < steps; k++) messages.push({ role: "assistant", content: [thinking(200 + k), toolUse(200 + k)] }, toolResult(200 + k));
  return { model: "claude-opus-4-6", max_tokens: 4096, system: "You are a coding agent.", thinking: { type: "enabled", budget_tokens: 2048 }, messages };
}

/**
 * A long chat without tools continued after threshold compaction: `turns` user / assistant
 * pairs of long text before the compaction, the response that opens with the block, then
 * `turns` more pairs and a last question.
 */
export function anthropicThresholdChat(turns: number): { system: string; messages: AnthropicMsg[] } {
  const para = (k: number) =>
    Array.from({ length: 40 }, (_, j) => `Point ${k}.${j}: the service at node-${(k * 7 + j) % 13} reported latency ${100 + ((k * j) % 50)} ms.`).join(" ");
  const messages: AnthropicMsg[] = [{ role: "user", content: `Task: analyse the latency logs below.\n${para(0)}` }];
  for (let k = 1; k <= 2 * turns; k++) {
    const answer: Block[] = [{ type: "text", text: para(1000 + k) }];
    messages.push({ role: "assistant", content: k === turns ? [thresholdBlock, ...answer] : answer }, { role: "user", content: para(k) });
  }
  messages.push({ role: "assistant", content: "Noted." }, { role: "user", content: "Now: which node is slowest? Answer in one line." });
  return { system: "You are a careful analyst.", messages };
}
