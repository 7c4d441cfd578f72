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
  /** Where: `messages[7]` or `messages[7].parts[0]`. */
  path: string;
  /** Index of the message the issue sits on. */
  index: number;
  /**
   * Identity that survives compaction shifting indices: the call id for call/result issues,
   * the message id for message issues, a Responses item's own id where the issue is about the
   * item (the code completes it: issues match on code + key).
   */
  key: string;
}

/** What a rule's check reports; validate() adds the code and the severity. */
export type Finding = Omit<Issue, "code" | "severity">;
