// Compile-time checks of compact()'s typed results as users see them (the built declarations),
// type-checked by typed-results.test.ts with tsc; a line marked @ts-expect-error fails the check if it compiles.
import type { AnthropicForm, CanonicalResult, CompactResult, StageReport } from "../../dist/src/policy/index.js";
import { createCompactor } from "../../dist/src/policy/index.js";
import type { Message } from "../../dist/src/model/schema.js";

/** The caller's own message types, as an SDK would declare them. */
interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_call_id?: string;
}
interface ClaudeMessage {
  role: "user" | "assistant";
  content: string;
}

declare const chat: ChatMessage[];
declare const claude: ClaudeMessage[];
declare const anything: unknown;
declare const canonical: Message[];

export async function checks(): Promise<void> {
  const compactor = createCompactor();
  const a = await compactor.compact(chat, { budget: 8000, format: "openai-chat" });
  const kept: ChatMessage[] = a.messages;
  kept[0].role satisfies ChatMessage["role"];
  // @ts-expect-error the messages are the caller's ChatMessage, not Claude's
  const wrong: ClaudeMessage[] = a.messages;

  const b = await compactor.compact({ system: "be brief", messages: claude }, { budget: 8000, format: "anthropic" });
  const form: AnthropicForm<ClaudeMessage> = b.messages;
  form.messages[0].content satisfies string;

  const c = await compactor.compact(anything, { budget: 8000 });
  c.messages satisfies unknown;
  // @ts-expect-error a detected format's messages are unknown until the caller checks them
  c.messages.length;

  const d = await compactor.session().compact(chat, { budget: 8000, format: "ai-sdk" });
  d satisfies CompactResult<ChatMessage[]>;

  const e = await compactor.compactCanonical(canonical, { budget: 8000 });
  e satisfies CanonicalResult;
  e.messages[0].parts satisfies Message["parts"];
  void [kept, wrong, form];
}

/** Whether two types are the same. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// A stage report's names and numbers, which the stages' registry declares, as a user sees them.
export const stageNames: Same<StageReport["name"], "fits" | "superseded_history" | "tool_args" | "tool_outputs" | "historical_text" | "merge_oldest"> = true;
export const stageNumbers: Same<StageReport["stage"], 0 | 1 | 2 | 3 | 4> = true;
