/**
 * Parsing LangChain message dicts into canonical messages (the mapping is in langchain.ts).
 */
import type { Message, Meta, OpaquePart, Part, ReasoningPart, ResultContentPart, Role, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { extraFields, formatError, isObject, type ParseOptions, rawArgsOf, recordOrigin, schemaError, shownRole } from "./common.js";
import { fieldsMeta, textPart, withFields } from "./meta.js";
import {
  F,
  kDefaultKind,
  kKindKey,
  kKinds,
  kRoleKey,
  type LangchainBlock,
  type LangchainContent,
  type LangchainHints,
  type LangchainMessage,
  LangchainMessageSchemas,
  type LangchainToolCall,
  langchainMeta,
  type Loose,
} from "./langchain-wire.js";

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

const kWireMeta: Meta = langchainMeta.frozen({ wire: true });
const kBareMeta: Meta = langchainMeta.frozen({ bare: true });

function opaque(value: unknown): OpaquePart {
  return { type: "opaque", value, meta: kWireMeta };
}

function parseBlock(b: LangchainBlock, inTool: boolean): Part {
  if (typeof b === "string") return { type: "text", text: b, meta: kBareMeta };
  switch (b.type) {
    case "text":
      return textPart(F, b.text as string, extraFields(b, kTextKeys));
    case "image_url": {
      const fields = extraFields(b, kImageKeys);
      return { type: "media", data: b.image_url, meta: fields ? langchainMeta.of({ wire: true, fields }) : kWireMeta };
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
  const meta = fieldsMeta(F, extraFields(b, kReasoningKeys));
  if (meta) part.meta = meta;
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
  if (hints) part.meta = langchainMeta.of(hints);
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
  return { id, role, parts: canonical, meta: Object.keys(hints).length > 0 ? langchainMeta.of(hints) : {} };
}

/** Which key names the kind, and the kind; throws for a message that has neither. */
function kindOf(raw: unknown, i: number, options: ParseOptions | undefined): { kindKey: "type" | "role"; kind: string; role: Role } {
  if (!isObject(raw)) throw formatError("E_SCHEMA", "not a valid langchain message: expected an object", `messages[${i}]`, options);
  const kindKey = "role" in raw ? "role" : "type";
  const kind = raw[kindKey];
  if (typeof kind !== "string") {
    const r = (kindKey === "role" ? kRoleKey : kKindKey).safeParse(raw);
    throw r.success
      ? formatError("E_SCHEMA", `not a valid langchain message: \`${kindKey}\` must be a string`, `messages[${i}]`, options)
      : schemaError(F, r.error, `messages[${i}]`, options, raw);
  }
  const role = kKinds.get(kind);
  if (!role)
    throw formatError(
      "E_UNKNOWN_ROLE",
      `unknown langchain message ${kindKey} ${shownRole(kind)} (one of human, user, ai, assistant, system, developer, tool)`,
      `messages[${i}]`,
      options,
    );
  return { kindKey, kind, role };
}

/** Parses LangChain message dicts into canonical messages. */
export function parseLangchain(input: unknown, options?: ParseOptions): Message[] {
  if (!Array.isArray(input)) throw formatError("E_SCHEMA", "expected an array of langchain messages", "messages", options);
  const out = new Array<Message>(input.length);
  for (let i = 0; i < input.length; i++) {
    const raw: unknown = input[i];
    const { kindKey, kind, role } = kindOf(raw, i, options);
    const r = LangchainMessageSchemas[role].safeParse(raw);
    if (!r.success) throw schemaError(F, r.error, `messages[${i}]`, options, raw);
    const m = parseMessage(raw as LangchainMessage, i, kindKey, kind, role);
    recordOrigin(F, raw, [m], i);
    out[i] = m;
  }
  return out;
}
