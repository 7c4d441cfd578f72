/**
 * The LangChain adapter: an array of flat message dicts, the fields of LangChain's BaseMessage
 * as `model_dump()` (Python) or a plain-object spread (JS) gives them: `{ type, content, id?,
 * name?, additional_kwargs?, response_metadata?, tool_calls?, invalid_tool_calls?,
 * usage_metadata?, tool_call_id?, status?, artifact? }`.
 *
 * Decisions (where LangChain leaves a choice):
 * - Message kinds. Like `convert_to_messages`, a dict may name its kind under `role` (which wins)
 *   or `type`, spelt human / user, ai / assistant, system / developer or tool; the `*MessageChunk`
 *   type names of streamed messages read as their message kinds. Each message renders back with
 *   the key and spelling it was parsed with; canonical messages from other formats render
 *   `type` with human / ai / system / tool. `function`, `chat`, `remove` and other kinds are
 *   E_UNKNOWN_ROLE: the canonical model has no place for them. The serialised-constructor form
 *   (`{ lc: 1, type: "constructor", ... }`) and `message_to_dict`'s `{ type, data }` are not read.
 * - Ids. A string `id` becomes the canonical message id and renders back; without one the id is
 *   `m<i>` and no `id` is rendered (so converting from another format invents none).
 * - Content. A string is one text part; a block list maps `text` blocks (and bare strings in the
 *   list) to text parts, `image_url` to media parts (data = the `image_url` value), `reasoning`
 *   (LangChain's standard block) to reasoning parts outside tool messages, and every other block
 *   (Anthropic `tool_use` / `thinking`, standard `image`, ...) to an opaque part (meta
 *   `wire: true`) rendered back unchanged. A canonical message with one plain text part renders
 *   a string; anything else, an empty part list included, a block list. Opaque parts from other
 *   formats are dropped (that provider's own data); media parts from other formats render as
 *   `image_url: { url }` with the URL or data URL openai-chat's `mediaSource` reads out of them.
 * - AI messages. Content parts come first, then one tool-call part per `tool_calls` entry (so a
 *   canonical message that interleaves text after calls comes back with the text first). The raw
 *   argument text is the matching `additional_kwargs.tool_calls[].function.arguments` when it
 *   parses to the same `args` (the model's exact bytes, as langchain-openai keeps them), else the
 *   args' JSON (kRawArgs in memory). Rendered AI messages always carry `tool_calls` (an empty list
 *   when none, as LangChain serialises it) unless the parsed message had no such field. Arguments
 *   that are not a JSON object have no LangChain form and render as `{}`.
 * - Tool messages become one canonical tool message holding one tool result: `tool_call_id` is
 *   its call id, a string `name` its tool name, `status` "error" sets isError and "success"
 *   isError false. A canonical tool message with several results renders one tool message each.
 * - Parts with no LangChain place (tool calls outside AI messages, tool results outside tool
 *   messages, a tool message without a result) fail render with E_UNKNOWN_PART.
 * - Canonical reasoning from other formats renders as a standard `reasoning` block, its signature
 *   and redacted data under `extras` (`signature`, `redacted`), which parse reads back.
 */
