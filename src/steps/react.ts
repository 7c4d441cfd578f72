import type { Message } from "../model/schema.js";
import { type StepCompactor, shouldCompact } from "./compactor.js";
import { StepReducer, extractSteps, resultText } from "./reducer.js";
import type { ReducedStep } from "./types.js";

/** One ReAct iteration as the step compactor's build_react_prompt sees it. */
export interface ThoughtStep {
  /** 1-based step number. */
  step: number;
  reasoning: string;
  toolCall: { name: string; arguments: string };
  observation: { output: string };
  reducedStep?: ReducedStep;
}

export interface ReactPromptInput {
  systemPrompt: string;
  goal: string;
  availableTools: string;
  steps: readonly ThoughtStep[];
  /** Compacts the history above its trigger. @default none: every step in full */
  compactor?: StepCompactor;
  /** @default true */
  useCompaction?: boolean;
}

/**
 * A step in full, for prompts without compaction. The design calls format_full_step without
 * defining it; this follows step reduction's "Before compaction" example (Step n / Thought / Action /
 * Observation) with the Action written as in the design's detailed recent steps.
 */
export function formatFullStep(step: ThoughtStep): string {
  return `\nStep ${step.step}:\nThought: ${step.reasoning}\nAction: ${step.toolCall.name}(${step.toolCall.arguments})\nObservation: ${step.observation.output}`;
}

/**
 * The step compactor's build_react_prompt for callers that prompt with text: system prompt, goal and
 * tools, then — above the compactor's trigger (more than 5 steps) — the compacted history
 * ("Previous actions (summarized):", the omitted count) and the recent steps in detail, an
 * offloaded observation shown as "(See <ref>)"; otherwise every step in full. The design
 * overwrites the compactor's config with recent_window 3 / max_compact_steps 10 inside the
 * builder; here the compactor's own config is used (pass `presetConfig("long-research")` for
 * the design's values), so one config governs every prompt.
 */
export function buildReactPrompt(input: ReactPromptInput): string {
  const { steps, compactor } = input;
  const parts = [input.systemPrompt, input.goal, input.availableTools];
  const reduced = steps.map((s) => s.reducedStep).filter((s): s is ReducedStep => s !== undefined);
  if ((input.useCompaction ?? true) && compactor && steps.length > 5 && reduced.length > 0 && shouldCompact(reduced, compactor.config)) {
    const history = compactor.compact(reduced);
    if (history.compactSteps.length > 0) {
      parts.push("\nPrevious actions (summarized):");
      for (const cs of history.compactSteps) parts.push(`  ${cs}`);
      if (history.droppedCount > 0) parts.push(`  ... (${history.droppedCount} earlier steps omitted)`);
    }
    if (history.recentSteps.length > 0) {
      parts.push("\nRecent steps (detailed):");
      for (let i = steps.length - history.recentSteps.length; i < steps.length; i++) {
        const step = steps[i];
        parts.push(`\nThought ${step.step}: ${step.reasoning}`);
        parts.push(`Action: ${step.toolCall.name}(${step.toolCall.arguments})`);
        parts.push(step.reducedStep?.outcomeRef ? `Observation: (See ${step.reducedStep.outcomeRef})` : `Observation: ${step.observation.output}`);
      }
    }
  } else {
    for (const step of steps) parts.push(formatFullStep(step));
  }
  return parts.join("\n");
}

/**
 * ThoughtSteps from canonical messages: each tool call with the text of its assistant message
 * as the reasoning (given to the first call of a message; parallel calls after it get ""),
 * its result's text as the observation, and its reduction by `reducer`.
 */
export function thoughtStepsFromMessages(messages: readonly Message[], reducer: StepReducer = new StepReducer()): ThoughtStep[] {
  const { steps } = extractSteps(messages);
  let lastMessage = -1;
  return steps.map((s, i) => {
    const m = messages[s.callMessage];
    const reasoning =
      s.callMessage === lastMessage
        ? ""
        : m.parts
            .filter((p) => p.type === "text")
            .map((p) => (p as { text: string }).text)
            .join("\n");
    lastMessage = s.callMessage;
    return {
      step: i + 1,
      reasoning,
      toolCall: { name: s.call.name, arguments: s.call.args },
      observation: { output: s.result ? resultText(s.result.content) : "" },
      reducedStep: reducer.reduceStep(s),
    };
  });
}
