/**
 * OpenAI Responses adapter: an `input` item array of the Responses API to canonical messages
 * and back.
 *
 * Mapping:
 * - A user, system or developer message item (with or without `type: "message"`) is one
 *   canonical message (developer → system, kept as `meta["openai-responses"].role`).
 * - A run of consecutive model-side items (reasoning, assistant message, function_call,
 *   custom_tool_call, and unknown model-side items) is ONE canonical assistant message, so an
 *   assistant turn of text plus parallel calls comes back as the one message it was. A run holds
 *   at most one assistant message item: an assistant message item or a reasoning item that
 *   follows a message item or a call starts the next message (reasoning opens a turn, calls
 *   close it), which gives consecutive canonical assistant messages of OpenAI Chat shape back
 *   one by one. What the items cannot tell apart: an assistant message with neither text nor
 *   reasoning (calls only) right after another assistant message reads back as part of it, as
 *   does any assistant message after one holding neither text nor calls.
 * - Each function_call_output / custom_tool_call_output is one canonical tool message with one
 *   ToolResultPart.
 * - reasoning → ReasoningPart: the summary texts (joined by a blank line) as `text`,
 *   `encrypted_content` as `redacted`, id / content / status / unknown fields in meta.
 * - function_call → ToolCallPart {id: call_id, args: arguments}; item id, status and unknown
 *   fields in the part's meta.
 * - Content: a string is one text part; input_text / output_text / refusal parts are text parts
 *   (their wire type and annotations / logprobs / unknown fields in meta), input_image /
 *   input_file / input_audio MediaParts whose `data` is the wire part, other types OpaqueParts
 *   carrying the wire part.
 * - Unknown item types are carried whole as an OpaquePart (`meta.item`), sent back unchanged:
 *   client-side ones (`*_output`, `*_response`: computer_call_output, mcp_approval_response...)
 *   as a canonical tool message of their own; model-side ones (`*_call`, `mcp_*`:
 *   web_search_call, mcp_list_tools...) inside the run of model-side items they sit in; any
 *   other (item_reference, which may point at either side's item, and future types) as a
 *   canonical assistant message of its own, never merged with its neighbours. An assistant
 *   message item with empty array content is carried the same way, whole, in its run.
 * - Server-side context (server-context.ts): a `compaction` item (checked: `encrypted_content`
 *   a string) is carried whole and opens a run of model-side items like reasoning does (after
 *   server-side compaction the response goes on with reasoning and calls); a
 *   `compaction_trigger` item is a canonical user message of its own (the caller's request).
 *   Reasoning items keep `encrypted_content` as the part's `redacted` and their id in meta, so a
 *   rebuilt item is the one the API returned.
 * - Ids are `m<i>`, i the wire index of the message's first item: Responses ids belong to
 *   items, not to canonical messages, and stay in meta. The origin of a run of several items is
 *   the array of those items; render spreads it.
 *
 * Rendering canonical messages that came from elsewhere: one text part renders as the
 * `{ role, content: "..." }` easy-message form; several parts as input_text parts (output_text
 * with empty annotations on assistant messages); text, calls, results and reasoning render as
 * items in part order (a tool message's stray content as a user message item). Reasoning parts
 * from another format are dropped (the API takes back only its own reasoning items), as are
 * OpaqueParts from another format; `isError` on a result is dropped (no error flag on the
 * wire); MediaParts from another format render from what `mediaSource` reads out of them,
 * else rendering fails with E_UNKNOWN_PART, as does a tool call on a non-assistant message.
 */
import type { Adapter } from "./common.js";
import { parseOpenAIResponses } from "./openai-responses-parse.js";
import { renderOpenAIResponses } from "./openai-responses-render.js";
import { type OpenAIResponsesWire, R } from "./openai-responses-wire.js";

export type {
  OpenAIResponsesCompaction,
  OpenAIResponsesContentPart,
  OpenAIResponsesCustomToolCall,
  OpenAIResponsesCustomToolCallOutput,
  OpenAIResponsesFunctionCall,
  OpenAIResponsesFunctionCallOutput,
  OpenAIResponsesInputAudio,
  OpenAIResponsesInputFile,
  OpenAIResponsesInputImage,
  OpenAIResponsesInputText,
  OpenAIResponsesItem,
  OpenAIResponsesMessageItem,
  OpenAIResponsesMessageMeta,
  OpenAIResponsesOtherItem,
  OpenAIResponsesOtherPart,
  OpenAIResponsesOutputText,
  OpenAIResponsesPartMeta,
  OpenAIResponsesReasoning,
  OpenAIResponsesRefusal,
  OpenAIResponsesWire,
} from "./openai-responses-wire.js";
export {
  OpenAIResponsesCompactionSchema,
  OpenAIResponsesContentPartSchema,
  OpenAIResponsesCustomToolCallOutputSchema,
  OpenAIResponsesCustomToolCallSchema,
  OpenAIResponsesFunctionCallOutputSchema,
  OpenAIResponsesFunctionCallSchema,
  OpenAIResponsesItemSchema,
  OpenAIResponsesMessageItemSchema,
  OpenAIResponsesOtherItemSchema,
  OpenAIResponsesReasoningSchema,
} from "./openai-responses-wire.js";

/** The OpenAI Responses adapter (see the module comment for every mapping decision). */
export const openaiResponsesAdapter: Adapter<OpenAIResponsesWire> = { format: R, parse: parseOpenAIResponses, render: renderOpenAIResponses };