import { z } from "zod";
import type { MediaPart, Message, Meta, OpaquePart, Part, ReasoningPart, ResultContentPart, Role, TextPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { type Adapter, argsObject, extraFields, formatError, type ParseOptions, rawArgsOf, recordOrigin, type RenderOptions, reusable, schemaError, taggedUnion } from "./common.js";
import { mediaSource, urlOf } from "./media.js";

const F = "langchain" as const;

// ---------------------------------------------------------------------------------------------
// Wire types.

interface Loose {
  [key: string]: unknown;
}

/** A LangChain ToolCall. */
export interface LangchainToolCall extends Loose {
  name: string;
  args: Record<string, unknown>;
  id?: string | null;
  type?: "tool_call";
}

/** A content block: a bare string or an object with a `type`. */
export type LangchainBlock = string | (Loose & { type: string });
export type LangchainContent = string | LangchainBlock[];

export interface LangchainMessage extends Loose {
  /** The message kind (human, ai, system, tool, ...); `role` names it instead when present. */
  type?: string;
  role?: string;
  content: LangchainContent;
  id?: string | null;
  name?: string | null;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
  tool_calls?: LangchainToolCall[];
  invalid_tool_calls?: Record<string, unknown>[];
  usage_metadata?: Record<string, unknown> | null;
  tool_call_id?: string;
  status?: "success" | "error";
  artifact?: unknown;
}
export type LangchainWire = LangchainMessage[];

// ---------------------------------------------------------------------------------------------
// Wire schemas.

export const LangchainBlockSchema = z.union([
  z.string(),
  taggedUnion(
    new Map<string, z.ZodType>([
      ["text", z.looseObject({ type: z.literal("text"), text: z.string() })],
      ["image_url", z.looseObject({ type: z.literal("image_url"), image_url: z.unknown() })],
      ["reasoning", z.looseObject({ type: z.literal("reasoning"), reasoning: z.string().optional(), extras: z.record(z.string(), z.unknown()).optional() })],
    ]),
  ),
]);

export const LangchainToolCallSchema = z.looseObject({
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  id: z.string().nullable().optional(),
  type: z.literal("tool_call").optional(),
});

const kwargs = z.record(z.string(), z.unknown()).optional();
const base = {
  content: z.union([z.string(), z.array(LangchainBlockSchema)]),
  id: z.string().nullable().optional(),
  name: z.string().nullable().optional(),
  additional_kwargs: kwargs,
  response_metadata: kwargs,
};

/** The schema of each message kind, by canonical role. */
export const LangchainMessageSchemas = {
  system: z.looseObject(base),
  user: z.looseObject(base),
  assistant: z.looseObject({
    ...base,
    tool_calls: z.array(LangchainToolCallSchema).optional(),
    invalid_tool_calls: z.array(z.looseObject({})).optional(),
    usage_metadata: z.looseObject({}).nullable().optional(),
  }),
  tool: z.looseObject({
    ...base,
    tool_call_id: z.string(),
    status: z.enum(["success", "error"]).optional(),
  }),
} as const satisfies Record<Role, z.ZodType>;

const kKindKey = z.looseObject({ type: z.string() });
const kRoleKey = z.looseObject({ role: z.string() });

// ---------------------------------------------------------------------------------------------
// Kinds and hints.

const kKinds = new Map<string, Role>([
  ["system", "system"],
  ["developer", "system"],
  ["SystemMessageChunk", "system"],
  ["human", "user"],
  ["user", "user"],
  ["HumanMessageChunk", "user"],
  ["ai", "assistant"],
  ["assistant", "assistant"],
  ["AIMessageChunk", "assistant"],
  ["tool", "tool"],
  ["ToolMessageChunk", "tool"],
]);
const kDefaultKind: Record<Role, string> = { system: "system", user: "human", assistant: "ai", tool: "tool" };

/** meta["langchain"] of a canonical message, part or tool call parsed from LangChain. */
export interface LangchainHints {
  /** Wire fields ctxfold does not model (additional_kwargs, response_metadata, usage_metadata, ...), carried unchanged. */
  fields?: Record<string, unknown>;
  /** A media part's data / an opaque part's value is this format's own wire value. */
  wire?: true;
  /** The kind was under `role`, not `type`. */
  key?: "role";
  /** The kind's spelling when it is not the default (human, ai, system, tool). */
  kind?: string;
  /** The canonical id is the wire `id`. */
  id?: true;
  /** The content was a block list (a lone text part would otherwise render as a string). */
  content?: "array";
  /** The AI message had no `tool_calls` field. */
  noCalls?: true;
  /** A text block that was a bare string in the content list. */
  bare?: true;
  /** A tool call without a string `id` (its canonical id is ""). */
  noId?: true;
  /** A tool call without `type: "tool_call"`. */
  noType?: true;
}

const kCallKeys = new Set(["name", "args", "id", "type"]);
const kCallKeysNoId = new Set(["name", "args", "type"]);
const kTextKeys = new Set(["type", "text"]);
const kImageKeys = new Set(["type", "image_url"]);
const kReasoningKeys = new Set(["type", "reasoning"]);

/** Known message keys by role and by the key naming the kind (`id`, `name` join when strings). */
function knownKeys(kindKey: "type" | "role", extra: string[]): ReadonlySet<string> {
  return new Set([kindKey, "content", ...extra]);
}
const kKnown: Record<Role, Record<"type" | "role", ReadonlySet<string>>> = {
  system: { type: knownKeys("type", []), role: knownKeys("role", []) },
  user: { type: knownKeys("type", []), role: knownKeys("role", []) },
  assistant: { type: knownKeys("type", ["tool_calls"]), role: knownKeys("role", ["tool_calls"]) },
  tool: { type: knownKeys("type", ["tool_call_id", "status"]), role: knownKeys("role", ["tool_call_id", "status"]) },
};

const hintsOf = (meta: Meta | undefined): LangchainHints | undefined => meta?.[F] as LangchainHints | undefined;

function withFields(fields: Record<string, unknown> | undefined, hints?: LangchainHints): LangchainHints | undefined {
  if (!fields) return hints;
  return hints ? { ...hints, fields } : { fields };
}

const kWireMeta: Meta = Object.freeze({ [F]: Object.freeze({ wire: true }) });
const kBareMeta: Meta = Object.freeze({ [F]: Object.freeze({ bare: true }) });

function opaque(value: unknown): OpaquePart {
  return { type: "opaque", value, meta: kWireMeta };
}

// ---------------------------------------------------------------------------------------------
// Parse.

function parseBlock(b: LangchainBlock, inTool: boolean): Part {
  if (typeof b === "string") return { type: "text", text: b, meta: kBareMeta };
  switch (b.type) {
    case "text": {
      const part: TextPart = { type: "text", text: b.text as string };
      const fields = extraFields(b, kTextKeys);
      if (fields) part.meta = { [F]: { fields } };
      return part;
    }
    case "image_url": {
      const fields = extraFields(b, kImageKeys);
      return { type: "media", data: b.image_url, meta: fields ? { [F]: { wire: true, fields } } : kWireMeta };
    }
    case "reasoning":
      return inTool ? opaque(b) : parseReasoning(b);
    default:
      return opaque(b);
  }
}

function parseReasoning(b: Loose & { type: string }): ReasoningPart {
  const part: ReasoningPart = { type: "reasoning" };
  if (typeof b.reasoning === "string") part.text = b.reasoning;
  const extras = b.extras as Record<string, unknown> | undefined;
  if (typeof extras?.signature === "string") part.signature = extras.signature;
  if (typeof extras?.redacted === "string") part.redacted = extras.redacted;
  const fields = extraFields(b, kReasoningKeys);
  if (fields) part.meta = { [F]: { fields } };
  return part;
}

function parseContent(content: LangchainContent, inTool: boolean): { parts: Part[]; array: boolean } {
  if (typeof content === "string") return { parts: [{ type: "text", text: content }], array: false };
  const parts = new Array<Part>(content.length);
  for (let k = 0; k < content.length; k++) parts[k] = parseBlock(content[k]!, inTool);
  return { parts, array: true };
}

/** The raw argument texts langchain-openai keeps in `additional_kwargs.tool_calls`, by call id. */
function rawArguments(w: LangchainMessage): Map<string, string> | undefined {
  const calls = w.additional_kwargs?.tool_calls;
  if (!Array.isArray(calls)) return undefined;
  let map: Map<string, string> | undefined;
  for (const c of calls as unknown[]) {
    const call = c as { id?: unknown; function?: { arguments?: unknown } } | null;
    const args = call?.function?.arguments;
    if (typeof call?.id === "string" && typeof args === "string") (map ??= new Map()).set(call.id, args);
  }
  return map;
}

function argsText(args: Record<string, unknown>, raw: string | undefined): string {
  if (raw !== undefined) {
    try {
      if (JSON.stringify(JSON.parse(raw)) === JSON.stringify(args)) return raw;
    } catch {
      // not JSON: the args object is the truth
    }
  }
  return rawArgsOf(args);
}

function parseToolCall(c: LangchainToolCall, raws: Map<string, string> | undefined): ToolCallPart {
  const ownId = typeof c.id === "string";
  const id = ownId ? (c.id as string) : "";
  const part: ToolCallPart = { type: "tool-call", id, name: c.name, args: argsText(c.args, ownId ? raws?.get(id) : undefined) };
  let hints: LangchainHints | undefined;
  if (!ownId) hints = { noId: true };
  if (c.type === undefined) hints = { ...hints, noType: true };
  hints = withFields(extraFields(c, ownId ? kCallKeys : kCallKeysNoId), hints);
  if (hints) part.meta = { [F]: hints };
  return part;
}

function parseMessage(w: LangchainMessage, i: number, kindKey: "type" | "role", kind: string, role: Role): Message {
  const hints: LangchainHints = {};
  if (kindKey === "role") hints.key = "role";
  if (kind !== kDefaultKind[role]) hints.kind = kind;
  let fields = extraFields(w, kKnown[role][kindKey]);
  let id = `m${i}`;
  if (typeof w.id === "string") {
    id = w.id;
    hints.id = true;
    if (fields) delete fields.id;
  }
  const { parts, array } = parseContent(w.content, role === "tool");
  if (array) hints.content = "array";
  let canonical: Part[] = parts;
  if (role === "assistant") {
    const calls = w.tool_calls;
    if (calls === undefined) hints.noCalls = true;
    else if (calls.length > 0) {
      const raws = rawArguments(w);
      for (const c of calls) canonical.push(parseToolCall(c, raws));
    }
  } else if (role === "tool") {
    const result: ToolResultPart = { type: "tool-result", callId: w.tool_call_id as string, content: parts as ResultContentPart[] };
    if (typeof w.name === "string") {
      result.name = w.name;
      if (fields) delete fields.name;
    }
    if (w.status === "error") result.isError = true;
    else if (w.status === "success") result.isError = false;
    canonical = [result];
  }
  if (fields && Object.keys(fields).length === 0) fields = undefined;
  if (fields) hints.fields = fields;
  return { id, role, parts: canonical, meta: Object.keys(hints).length > 0 ? { [F]: hints } : {} };
}

/** Which key names the kind, and the kind; throws for a message that has neither. */
function kindOf(raw: unknown, i: number, options: ParseOptions | undefined): { kindKey: "type" | "role"; kind: string; role: Role } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw formatError("E_SCHEMA", "not a valid langchain message: expected an object", `messages[${i}]`, options);
  const kindKey = "role" in raw ? "role" : "type";
  const kind = (raw as Record<string, unknown>)[kindKey];
  if (typeof kind !== "string") {
    const r = (kindKey === "role" ? kRoleKey : kKindKey).safeParse(raw);
    throw r.success ? formatError("E_SCHEMA", `not a valid langchain message: \`${kindKey}\` must be a string`, `messages[${i}]`, options) : schemaError(F, r.error, `messages[${i}]`, options, raw);
  }
  const role = kKinds.get(kind);
  if (!role) throw formatError("E_UNKNOWN_ROLE", `unknown langchain message ${kindKey} ${JSON.stringify(kind)} (one of human, user, ai, assistant, system, developer, tool)`, `messages[${i}]`, options);
  return { kindKey, kind, role };
}

