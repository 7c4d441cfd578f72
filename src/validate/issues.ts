/**
 * What the validators report: the issue codes, an Issue (a rule violation with where it sits and
 * the key that survives compaction) and a Finding (what a rule's check returns, before
 * validate() adds the code and the severity). Apart from the rules so that the checks in their
 * own modules (pairing, server-side context) import these without importing the rules table.
 */
export type Severity = "error" | "warning";

export const kIssueCodes = [
  "TOOL_RESULT_ORPHAN",
  "TOOL_CALL_UNANSWERED",
  "TOOL_CALL_PENDING",
  "TOOL_RESULT_DUPLICATE",
  "DUPLICATE_CALL_ID",
  "DUPLICATE_MESSAGE_ID",
  "TOOL_RESULT_NOT_FIRST",
  "FIRST_NOT_USER",
  "SYSTEM_NOT_FIRST",
  "ROLE_ALTERNATION",
  "THINKING_DROPPED",
  "REASONING_SIGNATURE_MISSING",
  "EMPTY_MESSAGE",
  "EMPTY_TEXT",
  "COMPACTION_MISPLACED",
  "COMPACTION_TRIGGER_NOT_LAST",
  "REASONING_WITHOUT_FOLLOWER",
] as const;
export type IssueCode = (typeof kIssueCodes)[number];

/** One rule violation found in a transcript. */
export interface Issue {
  code: IssueCode;
  severity: Severity;
  /** A sentence naming the message and call ids involved. */
  message: string;
  /**
   * Where, in the input's own shape when the messages are those an adapter's parse returned (all
   * of them, or the first n, untouched): the field a user finds in their file, such as
   * `messages[29].tool_calls[0]` (an OpenAI Chat call), `messages[30]` (its tool message),
   * `messages[3].content[1]` (an Anthropic block), `system[0]`, `messages[7]` (a Responses item).
   * Otherwise (a compaction's output, messages built by hand) the canonical path, as
   * `canonicalPath`. adapters/input-paths.ts has each format's names.
   */
  path: string;
  /** Where in the canonical messages: `messages[7]` or `messages[7].parts[0]` (what `index` counts). */
  canonicalPath: string;
  /** Index of the message the issue sits on, in the canonical messages. */
  index: number;
  /**
   * Identity that survives compaction shifting indices: the call id for call/result issues,
   * the message id for message issues, a Responses item's own id where the issue is about the
   * item (the code completes it: issues match on code + key).
   */
  key: string;
}

/**
 * What a rule's check reports: `path` is the canonical path, and `part` the index of the part it
 * names, if any. validate() adds the code and the severity, and names the place in the input's
 * shape (Issue's `path`, the canonical one becoming `canonicalPath`).
 */
export type Finding = Omit<Issue, "code" | "severity" | "canonicalPath"> & { part?: number };
