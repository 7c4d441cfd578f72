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
import { isCompactionOnly, isCompactionPart } from "../adapters/server-context.js";
import type { Pairing } from "./pairing.js";
import { placeOf, quote } from "./paths.js";
import { compactionMisplaced, compactionTriggerNotLast, reasoningWithoutFollower } from "./server-context-checks.js";
import type { Finding, IssueCode, Severity } from "./issues.js";

/** What a check sees: the transcript, its format and analyses shared between rules. */
export interface RuleContext {
  readonly messages: readonly Message[];
  readonly format: Format;
  /** Extended thinking is in use (the caller said so, or some assistant message reasons). */
  readonly thinking: boolean;
  /** The call/result pairing, computed once and shared by the tool rules. */
  readonly pairing: Pairing;
  /** How an issue names message `index` (or its part `part`) to the user: in the input's shape where there is one (Issue's `path`). */
  pathOf(index: number, part?: number): string;
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

const isUserSide = (m: Message): boolean => m.role === "user" || m.role === "tool";
const hasToolCall = (m: Message): boolean => m.parts.some((p) => p.type === "tool-call");
const isBlank = (s: string): boolean => !/\S/.test(s);

/** A reasoning part Anthropic accepts back: signed thinking, or redacted thinking. */
export function isSignedReasoning(p: Part | undefined): boolean {
  return p !== undefined && p.type === "reasoning" && (!!p.signature || !!p.redacted);
}

/**
 * Whether `m` opens with a reasoning part Anthropic accepts back, after any compaction block at
 * its start (the API reads a conversation from its latest compaction block on).
 */
export function opensWithSignedReasoning(m: Message): boolean {
  const k = m.parts.findIndex((p) => !isCompactionPart(p));
  return k >= 0 && isSignedReasoning(m.parts[k]);
}

/** Whether any assistant message carries a reasoning part: extended thinking is in use. */
export function usesThinking(messages: readonly Message[]): boolean {
  for (const m of messages) {
    if (m.role === "assistant" && m.parts.some((p) => p.type === "reasoning")) return true;
  }
  return false;
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
    out.push({ ...placeOf(i), key: id, message: `message id ${quote(id)} is used again (first at ${ctx.pathOf(firstAt.get(id)!)})` });
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
  // A conversation continued from a compaction block starts with it (Anthropic's on-demand compaction).
  if (m.parts.length > 0 && isCompactionPart(m.parts[0])) return [];
  return [{ ...placeOf(i), key: m.id, message: `the first non-system message ${quote(m.id)} is ${m.role}, not user` }];
}

function systemNotFirst(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  let sawOther = false;
  for (let i = 0; i < ctx.messages.length; i++) {
    const m = ctx.messages[i];
    if (m.role !== "system") sawOther = true;
    else if (sawOther) out.push({ ...placeOf(i), key: m.id, message: `system message ${quote(m.id)} comes after the conversation started` });
  }
  return out;
}

function roleAlternation(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  let prev: Message | undefined;
  for (let i = 0; i < ctx.messages.length; i++) {
    const m = ctx.messages[i];
    if (m.role === "system") continue;
    // An assistant message of compaction blocks alone reads as the start of the turn after it.
    if (prev && prev.role === m.role && (m.role === "user" || m.role === "assistant") && !isCompactionOnly(prev)) {
      out.push({
        ...placeOf(i),
        key: m.id,
        message: `${m.role} message ${quote(m.id)} follows ${m.role} message ${quote(prev.id)}; the API merges them into one turn`,
      });
    }
    prev = m;
  }
  return out;
}

/**
 * The index of the first assistant message of the final turn when that turn is a tool-use loop
 * in progress, else -1 (THINKING_DROPPED's definition, after Anthropic's "when thinking is
 * enabled, a final assistant message must start with a thinking block (preceding the lastmost
 * set of tool_use and tool_result blocks)": the final turn starts after the last user message
 * that is not part of a run holding tool results; it is in progress when its last non-system
 * message is a tool message or an assistant message with calls). An assistant message of
 * compaction blocks alone opens nothing: the turn goes on in the message after it. With
 * `evenIfDone`, the final turn's first assistant message whatever its last message is (a
 * compactor's output ending in a steering message becomes a turn in progress at the agent's
 * next call). With `compactionOpens`, an assistant message of compaction blocks alone opens
 * the turn like any other (block compaction's in-memory strategy, which finds the unit to keep
 * this way and leaves the check of the result to the validator).
 */
export function turnInProgressOpener(messages: readonly Message[], options: { evenIfDone?: boolean; compactionOpens?: boolean } = {}): number {
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
  const opens = (m: Message) => m.role === "assistant" && (options.compactionOpens || !isCompactionOnly(m));
  for (let i = turnStart; i <= last; i++) if (opens(messages[i])) return i;
  return -1;
}

function thinkingDropped(ctx: RuleContext): Finding[] {
  if (!ctx.thinking) return [];
  const i = turnInProgressOpener(ctx.messages);
  if (i < 0) return [];
  const m = ctx.messages[i];
  if (opensWithSignedReasoning(m)) return [];
  return [
    {
      ...placeOf(i, m.parts.length > 0 ? 0 : undefined),
      key: m.id,
      message: `assistant message ${quote(m.id)} opens the tool-use turn in progress but does not start with a signed reasoning part (thinking is in use)`,
    },
  ];
}

function reasoningSignatureMissing(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  for (let i = 0; i < ctx.messages.length; i++) {
    const m = ctx.messages[i];
    for (let k = 0; k < m.parts.length; k++) {
      const p = m.parts[k];
      if (p.type === "reasoning" && !p.signature && !p.redacted) {
        out.push({ ...placeOf(i, k), key: m.id, message: `reasoning part in message ${quote(m.id)} has neither a signature nor redacted data` });
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
    out.push({ ...placeOf(i), key: m.id, message: `${m.role} message ${quote(m.id)} has no parts` });
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
        out.push({ ...placeOf(i, k), key: m.id, message: `text part in message ${quote(m.id)} is empty or whitespace only` });
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
    description:
      "A call with no result in the last message of the transcript: the run may be about to execute it. Sending this transcript as is would be TOOL_CALL_UNANSWERED.",
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
      "The first non-system message must be on the user side (user, or tool: a tool result there is an orphan). Anthropic rejects anything else, except a message that starts with a compaction block (a conversation continued after on-demand compaction starts with the block); the AI SDK and LangChain pass it to their provider, which rejects it for Anthropic and Gemini and accepts it for OpenAI. OpenAI Chat and Responses accept any first message.",
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
      "Two consecutive user messages or two consecutive assistant messages (system messages skipped). The API merges consecutive same-role turns, so the request is accepted but the model sees one turn. Tool messages are user side but never flagged: results render in one user message with their neighbours, and user text before a result is TOOL_RESULT_NOT_FIRST. An assistant message of compaction blocks alone followed by another assistant message is not flagged either (Anthropic documents it as fine: the block still comes first).",
    check: roleAlternation,
  },
  {
    code: "THINKING_DROPPED",
    severity: "error",
    formats: ["anthropic"],
    description:
      "With extended thinking in use (some assistant message has a reasoning part, or the caller says so), the final assistant turn, when it is a tool-use loop in progress, must start with its thinking: its first assistant message must begin with a signed or redacted reasoning part. The final turn starts after the last user message that is not part of a run holding tool results; it is in progress when its last non-system message is a tool message or an assistant message with calls. Earlier turns may drop their thinking. Compaction blocks are read through: an assistant message of compaction blocks alone opens no turn, and the reasoning part may follow compaction blocks at the start of the message.",
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
  {
    code: "COMPACTION_MISPLACED",
    severity: "error",
    formats: ["anthropic"],
    description:
      "A signed compaction block (on-demand compaction, `compact-2026-09-04`) that is not the first block of the first non-system message, or a second one: the block takes the place of the messages it summarises, so it goes first in `messages` (as an assistant message of its own or the first block of the first message), exactly once, and the API rejects what stands before it (`compaction_block_misplaced`). Threshold compaction's blocks (`compact_20260112`, unsigned) may stand anywhere: the API drops what precedes the latest one.",
    check: compactionMisplaced,
  },
  {
    code: "COMPACTION_TRIGGER_NOT_LAST",
    severity: "error",
    formats: ["openai-responses"],
    description: "A `compaction_trigger` item that is not the final input item: the Responses API compacts the context at that item and requires it last.",
    check: compactionTriggerNotLast,
  },
  {
    code: "REASONING_WITHOUT_FOLLOWER",
    severity: "error",
    formats: ["openai-responses"],
    description:
      "A Responses reasoning item (this format's own) with no item after it in its assistant message: the API wants each reasoning item sent with the message or call that followed it in the response (\"Item 'rs_…' of type 'reasoning' was provided without its required following item\"). Reasoning from another format is not checked: it is not rendered.",
    check: reasoningWithoutFollower,
  },
];