// ---------------------------------------------------------------------------------------------
// Render.

/** Copies the carried wire fields onto a rendered object (`__proto__` as an own field too). */
function assignFields<T extends Record<string, unknown>>(out: T, hints: LangchainHints | undefined): T {
  const fields = hints?.fields;
  if (fields) {
    for (const k in fields) {
      if (k === "__proto__") Object.defineProperty(out, k, { value: fields[k], enumerable: true, configurable: true, writable: true });
      else (out as Record<string, unknown>)[k] = fields[k];
    }
  }
  return out;
}

function renderReasoning(p: ReasoningPart): LangchainBlock {
  const hints = hintsOf(p.meta);
  const out: Loose & { type: string } = { type: "reasoning" };
  if (p.text !== undefined) out.reasoning = p.text;
  if (hints) return assignFields(out, hints);
  if (p.signature !== undefined || p.redacted !== undefined) {
    const extras: Record<string, unknown> = {};
    if (p.signature !== undefined) extras.signature = p.signature;
    if (p.redacted !== undefined) extras.redacted = p.redacted;
    out.extras = extras;
  }
  return out;
}

/**
 * A media part as an `image_url` block: its own data back, or for a part from another format the
 * URL (or data URL) openai-chat's `mediaSource` reads out of its data, else the data as is.
 */
