/**
 * The provider rules a canonical transcript must satisfy before it is rendered, as data: one
 * entry per issue code in `kRules`, naming the formats it applies to, its severity there, what
 * it checks and the check itself. validate() runs them; docs and tests enumerate them.
 *
 * Shared terms:
 * - A message's *answer window*: the tool messages directly after an assistant message (several
 *   in a row) hold the results of that message's calls. Any user, system or assistant message
 *   closes the window. Anthropic is the exception: it merges consecutive user-side messages (user
 *   and tool, which both render as `role: "user"`) into one turn, so its window runs over the
 *   whole user-side run, and a result that follows user text in that run breaks "tool_result
 *   blocks first" (TOOL_RESULT_NOT_FIRST) instead of being an orphan.
 * - *User side*: user and tool messages (a tool result is a user-role block on Anthropic and is
 *   sent by the caller everywhere). System messages are ignored where a rule speaks of "the
 *   previous message".
 * - Severity `error`: the provider rejects the request. `warning`: the provider accepts it but
 *   changes it (merges turns), or the answer depends on which provider a multi-provider format
 *   (AI SDK, LangChain) fronts, or the transcript may simply be mid-run.
 *
 * Every check is one pass over messages and parts, with maps keyed by id: O(messages + parts).
 */
import type { Format } from "../adapters/common.js";
import { kFormats } from "../adapters/common.js";
import type { Message, Part } from "../model/schema.js";

export type Severity = "error" | "warning";

export const kIssueCodes = [
  "TOOL_RESULT_ORPHAN",
  "TOOL_CALL_UNANSWERED",
  "TOOL_CALL_PENDING",
  "TOOL_RESULT_DUPLICATE",
  "DUPLICATE_CALL_ID",
  "DUPLICATE_MESSAGE_ID",
  "TOOL_RESULT_NOT_FIRST",
  "FIRST_NOT_USER",
  "SYSTEM_NOT_FIRST",
  "ROLE_ALTERNATION",
  "THINKING_DROPPED",
  "REASONING_SIGNATURE_MISSING",
  "EMPTY_MESSAGE",
  "EMPTY_TEXT",
] as const;
export type IssueCode = (typeof kIssueCodes)[number];

/** One rule violation found in a transcript. */
export interface Issue {
  code: IssueCode;
  severity: Severity;
  /** A sentence naming the message and call ids involved. */
  message: string;
  /** Where: `messages[7]` or `messages[7].parts[0]`. */
  path: string;
  /** Index of the message the issue sits on. */
  index: number;
  /**
   * Identity that survives compaction shifting indices: the call id for call/result issues,
   * the message id for message issues (the code completes it: issues match on code + key).
   */
  key: string;
}

/** What a rule's check reports; validate() adds the code and the severity. */
export type Finding = Omit<Issue, "code" | "severity">;

/** What a check sees: the transcript, its format and analyses shared between rules. */
export interface RuleContext {
  readonly messages: readonly Message[];
  readonly format: Format;
  /** Extended thinking is in use (the caller said so, or some assistant message reasons). */
  readonly thinking: boolean;
  /** The call/result pairing, computed once and shared by the tool rules. */
  readonly pairing: Pairing;
}

export interface Rule {
  readonly code: IssueCode;
  /** Severity on every format the rule applies to, unless `overrides` names another. */
  readonly severity: Severity;
  readonly overrides?: Readonly<Partial<Record<Format, Severity>>>;
  /** The formats the rule is checked for; others never see it. */
  readonly formats: readonly Format[];
  /** The exact semantics, for docs. */
  readonly description: string;
  check(ctx: RuleContext): readonly Finding[];
}

