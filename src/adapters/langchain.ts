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
 *   `image_url: { url }` with the URL or data URL `mediaSource` (media.ts) reads out of them.
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
import type { Adapter } from "./common.js";
import { parseLangchain } from "./langchain-parse.js";
import { renderLangchain } from "./langchain-render.js";
import { F, type LangchainWire } from "./langchain-wire.js";

export type { LangchainBlock, LangchainContent, LangchainHints, LangchainMessage, LangchainToolCall, LangchainWire } from "./langchain-wire.js";
export { LangchainBlockSchema, LangchainMessageSchemas, LangchainToolCallSchema } from "./langchain-wire.js";

/** The LangChain message-dict adapter (format "langchain"). */
export const langchainAdapter: Adapter<LangchainWire> = { format: F, parse: parseLangchain, render: renderLangchain };
