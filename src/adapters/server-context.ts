/**
 * The providers' server-side context state among canonical parts: the compaction an OpenAI
 * Responses or Anthropic conversation carries, which compaction must send back verbatim and in
 * place. The adapters carry it as OpaqueParts holding the wire object (byte-identical on
 * render); this module says which of them it is, for the compactor and the validators.
 *
 * What the providers say (docs/concepts.md, "Server-side context features", has the sources):
 * - OpenAI Responses: a `compaction` item (`{ type, id, encrypted_content }`, from server-side
 *   compaction or `/responses/compact`) carries the state of the history before it; items
 *   before the latest one may be dropped. A `compaction_trigger` item asks for compaction and
 *   must be the last input item.
 * - Anthropic: a `compaction` block (`{ type, content, encrypted_content }` from threshold
 *   compaction at the start of an assistant response; `{ type, content, signature }` from
 *   on-demand compaction) stands for what precedes it: the API drops the blocks before the
 *   latest one, and a signed block must come first in `messages`, once.
 *
 * Decisions:
 * - Recognised by the format's own meta on the OpaquePart (the adapter that parsed it) and the
 *   wire `type`: an OpaquePart of another format is dropped on render anyway, and a text that
 *   says "compaction" is text.
 * - The boundary is the message holding the latest compaction part: the history before it is
 *   what the provider no longer reads (or reads through the compaction), the rest is live.
 */
import type { Message, Part } from "../model/schema.js";
import { anthropicMeta } from "./anthropic-wire.js";
import { responsesMeta } from "./openai-responses-wire.js";

/** What a server-side context part is: the provider's compaction state, or a request for it. */
export type ServerContextKind = "compaction" | "compaction-trigger";

/** The wire `type` of an OpaquePart carried whole by the OpenAI Responses or Anthropic adapter, else undefined. */
function carriedType(p: Part): string | undefined {
  if (p.type !== "opaque" || typeof p.value !== "object" || p.value === null) return undefined;
  if (!responsesMeta.get(p)?.item && !anthropicMeta.get(p)?.wire) return undefined;
  const type = (p.value as { type?: unknown }).type;
  return typeof type === "string" ? type : undefined;
}

/** Which server-side context part `p` is (see the module comment), or undefined for any other part. */
export function serverContextKind(p: Part): ServerContextKind | undefined {
  switch (carriedType(p)) {
    case "compaction":
      return "compaction";
    case "compaction_trigger":
      return responsesMeta.get(p)?.item ? "compaction-trigger" : undefined;
    default:
      return undefined;
  }
}

/** Whether `p` is a provider's compaction: an OpenAI Responses compaction item or an Anthropic compaction block. */
export function isCompactionPart(p: Part): boolean {
  return serverContextKind(p) === "compaction";
}

/** Whether `m` holds a server-side context part: compaction must keep it, with that part unchanged. */
export function holdsServerContext(m: Message): boolean {
  return m.parts.some((p) => serverContextKind(p) !== undefined);
}

/** Whether `m` is made of compaction parts only (an on-demand or paused compaction's assistant message). */
export function isCompactionOnly(m: Message): boolean {
  return m.parts.length > 0 && m.parts.every(isCompactionPart);
}

/** The index of the message holding the latest compaction part, or -1 when there is none. */
export function compactionBoundary(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].parts.some(isCompactionPart)) return i;
  return -1;
}

/** An Anthropic compaction block from on-demand compaction: it carries a signature, and must come first, once. */
export function isSignedCompaction(p: Part): boolean {
  return isCompactionPart(p) && anthropicMeta.get(p)?.wire === true && typeof (p as { value: { signature?: unknown } }).value.signature === "string";
}
