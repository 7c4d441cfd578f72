/**
 * The StepCompactor: keeps the last steps in full, summarises older ones in one line per
 * step or per run of same-category steps, drops the oldest, and keeps failures visible.
 */
import { groupSteps } from "./group-steps.js";
import { badValueError, CtxfoldError, optionsObject, shownValue } from "../errors.js";
import { resolveStepCompactionConfig, type StepCompactionConfig, type StepCompactionInput } from "./config.js";
import { formatKB } from "./format-size.js";
import { specificTerms } from "../model/terms.js";
import { commandHead, oneLine } from "./rules.js";
import { redactSecrets } from "./redact.js";
import type { Summarizer } from "./summarizer.js";

export type { Summarizer };
import type { ReducedStep, ToolCategory } from "./types.js";

/**
 * One line of the compact tier. `id` is a step id (`step_007`) or, for a group, the step compactor's
 * `${first}..${last}` (`step_001..step_005`); `toString()` renders a range of `step_` ids the
 * way the design's examples print them: `[step_001..005] 5 file operations (9.1KB total)`.
 */
export class CompactStep {
  constructor(
    readonly id: string,
    readonly summary: string,
    /** The steps the line stands for, in order. */
    readonly stepIds: string[],
    /** The line reports a failed step (`✗ … failed: …`, or a failed step's own line). */
    readonly failed: boolean,
  ) {}

  toString(): string {
    const first = this.stepIds[0];
    const last = this.stepIds[this.stepIds.length - 1];
    const shortRange = this.stepIds.length > 1 && this.id === `${first}..${last}` && first.startsWith("step_") && last.startsWith("step_");
    return `[${shortRange ? `${first}..${last.slice(5)}` : this.id}] ${this.summary}`;
  }
}

export interface CompactedHistory {
  /** The last steps, in full. */
  recentSteps: ReducedStep[];
  /** The summarised older steps, in chronological order. */
  compactSteps: CompactStep[];
  /** Steps in neither tier (`... (N earlier steps omitted)`). */
  droppedCount: number;
}

export interface CompactOptions {
  /**
   * The most steps the recent and compact tiers cover together (seed: max_steps); older ones are
   * dropped like those beyond maxCompactSteps. For a very long history it also caps the window
   * (seed: `min(max_steps, 30)`).
   * @default none: only the config's limits apply
   */
  maxSteps?: number;
}

export interface CompactAsyncOptions extends CompactOptions {
  summarizer: Summarizer;
  /** @default 30 (the design's max_tokens) */
  targetTokens?: number;
}

/** The step compactor's trigger: compact a history of more than `triggerAbove` (5) steps. */
export function shouldCompact(steps: readonly ReducedStep[], config: StepCompactionInput = {}): boolean {
  return steps.length > resolveStepCompactionConfig(config).triggerAbove;
}

/** A run of ≥ 2 steps waiting for its summary (template or summariser). */
interface Group {
  steps: readonly ReducedStep[];
  category: ToolCategory;
  failures: number;
}

interface Plan {
  recentSteps: ReducedStep[];
  entries: (CompactStep | Group)[];
  droppedCount: number;
}

/**
 * Compacts step histories (the step compactor). Where the design is vague or contradicts itself, this does:
 *
 * 1. Very long history (more than `veryLongAbove`, 100 steps): only the last `maxTotalSteps` (30),
 *    or `min(maxSteps, maxTotalSteps)`, are considered; the rest are dropped ("beyond 100 steps,
 *    old history loses relevance") except, with preserveFailures, their failures: "failed steps
 *    are never dropped, even if old" wins, and each keeps its `✗` line ahead of the window.
 * 2. All considered steps failed: nothing more is dropped; the last `max(5, keepRecent)` stay in
 *    full and every older one gets its own line (the design's `to_compact()`: the step's `summary`).
 *    Neither maxCompactSteps nor maxSteps applies.
 * 3. Otherwise the last `keepRecent` steps (at most maxSteps) stay in full; of the older ones the
 *    last `maxCompactSteps` (and at most `maxSteps − recent`) are summarised, earlier ones dropped.
 *    With preserveFailures a failed step among the dropped is kept as its own
 *    `✗ ${tool} failed: ${error}` line at its chronological place and not counted as dropped.
 * 4. Summarised steps are grouped by groupSteps (consecutive same category; no grouping when the
 *    categories alternate). A single step gives its own line: its `summary`, or the failure line if it
 *    failed. A run of n ≥ 2 gives the design's template (`n file operations (9.1KB total)`,
 *    `n commands executed`, `n searches (R results)`, `nx web`) plus ` (k failed)`; with
 *    preserveFailures each failed step of the run also gets its own `✗` line right after it, so
 *    every failed step of the considered window stays visible by itself (its id then sits in both
 *    lines' stepIds).
 *
 * Every input step is thus in recentSteps, in some line's stepIds, or counted in droppedCount.
 */