/** The severity of `rule` on `format`. */
export function severityOf(rule: Rule, format: Format): Severity {
  return rule.overrides?.[format] ?? rule.severity;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

const msgPath = (i: number): string => `messages[${i}]`;
const partPath = (i: number, k: number): string => `messages[${i}].parts[${k}]`;
const quote = (s: string): string => JSON.stringify(s);

const isUserSide = (m: Message): boolean => m.role === "user" || m.role === "tool";
const hasToolCall = (m: Message): boolean => m.parts.some((p) => p.type === "tool-call");
const isBlank = (s: string): boolean => !/\S/.test(s);

/** A reasoning part Anthropic accepts back: signed thinking, or redacted thinking. */
export function isSignedReasoning(p: Part | undefined): boolean {
  return p !== undefined && p.type === "reasoning" && (!!p.signature || !!p.redacted);
}

/** Whether any assistant message carries a reasoning part: extended thinking is in use. */
export function usesThinking(messages: readonly Message[]): boolean {
  for (const m of messages) {
    if (m.role === "assistant" && m.parts.some((p) => p.type === "reasoning")) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Pairing calls with results.

/** The findings of the call/result pass, one list per tool rule. */
export interface Pairing {
  orphans: Finding[];
  unanswered: Finding[];
  pending: Finding[];
  notFirst: Finding[];
  duplicateResults: Finding[];
  duplicateCalls: Finding[];
}

interface CallSlot {
  id: string;
  /** Index of the assistant message holding the call. */
  owner: number;
  part: number;
  answered: boolean;
}

/**
 * Pairs every tool result with a call of the assistant message whose answer window it sits in
 * (see the module comment), in one pass. A result for a call already answered in that window is
 * a duplicate; a result matching no call of the window is an orphan (so a result repeated
 * outside the window is an orphan, not a duplicate). When a window closes, its calls still
 * unanswered are unanswered, or pending when the assistant message is the very last message.
 * One map lookup per call and per result: `slots` holds the latest call of each id, and a
 * result matches when that call belongs to the window's assistant message.
 */
export function pairCalls(messages: readonly Message[], format: Format): Pairing {
  const out: Pairing = { orphans: [], unanswered: [], pending: [], notFirst: [], duplicateResults: [], duplicateCalls: [] };
  const mergesUserSide = format === "anthropic";
  const slots = new Map<string, CallSlot>();
  const open: CallSlot[] = [];
  let owner = -1;
  let sawUserText = false;

  const close = (): void => {
    if (owner < 0) return;
    const last = owner === messages.length - 1;
    for (const slot of open) {
      if (slot.answered) continue;
      const f: Finding = {
        index: owner,
        path: partPath(owner, slot.part),
        key: slot.id,
        message: last
          ? `call ${quote(slot.id)} in the last message (${quote(messages[owner].id)}) has no result yet`
          : `call ${quote(slot.id)} of assistant message ${quote(messages[owner].id)} has no result before the next non-tool message`,
      };
      (last ? out.pending : out.unanswered).push(f);
    }
    owner = -1;
    open.length = 0;
  };

  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "assistant") {
      close();
      owner = i;
      sawUserText = false;
      for (let k = 0; k < m.parts.length; k++) {
        const p = m.parts[k];
        if (p.type !== "tool-call") continue;
        const prev = slots.get(p.id);
        if (prev) {
          out.duplicateCalls.push({
            index: i,
            path: partPath(i, k),
            key: p.id,
            message: `call id ${quote(p.id)} in message ${quote(m.id)} was already used at ${partPath(prev.owner, prev.part)}`,
          });
          if (prev.owner === i) continue;
        }
        const slot: CallSlot = { id: p.id, owner: i, part: k, answered: false };
        slots.set(p.id, slot);
        open.push(slot);
      }
    } else if (m.role === "tool") {
      for (let k = 0; k < m.parts.length; k++) {
        const p = m.parts[k];
        if (p.type !== "tool-result") continue;
        const slot = slots.get(p.callId);
        const at = (message: string): Finding => ({ index: i, path: partPath(i, k), key: p.callId, message });
        if (!slot || slot.owner !== owner) {
          const before = owner >= 0 ? `assistant message ${quote(messages[owner].id)}` : "no assistant message";
          out.orphans.push(at(`tool result for call ${quote(p.callId)} in message ${quote(m.id)} answers no call of the assistant message it follows (${before})`));
        } else if (slot.answered) {
          out.duplicateResults.push(at(`call ${quote(p.callId)} is answered again in message ${quote(m.id)}`));
        } else {
          slot.answered = true;
          if (sawUserText) {
            out.notFirst.push(at(`tool result for call ${quote(p.callId)} in message ${quote(m.id)} comes after user text in the turn answering ${quote(messages[owner].id)}`));
          }
        }
      }
    } else if (m.role === "user" && mergesUserSide && owner >= 0) {
      sawUserText = true;
    } else {
      close();
    }
  }
  close();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Message-level checks.

/** One Set insertion per message; where a repeated id was first seen is looked up only once one repeats. */
function duplicateMessageIds(ctx: RuleContext): Finding[] {
  const { messages } = ctx;
  const seen = new Set<string>();
  let firstAt: Map<string, number> | undefined;
  const out: Finding[] = [];
  for (let i = 0; i < messages.length; i++) {
    const id = messages[i].id;
    const size = seen.size;
    if (seen.add(id).size > size) continue;
    firstAt ??= firstIndexes(messages);
    out.push({ index: i, path: msgPath(i), key: id, message: `message id ${quote(id)} is used again (first at ${msgPath(firstAt.get(id)!)})` });
  }
  return out;
}

function firstIndexes(messages: readonly Message[]): Map<string, number> {
  const at = new Map<string, number>();
  for (let i = messages.length - 1; i >= 0; i--) at.set(messages[i].id, i);
  return at;
}

function firstNotUser(ctx: RuleContext): Finding[] {
  const i = ctx.messages.findIndex((m) => m.role !== "system");
  if (i < 0 || isUserSide(ctx.messages[i])) return [];
  const m = ctx.messages[i];
  return [{ index: i, path: msgPath(i), key: m.id, message: `the first non-system message ${quote(m.id)} is ${m.role}, not user` }];
}

function systemNotFirst(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  let sawOther = false;
  for (let i = 0; i < ctx.messages.length; i++) {
    const m = ctx.messages[i];
    if (m.role !== "system") sawOther = true;
    else if (sawOther) out.push({ index: i, path: msgPath(i), key: m.id, message: `system message ${quote(m.id)} comes after the conversation started` });
  }
  return out;
}

function roleAlternation(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  let prev: Message | undefined;
  for (let i = 0; i < ctx.messages.length; i++) {
    const m = ctx.messages[i];
    if (m.role === "system") continue;
    if (prev && prev.role === m.role && (m.role === "user" || m.role === "assistant")) {
      out.push({ index: i, path: msgPath(i), key: m.id, message: `${m.role} message ${quote(m.id)} follows ${m.role} message ${quote(prev.id)}; the API merges them into one turn` });
    }
    prev = m;
  }
  return out;
}

/**
 * Anthropic: "when thinking is enabled, a final assistant message must start with a thinking
 * block (preceding the lastmost set of tool_use and tool_result blocks)". The final assistant
 * turn begins at the first assistant message after the last user-side run holding no tool
 * result (a real user turn); it is a tool-use loop in progress when its last non-system
 * message is a tool message or an assistant message with calls.
 */
/**
 * The index of the first assistant message of the final turn when that turn is a tool-use loop
 * in progress, else -1 (THINKING_DROPPED's definition: the final turn starts after the last user
 * message that is not part of a run holding tool results; it is in progress when its last
 * non-system message is a tool message or an assistant message with calls). With `evenIfDone`,
 * the final turn's first assistant message whatever its last message is (a compactor's output
 * ending in a steering message becomes a turn in progress at the agent's next call).
 */
export function turnInProgressOpener(messages: readonly Message[], options: { evenIfDone?: boolean } = {}): number {
  let turnStart = 0;
  let runStart = -1;
  let runHasTool = false;
  let last = -1;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "system") continue;
    last = i;
    if (isUserSide(m)) {
      if (runStart < 0) [runStart, runHasTool] = [i, false];
      if (m.role === "tool") runHasTool = true;
      continue;
    }
    if (runStart >= 0 && !runHasTool) turnStart = i;
    runStart = -1;
  }
  if (last < 0 || (runStart >= 0 && !runHasTool)) return -1;
  const end = messages[last];
  if (!options.evenIfDone && !(end.role === "tool" || (end.role === "assistant" && hasToolCall(end)))) return -1;
  for (let i = turnStart; i <= last; i++) if (messages[i].role === "assistant") return i;
  return -1;
}

