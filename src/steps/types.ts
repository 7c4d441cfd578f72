import type { ToolCategory } from "./group-steps.js";

export type { ToolCategory };

/**
 * What a reduction rule extracted from one tool call and its result: step reduction's
 * `{tool, minimal_args, observation, outcome_ref}` plus success, the error head and the facts
 * the compaction templates of step reduction and the step compactor need (sizes, counts, exit codes).
 */
export interface ReducedStep {
  /** `step_001`, `step_002`, … in the order the reducer saw the steps (step reduction's step_id). */
  id: string;
  /** The tool name as the agent called it. */
  tool: string;
  /** The step compactor's grouping category. */
  category: ToolCategory;
  /**
   * What the step did, for templates and grouping: read, write, list, shell, search, navigate,
   * or `call` for any other tool.
   */
  action: StepAction;
  /** The arguments needed to resume (path, command, query, url), never written content. */
  minimalArgs: Record<string, unknown>;
  /** One line that replaces the result (step reduction's observation), redacted. */
  observation: string;
  /** Step reduction's compaction template line ("Read src/main.py (2.5KB)"), redacted: to_compact(). */
  summary: string;
  /** Where the full result was offloaded (`store.get(ref)` gives its exact bytes), or null. */
  outcomeRef: string | null;
  success: boolean;
  /** The head of the error output when the step failed, redacted. */
  error?: string;
  /** Bytes of the content read, written or returned (UTF-8). */
  size?: number;
  /** Results a search returned or entries a listing held. */
  count?: number;
  /** Exit code of a shell command when the output or result says so. */
  exitCode?: number;
  /** Lines of output. */
  lines?: number;
  /** The tool call's id, and where call and result sit in the message list (when reduced from messages). */
  callId?: string;
  callMessage?: number;
  resultMessage?: number;
}

export type StepAction = "read" | "write" | "list" | "shell" | "search" | "navigate" | "call";
