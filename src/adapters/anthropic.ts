/**
 * Anthropic Messages adapter: the `system` parameter and `messages` of a Messages API request
 * to canonical messages and back.
 *
 * Input is `{ system?, messages }` or a bare `messages` array; other request fields (model,
 * max_tokens, tools, thinking, context_management...) are not read, and render always returns
 * `{ system?, messages }` (the caller spreads it into its request, whose other fields stay as
 * they were). `system` is written only when there is a system message.
 *
 * Mapping:
 * - `system` (a string or text blocks) → one canonical system message with id `system`, first.
 * - Each wire message → one canonical message `m<i>` of its role, except a user message holding
 *   tool_result blocks: its results become ONE canonical tool message (one ToolResultPart each)
 *   and its other blocks, if any, a canonical user message after it (`m<i>.0`, `m<i>.1`, one
 *   origin group). The tool message's meta keeps the wire block order, so a rebuild writes the
 *   one wire message back exactly.
 * - Blocks: text → TextPart (citations, cache_control and unknown fields in the part's
 *   `meta.anthropic.fields`, as for every block); image / document → MediaPart {data: the
 *   `source`, mediaType: its media_type}; tool_use → ToolCallPart (args: the raw text kept on
 *   `input` under kRawArgs, else its JSON); tool_result → ToolResultPart (content: a string is
 *   one text part, absent is none; is_error → isError; name taken from the matching tool_use
 *   earlier in the conversation); thinking → ReasoningPart {text, signature};
 *   redacted_thinking → ReasoningPart {redacted}; compaction (checked: content and
 *   encrypted_content strings or null, signature a string) → OpaquePart carrying the block
 *   whole (server-context.ts says what compaction keeps of it); any other type (server_tool_use,
 *   web_search_tool_result, search_result, ...) → OpaquePart carrying the block, sent back as it
 *   is. tool_use `input` may be any JSON value (the API wants an object; anything else is kept so
 *   arguments that are JSON but not an object survive a round trip).
 * - Fields of a wire message besides role and content stay in its canonical message's
 *   `meta.anthropic.fields` (the tool message's, for a split one). Roles other than user and
 *   assistant are E_UNKNOWN_ROLE (`system` belongs in the `system` parameter).
 * - Shape hints: content written as an array where the plain rendering would write a string
 *   (one text part without Anthropic fields) or, for a tool result, leave it out (no part) is
 *   kept as `content: "array"`.
 *
 * Rendering canonical messages that came from elsewhere:
 * - System messages at the start become the `system` parameter (a string for one message of one
 *   text part, else text blocks of all of them); a system message after any other message has no
 *   place in a request and fails with E_BAD_INPUT; a system part that is not text fails with
 *   E_UNKNOWN_PART (an OpaquePart of another format is dropped).
 * - Consecutive tool messages without an Anthropic hint merge into ONE user message of
 *   tool_result blocks (the API wants every result of a turn in the next user message); parse
 *   gives back one tool message holding all those results.
 * - One text part renders as a string content; otherwise blocks in part order (an assistant
 *   message of text and calls is [text, tool_use...]). A result with one text part renders
 *   `content` as a string (`""` included: the API has been seen to reject an empty tool result,
 *   and always rejects one with is_error, but it is written as given), none leaves `content` out.
 * - Reasoning parts from another format render only when signed (a thinking block needs its
 *   signature; redacted data from another provider would be rejected), else they are dropped;
 *   OpaqueParts from another format are dropped; MediaParts from another format render from
 *   what `mediaSource` reads out of them (images and PDF / text documents), else E_UNKNOWN_PART.
 */
import { parseAnthropic } from "./anthropic-parse.js";
import { renderAnthropic } from "./anthropic-render.js";
import { type AnthropicWire, F } from "./anthropic-wire.js";
import type { Adapter } from "./common.js";

export type {
  AnthropicBlock,
  AnthropicCompactionBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicMessageMeta,
  AnthropicOtherBlock,
  AnthropicPartMeta,
  AnthropicRedactedThinkingBlock,
  AnthropicSource,
  AnthropicSystem,
  AnthropicTextBlock,
  AnthropicThinkingBlock,
  AnthropicToolResultBlock,
  AnthropicToolResultContent,
  AnthropicToolUseBlock,
  AnthropicWire,
} from "./anthropic-wire.js";
export {
  AnthropicBlockSchema,
  AnthropicCompactionBlockSchema,
  AnthropicDocumentBlockSchema,
  AnthropicImageBlockSchema,
  AnthropicMessageSchema,
  AnthropicRedactedThinkingBlockSchema,
  AnthropicSourceSchema,
  AnthropicSystemSchema,
  AnthropicTextBlockSchema,
  AnthropicThinkingBlockSchema,
  AnthropicToolResultBlockSchema,
  AnthropicToolResultContentSchema,
  AnthropicToolUseBlockSchema,
  AnthropicWireSchema,
} from "./anthropic-wire.js";

/** The Anthropic Messages adapter (see the module comment for every mapping decision). */
export const anthropicAdapter: Adapter<AnthropicWire> = { format: F, parse: parseAnthropic, render: renderAnthropic };
