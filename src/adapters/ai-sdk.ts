/**
 * The Vercel AI SDK adapter: `ModelMessage[]` of AI SDK 5 (the `messages` of generateText /
 * streamText), also reading the `CoreMessage` field names of AI SDK 4.
 *
 * Decisions (where the SDK leaves a choice):
 * - Versions. AI SDK 4 wrote tool-call `args`, tool-result `result` (+ `isError`,
 *   `experimental_content`), image/file `mimeType`, reasoning `signature` and a
 *   `redacted-reasoning` part; AI SDK 5 writes `input`, `output: { type, value }`, `mediaType`
 *   and keeps the Anthropic signature in `providerOptions.anthropic`. Both parse; every part
 *   renders back in the version it was parsed in (a hint in its meta). Canonical parts from other
 *   formats render as AI SDK 5.
 * - Tool messages. One wire tool message may hold several results; parse makes one canonical
 *   tool message per part (ids `m<i>.<k>` when there are several) and marks the later ones
 *   `joinPrev`, so a rebuild merges them back. Canonical tool messages without that hint (every
 *   other format's) render one wire message each: consecutive tool messages are never merged.
 * - Tool results. `text` / `error-text` become one text part, `json` / `error-json` one text part
 *   holding the JSON (hint `output: "json"`, so the same value renders back while the text still
 *   parses), `content` its items, an unknown output type an opaque part. `isError` is set by the
 *   `error-*` types. A canonical result with several text parts and `isError` renders as
 *   `error-text` of the texts joined by "\n"; with non-text parts it renders as `content` and the
 *   error flag is lost (AI SDK 5 has no error form for rich content).
 * - Tool names. `toolName` is required by the SDK; a canonical result without a name takes the
 *   name of the matching call earlier in the conversation (scanned back by call id), else
 *   "unknown". Such an invented name is marked on the wire part (a non-enumerable symbol, like
 *   kRawArgs), and parse drops a name so marked: an in-memory round trip gives back a result
 *   without a name, so no other format gains one. A JSON round trip keeps the name.
 * - System messages hold a string in the SDK: several canonical text parts are joined with "\n";
 *   opaque parts there are dropped and any other part is E_UNKNOWN_PART at render.
 * - Reasoning. `signature` / `redacted` of the canonical part are read from
 *   `providerOptions.anthropic.signature` / `.redactedData` (or AI SDK 4's `signature` /
 *   `redacted-reasoning`); the wire fields stay in meta and render back unchanged. A canonical
 *   part from another format renders its signature / redacted data in those same
 *   `providerOptions.anthropic` fields, which is where the SDK's Anthropic provider reads them;
 *   nothing is invented when the canonical part has none.
 * - Unknown part types (AI SDK 6's tool approvals, provider extensions), result items and
 *   tool-result output types are carried as opaque parts (meta `wire: true`) and rendered back
 *   unchanged. Opaque parts from other formats are dropped: they are that provider's own data.
 * - Media parts render back as the image / file part they were. A media part from another format
 *   renders as an image part (a file part when its media type is not `image/*`) holding the
 *   base64 text or URL that `mediaSource` (media.ts) reads out of its data, else the data as is.
 * - Unknown roles are E_UNKNOWN_ROLE: the canonical model has no place for them.
 */
import { parseAiSdk } from "./ai-sdk-parse.js";
import { renderAiSdk } from "./ai-sdk-render.js";
import { type AiSdkWire, F } from "./ai-sdk-wire.js";
import type { Adapter } from "./common.js";

export type {
  AiSdkAssistantMessage,
  AiSdkFilePart,
  AiSdkHints,
  AiSdkImagePart,
  AiSdkMessage,
  AiSdkOtherPart,
  AiSdkPart,
  AiSdkProviderOptions,
  AiSdkReasoningPart,
  AiSdkRedactedReasoningPart,
  AiSdkResultItem,
  AiSdkSystemMessage,
  AiSdkTextPart,
  AiSdkToolCallPart,
  AiSdkToolMessage,
  AiSdkToolResultOutput,
  AiSdkToolResultPart,
  AiSdkUserMessage,
  AiSdkWire,
} from "./ai-sdk-wire.js";
export {
  AiSdkMessageSchema,
  AiSdkPartSchema,
  AiSdkProviderOptionsSchema,
  AiSdkResultItemSchema,
  AiSdkToolResultOutputSchema,
  kInventedToolName,
} from "./ai-sdk-wire.js";

/** The Vercel AI SDK `ModelMessage[]` adapter (format "ai-sdk"). */
export const aiSdkAdapter: Adapter<AiSdkWire> = { format: F, parse: parseAiSdk, render: renderAiSdk };