function thinkingDropped(ctx: RuleContext): Finding[] {
  if (!ctx.thinking) return [];
  const i = turnInProgressOpener(ctx.messages);
  if (i < 0) return [];
  const m = ctx.messages[i];
  if (isSignedReasoning(m.parts[0])) return [];
  return [{
    index: i,
    path: m.parts.length > 0 ? partPath(i, 0) : msgPath(i),
    key: m.id,
    message: `assistant message ${quote(m.id)} opens the tool-use turn in progress but does not start with a signed reasoning part (thinking is in use)`,
  }];
}

function reasoningSignatureMissing(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  for (let i = 0; i < ctx.messages.length; i++) {
    const m = ctx.messages[i];
    for (let k = 0; k < m.parts.length; k++) {
      const p = m.parts[k];
      if (p.type === "reasoning" && !p.signature && !p.redacted) {
        out.push({ index: i, path: partPath(i, k), key: m.id, message: `reasoning part in message ${quote(m.id)} has neither a signature nor redacted data` });
      }
    }
  }
  return out;
}

function emptyMessages(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  const n = ctx.messages.length;
  for (let i = 0; i < n; i++) {
    const m = ctx.messages[i];
    if (m.parts.length > 0) continue;
    if (ctx.format === "anthropic" && m.role === "assistant" && i === n - 1) continue;
    out.push({ index: i, path: msgPath(i), key: m.id, message: `${m.role} message ${quote(m.id)} has no parts` });
  }
  return out;
}