function renderMedia(p: MediaPart): LangchainBlock {
  const hints = hintsOf(p.meta);
  const out: Loose & { type: string } = { type: "image_url" };
  if (hints?.wire) {
    if (p.data !== undefined) out.image_url = p.data;
    return assignFields(out, hints);
  }
  const s = mediaSource(p);
  const url = s && urlOf(s);
  out.image_url = url !== undefined ? { url } : p.data;
  return out;
}

/** A content block; undefined for an opaque part from another format (dropped: that provider's own data). */
function renderBlock(p: Part, path: string, where: string): LangchainBlock | undefined {
  switch (p.type) {
    case "text": {
      const hints = hintsOf(p.meta);
      return hints?.bare ? p.text : assignFields({ type: "text", text: p.text }, hints);
    }
    case "media":
      return renderMedia(p);
    case "reasoning":
      return renderReasoning(p);
    case "opaque":
      return hintsOf(p.meta)?.wire ? (p.value as LangchainBlock) : undefined;
    case "tool-call":
    case "tool-result":
      throw formatError("E_UNKNOWN_PART", `a langchain ${where} message cannot hold a ${p.type} part`, path);
  }
}

/** Content from parts (`indices[k]` is the canonical index of parts[k], for error paths). */
function renderContent(parts: readonly Part[], indices: readonly number[] | undefined, hints: LangchainHints | undefined, i: number, where: string): LangchainContent {
  if (hints?.content !== "array" && parts.length === 1 && parts[0]!.type === "text" && !hintsOf(parts[0]!.meta)) return parts[0]!.text;
  const out: LangchainBlock[] = [];
  for (let k = 0; k < parts.length; k++) {
    const block = renderBlock(parts[k]!, `messages[${i}].parts[${indices ? indices[k] : k}]`, where);
    if (block !== undefined) out.push(block);
  }
  return out;
}

