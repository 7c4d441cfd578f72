/**
 * OpenAI Chat Completions adapter: a `messages` array of the Chat Completions API to canonical
 * messages and back.
 *
 * Mapping (one wire message is one canonical message, id `m<i>`, except as noted):
 * - system, developer → role system (`developer` kept as `meta["openai-chat"].role`); user → user.
 * - assistant → assistant: content parts, then the legacy `function_call` (a ToolCallPart with the
 *   made-up id `fc_<messageId>`, marked so it renders back as `function_call`), then `tool_calls`
 *   in order (function calls and custom calls become ToolCallParts, a call of any other type an
 *   OpaquePart that renders back into `tool_calls` at its place). `refusal`, `name`, `audio` and
 *   every field ctxfold does not model stay in `meta["openai-chat"].fields`.
 * - tool → role tool with one ToolResultPart {callId: tool_call_id}; legacy `function` messages
 *   → role tool with one ToolResultPart whose callId is the id made up for the latest preceding
 *   `function_call` of that name (`fc_unknown_<messageId>` when there is none), rendered back as
 *   a function message. A tool message's own fields live on its ToolResultPart's meta, since a
 *   canonical tool message may render as several wire messages.
 * - content: a string is one text part; an array maps part by part (text → text, refusal → text
 *   marked as a refusal, image_url / input_audio / file → MediaPart whose `data` is the wire part
 *   itself, any other type → OpaquePart carrying the wire part, safe to send back unchanged). How
 *   content was written (`[]`/array, `null`, absent) is kept as a shape hint wherever the plain
 *   rendering would differ: one text part renders as a string; no part renders as `null` on an
 *   assistant message with tool calls and `""` elsewhere.
 *
 * Rendering canonical messages that came from elsewhere:
 * - Reasoning parts have no place in Chat Completions and are dropped.
 * - `isError` on a tool result is dropped: Chat Completions has no error flag (write the error
 *   into the result text if the model must see it).
 * - A tool message with several ToolResultParts renders as several tool messages; content parts
 *   of a tool message that are not results render as a user message after them; a user or
 *   system message's ToolResultParts render as tool messages in their place.
 * - OpaqueParts from another format are dropped (they are that provider's own data); MediaParts
 *   from another format render from what `mediaSource` can read out of their data, else
 *   rendering fails with E_UNKNOWN_PART, as does a tool call on a non-assistant message.
 */
import type { Adapter } from "./common.js";
import { parseOpenAIChat } from "./openai-chat-parse.js";
import { renderOpenAIChat } from "./openai-chat-render.js";
import { F, type OpenAIChatWire } from "./openai-chat-wire.js";

export type {
  OpenAIChatAssistantMessage,
  OpenAIChatAudioPart,
  OpenAIChatContent,
  OpenAIChatContentPart,
  OpenAIChatCustomToolCall,
  OpenAIChatFilePart,
  OpenAIChatFunctionCall,
  OpenAIChatFunctionMessage,
  OpenAIChatFunctionToolCall,
  OpenAIChatImagePart,
  OpenAIChatMessage,
  OpenAIChatMessageMeta,
  OpenAIChatOtherPart,
  OpenAIChatOtherToolCall,
  OpenAIChatPartMeta,
  OpenAIChatRefusalPart,
  OpenAIChatSystemMessage,
  OpenAIChatTextPart,
  OpenAIChatToolCall,
  OpenAIChatToolMessage,
  OpenAIChatUserMessage,
  OpenAIChatWire,
} from "./openai-chat-wire.js";
export {
  OpenAIChatAssistantMessageSchema,
  OpenAIChatAudioPartSchema,
  OpenAIChatContentPartSchema,
  OpenAIChatCustomToolCallSchema,
  OpenAIChatDeveloperMessageSchema,
  OpenAIChatFilePartSchema,
  OpenAIChatFunctionMessageSchema,
  OpenAIChatFunctionToolCallSchema,
  OpenAIChatImagePartSchema,
  OpenAIChatMessageSchema,
  OpenAIChatRefusalPartSchema,
  OpenAIChatSystemMessageSchema,
  OpenAIChatTextPartSchema,
  OpenAIChatToolCallSchema,
  OpenAIChatToolMessageSchema,
  OpenAIChatUserMessageSchema,
} from "./openai-chat-wire.js";

/** The OpenAI Chat Completions adapter (see the module comment for every mapping decision). */
export const openaiChatAdapter: Adapter<OpenAIChatWire> = { format: F, parse: parseOpenAIChat, render: renderOpenAIChat };