function emptyTexts(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  for (let i = 0; i < ctx.messages.length; i++) {
    const m = ctx.messages[i];
    for (let k = 0; k < m.parts.length; k++) {
      const p = m.parts[k];
      if (p.type === "text" && isBlank(p.text)) {
        out.push({ index: i, path: partPath(i, k), key: m.id, message: `text part in message ${quote(m.id)} is empty or whitespace only` });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The rules.

const kAll = kFormats;

/** Every rule, in the order validate() reports issues on one message. */
export const kRules: readonly Rule[] = [
  {
    code: "TOOL_RESULT_ORPHAN",
    severity: "error",
    formats: kAll,
    description:
      "A tool result whose callId matches no call of the assistant message whose answer window it sits in: the tool messages directly after an assistant message belong to it (on Anthropic, the whole run of user and tool messages after it). A tool result with no assistant message before its window is an orphan too.",
    check: (ctx) => ctx.pairing.orphans,
  },
  {
    code: "TOOL_CALL_UNANSWERED",
    severity: "error",
    formats: kAll,
    description: "A call of an assistant message with no result in that message's answer window, when other messages follow the assistant message.",
    check: (ctx) => ctx.pairing.unanswered,
  },
  {
    code: "TOOL_CALL_PENDING",
    severity: "warning",
    formats: kAll,
    description: "A call with no result in the last message of the transcript: the run may be about to execute it. Sending this transcript as is would be TOOL_CALL_UNANSWERED.",
    check: (ctx) => ctx.pairing.pending,
  },
  {
    code: "TOOL_RESULT_DUPLICATE",
    severity: "error",
    formats: kAll,
    description: "A second result for a call within that call's answer window. (A result repeated outside the window is a TOOL_RESULT_ORPHAN.)",
    check: (ctx) => ctx.pairing.duplicateResults,
  },
  {
    code: "DUPLICATE_CALL_ID",
    severity: "error",
    formats: kAll,
    description: "A tool-call id used by an earlier call anywhere in the transcript (the same message included); reported on each later use.",
    check: (ctx) => ctx.pairing.duplicateCalls,
  },
  {
    code: "DUPLICATE_MESSAGE_ID",
    severity: "warning",
    overrides: { "openai-responses": "error" },
    formats: kAll,
    description:
      "Two messages with one id, reported on each later one. An error for OpenAI Responses, whose item ids must be unique; elsewhere the wire carries no message ids or none the provider checks, but ctxfold's overlays identify messages by id.",
    check: duplicateMessageIds,
  },
  {
    code: "TOOL_RESULT_NOT_FIRST",
    severity: "error",
    formats: ["anthropic"],
    description:
      "Anthropic: the user turn after a tool_use must begin with its tool_result blocks. A user message with text before a tool message in the run answering an assistant message renders as text before tool_result.",
    check: (ctx) => ctx.pairing.notFirst,
  },
  {
    code: "FIRST_NOT_USER",
    severity: "warning",
    overrides: { anthropic: "error" },
    formats: ["anthropic", "ai-sdk", "langchain"],
    description:
      "The first non-system message must be on the user side (user, or tool: a tool result there is an orphan). Anthropic rejects anything else; the AI SDK and LangChain pass it to their provider, which rejects it for Anthropic and Gemini and accepts it for OpenAI. OpenAI Chat and Responses accept any first message.",
    check: firstNotUser,
  },
  {
    code: "SYSTEM_NOT_FIRST",
    severity: "warning",
    overrides: { anthropic: "error" },
    formats: ["anthropic", "ai-sdk", "langchain"],
    description:
      "A system message after a non-system message. Anthropic has a single leading system parameter; the AI SDK's Anthropic and Google providers and LangChain's ChatAnthropic reject a system message after the conversation starts, its OpenAI providers accept it. OpenAI Chat and Responses accept system messages anywhere.",
    check: systemNotFirst,
  },
  {
    code: "ROLE_ALTERNATION",
    severity: "warning",
    formats: ["anthropic"],
    description:
      "Two consecutive user messages or two consecutive assistant messages (system messages skipped). The API merges consecutive same-role turns, so the request is accepted but the model sees one turn. Tool messages are user side but never flagged: results render in one user message with their neighbours, and user text before a result is TOOL_RESULT_NOT_FIRST.",
    check: roleAlternation,
  },
  {
    code: "THINKING_DROPPED",
    severity: "error",
    formats: ["anthropic"],
    description:
      "With extended thinking in use (some assistant message has a reasoning part, or the caller says so), the final assistant turn, when it is a tool-use loop in progress, must start with its thinking: its first assistant message must begin with a signed or redacted reasoning part. The final turn starts after the last user message that is not part of a run holding tool results; it is in progress when its last non-system message is a tool message or an assistant message with calls. Earlier turns may drop their thinking.",
    check: thinkingDropped,
  },
  {
    code: "REASONING_SIGNATURE_MISSING",
    severity: "error",
    formats: ["anthropic"],
    description:
      "A reasoning part with neither a signature nor redacted data: Anthropic requires the signature on every thinking block sent back (reasoning converted from another provider has none).",
    check: reasoningSignatureMissing,
  },
  {
    code: "EMPTY_MESSAGE",
    severity: "warning",
    overrides: { anthropic: "error" },
    formats: kAll,
    description:
      "A message with no parts. Anthropic rejects empty content except in a final assistant message (so that one is not reported for Anthropic); other providers accept or reject it depending on role.",
    check: emptyMessages,
  },
  {
    code: "EMPTY_TEXT",
    severity: "error",
    formats: ["anthropic"],
    description:
      "A text part of a message whose text is empty or whitespace only: Anthropic rejects text blocks that are empty or hold no non-whitespace text. Text inside tool results is not checked (a tool_result may carry an empty string).",
    check: emptyTexts,
  },
];