function renderToolCall(p: ToolCallPart): LangchainToolCall {
  const hints = hintsOf(p.meta);
  const value = argsObject(p.args);
  const args = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const out: LangchainToolCall = { name: p.name, args };
  if (!hints?.noId) out.id = p.id;
  if (!hints?.noType) out.type = "tool_call";
  return assignFields(out, hints);
}

function head(m: Message, hints: LangchainHints | undefined): LangchainMessage {
  const out = { [hints?.key ?? "type"]: hints?.kind ?? kDefaultKind[m.role] } as LangchainMessage;
  return out;
}

function finish(out: LangchainMessage, m: Message, hints: LangchainHints | undefined): LangchainMessage {
  if (hints?.id) out.id = m.id;
  return assignFields(out, hints);
}

function renderAi(m: Message, hints: LangchainHints | undefined, i: number): LangchainMessage {
  const content: Part[] = [];
  const indices: number[] = [];
  const calls: LangchainToolCall[] = [];
  m.parts.forEach((p, k) => {
    if (p.type === "tool-call") calls.push(renderToolCall(p));
    else {
      content.push(p);
      indices.push(k);
    }
  });
  const out = head(m, hints);
  out.content = renderContent(content, indices, hints, i, "ai");
  if (calls.length > 0 || !hints?.noCalls) out.tool_calls = calls;
  return finish(out, m, hints);
}

function renderTool(m: Message, hints: LangchainHints | undefined, i: number, sink: LangchainMessage[]): void {
  if (m.parts.length === 0) throw formatError("E_UNKNOWN_PART", "a langchain tool message needs a tool result", `messages[${i}].parts`);
  m.parts.forEach((p, k) => {
    if (p.type !== "tool-result") throw formatError("E_UNKNOWN_PART", `a langchain tool message holds a tool result, not a ${p.type} part`, `messages[${i}].parts[${k}]`);
    const out = head(m, hints);
    out.content = renderContent(p.content, undefined, hints, i, "tool");
    out.tool_call_id = p.callId;
    if (p.name !== undefined) out.name = p.name;
    if (p.isError !== undefined) out.status = p.isError ? "error" : "success";
    sink.push(k === 0 ? finish(out, m, hints) : out);
  });
}

function renderMessage(m: Message, i: number, sink: LangchainMessage[]): void {
  const hints = hintsOf(m.meta);
  switch (m.role) {
    case "system":
    case "user": {
      const out = head(m, hints);
      out.content = renderContent(m.parts, undefined, hints, i, m.role === "user" ? "human" : "system");
      sink.push(finish(out, m, hints));
      return;
    }
    case "assistant":
      sink.push(renderAi(m, hints, i));
      return;
    case "tool":
      renderTool(m, hints, i, sink);
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// The adapter.

/** Parses LangChain message dicts into canonical messages. */
function parse(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw formatError("E_SCHEMA", "expected an array of langchain messages", "messages", options);
  const out = new Array<Message>(input.length);
  for (let i = 0; i < input.length; i++) {
    const raw: unknown = input[i];
    const { kindKey, kind, role } = kindOf(raw, i, options);
    const r = LangchainMessageSchemas[role].safeParse(raw);
    if (!r.success) throw schemaError(F, r.error, `messages[${i}]`, options, raw);
    const m = parseMessage(raw as LangchainMessage, i, kindKey, kind, role);
    recordOrigin(F, raw, [m]);
    out[i] = m;
  }
  return out;
}

/** Renders canonical messages as LangChain message dicts. */
function render(messages: readonly Message[], options?: RenderOptions): LangchainWire {
  const reuse = options?.reuse !== false;
  const out: LangchainWire = [];
  for (let i = 0; i < messages.length; ) {
    if (reuse) {
      const r = reusable(messages, i, F);
      if (r) {
        out.push(r.raw as LangchainMessage);
        i += r.length;
        continue;
      }
    }
    renderMessage(messages[i]!, i, out);
    i++;
  }
  return out;
}

/** The LangChain message-dict adapter (format "langchain"). */
export const langchainAdapter: Adapter<LangchainWire> = { format: F, parse, render };