export class StepCompactor {
  readonly config: Readonly<StepCompactionConfig>;

  constructor(config: StepCompactionInput = {}) {
    this.config = Object.freeze(resolveStepCompactionConfig(config));
  }

  compact(steps: readonly ReducedStep[], options: CompactOptions = {}): CompactedHistory {
    const plan = this.#plan(steps, options.maxSteps);
    const targets = this.config.groupTargets;
    return {
      recentSteps: plan.recentSteps,
      compactSteps: plan.entries.map((e) => (e instanceof CompactStep ? e : templateLine(e, targets))),
      droppedCount: plan.droppedCount,
    };
  }

  /**
   * The step compactor's semantic compaction: the same history as `compact`, but each group line (n ≥ 2)
   * is the first line of what the summariser answers to the design's prompt. An empty answer, a
   * throw or a rejection falls back to the template line, so this never rejects because of the
   * summariser. Single-step and failure lines stay deterministic. Groups are summarised concurrently.
   */
  async compactAsync(steps: readonly ReducedStep[], options: CompactAsyncOptions): Promise<CompactedHistory> {
    const { summarizer, targetTokens = 30, maxSteps } = optionsObject(options, "{ summarizer, targetTokens?, maxSteps? }") as Partial<CompactAsyncOptions>;
    if (typeof summarizer !== "function") throw badValueError("options.summarizer", "a function", summarizer);
    checkCount(targetTokens, "options.targetTokens");
    const plan = this.#plan(steps, maxSteps);
    const compactSteps = await Promise.all(plan.entries.map((e) => (e instanceof CompactStep ? e : semanticLine(e, summarizer, targetTokens))));
    return { recentSteps: plan.recentSteps, compactSteps, droppedCount: plan.droppedCount };
  }

  #plan(steps: readonly ReducedStep[], maxSteps: number | undefined): Plan {
    if (maxSteps !== undefined) checkCount(maxSteps, "options.maxSteps");
    const { keepRecent, maxCompactSteps, groupSimilar, preserveFailures, maxTotalSteps, veryLongAbove } = this.config;
    let window = steps;
    let droppedCount = 0;
    const entries: (CompactStep | Group)[] = [];
    /** Older steps leave as dropped, failures kept as their own line when preserveFailures. */
    const drop = (older: readonly ReducedStep[]) => {
      for (const s of older) {
        if (preserveFailures && !s.success) entries.push(failureLine(s));
        else droppedCount++;
      }
    };
    if (steps.length > veryLongAbove) {
      const keep = Math.min(maxSteps ?? maxTotalSteps, maxTotalSteps, steps.length);
      window = steps.slice(steps.length - keep);
      drop(steps.slice(0, steps.length - keep));
    }
    const n = window.length;
    if (n > 0 && window.every((s) => !s.success)) {
      const recent = Math.min(n, Math.max(5, keepRecent));
      entries.push(...window.slice(0, n - recent).map((s) => new CompactStep(s.id, s.summary, [s.id], true)));
      return { recentSteps: window.slice(n - recent), entries, droppedCount };
    }
    const budget = maxSteps ?? Infinity;
    const recent = Math.min(n, keepRecent, budget);
    const old = n - recent;
    const summarised = Math.min(old, maxCompactSteps, budget - recent);
    drop(window.slice(0, old - summarised));
    const tier = window.slice(old - summarised, old);
    for (const run of groupSteps(tier, { groupSimilar, noGroupWhenAlternating: true }).runs) {
      const group = tier.slice(run.start, run.start + run.count);
      if (group.length === 1) {
        entries.push(group[0].success ? new CompactStep(group[0].id, group[0].summary, [group[0].id], false) : failureLine(group[0]));
        continue;
      }
      entries.push({ steps: group, category: run.category, failures: run.failures });
      if (preserveFailures) for (const s of group) if (!s.success) entries.push(failureLine(s));
    }
    return { recentSteps: window.slice(old), entries, droppedCount };
  }
}

/** How the section of compact steps starts (the step compactor's prompt format). */
export const kStepSummaryHeading = "Previous actions (summarized):";

/**
 * The step compactor's prompt format (format_for_prompt), byte for byte: the compact section
 * (with the omitted line) only when there are compact steps, then the recent steps with ✓/✗
 * and their observations.
 */
export function formatForPrompt(history: CompactedHistory): string {
  const lines: string[] = [];
  if (history.compactSteps.length > 0) {
    lines.push(kStepSummaryHeading);
    for (const cs of history.compactSteps) lines.push(`  ${cs}`);
    if (history.droppedCount > 0) lines.push(`  ... (${history.droppedCount} earlier steps omitted)`);
    lines.push("");
  }
  if (history.recentSteps.length > 0) {
    lines.push("Recent actions:");
    for (const step of history.recentSteps) lines.push(`  [${step.id}] ${step.success ? "✓" : "✗"} ${step.observation}`);
    lines.push("");
  }
  return lines.join("\n");
}

/** The step compactor's failure line; the observation stands in for an absent or empty error. */
function failureLine(step: ReducedStep): CompactStep {
  return new CompactStep(step.id, `✗ ${step.tool} failed: ${step.error || step.observation}`, [step.id], true);
}

function groupLine(group: Group, summary: string): CompactStep {
  const ids = group.steps.map((s) => s.id);
  return new CompactStep(`${ids[0]}..${ids[ids.length - 1]}`, summary, ids, false);
}

/** Characters of one step's target, and of a group line's targets together, at most. */
const kTargetChars = 60;
const kTargetsChars = 240;

/** What a step worked on, in a few words: its path, its command's head and first file, its query or URL, its tool's arguments. */
export function stepTarget(step: ReducedStep): string {
  const a = step.minimalArgs;
  let t: string;
  if (typeof a.path === "string") t = a.path;
  else if (typeof a.command === "string") {
    const file = specificTerms(a.command).find((x) => !x.startsWith("-") && /[/.]/.test(x) && !/^\d/.test(x));
    t = file ? `${commandHead(a.command)} ${file}` : commandHead(a.command);
  } else if (typeof a.query === "string") t = `'${a.query}'`;
  else if (typeof a.url === "string") t = a.url;
  else t = step.summary.replace(/^Called /, "");
  return oneLine(t, kTargetChars);
}

/** The distinct targets of a group's steps, in order, within kTargetsChars. */
function groupTargets(steps: readonly ReducedStep[]): string {
  const out: string[] = [];
  let chars = 0;
  for (const t of new Set(steps.map(stepTarget))) {
    if (chars + t.length > kTargetsChars) {
      out.push("…");
      break;
    }
    out.push(t);
    chars += t.length + 2;
  }
  return out.join("; ");
}

/** The step compactor's _summarize_group templates; with `targets`, what the steps worked on after them. */
function templateLine(group: Group, targets = false): CompactStep {
  const n = group.steps.length;
  let summary: string;
  if (group.category === "file") summary = `${n} file operations (${formatKB(group.steps.reduce((t, s) => t + (s.size ?? 0), 0))} total)`;
  else if (group.category === "shell") summary = `${n} commands executed`;
  else if (group.category === "search") summary = `${n} searches (${group.steps.reduce((t, s) => t + (s.count ?? 0), 0)} results)`;
  else summary = `${n}x ${group.category}`;
  if (group.failures > 0) summary += ` (${group.failures} failed)`;
  if (targets) summary += `: ${groupTargets(group.steps)}`;
  return groupLine(group, summary);
}

/**
 * The design's semantic_compact prompt (without its Python list repr and indentation): the
 * observations one per line, then the format to follow.
 */
async function semanticLine(group: Group, summarizer: Summarizer, targetTokens: number): Promise<CompactStep> {
  const text = `Summarize these ${group.steps.length} actions in one line:\n${group.steps.map((s) => s.observation).join("\n")}\n\nFormat: <count> <type> operations (<key_outcome>)`;
  let answer: unknown;
  try {
    answer = await summarizer(text, targetTokens, `group:${group.category}`);
  } catch {
    return templateLine(group);
  }
  // The answer goes into the summary as ctxfold's text: redacted like every line it writes.
  const line =
    typeof answer === "string"
      ? redactSecrets(
          answer
            .trim()
            .split(/\r\n|\r|\n/, 1)[0]
            .trim(),
        )
      : "";
  return line ? groupLine(group, line) : templateLine(group);
}

function checkCount(value: number, path: string): void {
  if (!Number.isInteger(value) || value < 0) throw new CtxfoldError("E_BAD_INPUT", `must be a non-negative integer, got ${shownValue(value)}`, { path });
}
