/**
 * The step compactor's cross-agent compaction (compact_for_spawn): the minimal history a sub-agent gets.
 */
import { CtxfoldError, notStringError } from "../errors.js";
import { StepCompactor, type CompactedHistory } from "./compactor.js";
import { readDeprecatedNames } from "../deprecated-names.js";
import { kDeprecatedStepNames, splitWords, type StepCompactionInput } from "./config.js";
import type { ReducedStep } from "./types.js";

export interface SpawnOptions {
  /** What the sub-agent is asked to do; its words decide which steps are relevant. */
  subGoal: string;
  /** The most steps the sub-agent sees. @default 5 */
  maxSteps?: number;
  /** Keep only the steps related to the sub-goal. @default true */
  relevantOnly?: boolean;
  /** Compaction of the kept steps. @default keepRecent min(3, maxSteps), other defaults as usual */
  config?: StepCompactionInput;
}

const kStopWords = new Set(
  (
    "the and for with from into onto that this these those then than there their them they are was were been being has have had " +
    "not but all any its our your you can will should would could about what which when where how why who whom also some each " +
    "only just more most other such use using via per out over under again once here very own same both few now please"
  ).split(" "),
);

/** The sub-goal's keywords: lowercase words of 3+ characters that are not stop-words. */
function keywords(text: string): Set<string> {
  return new Set(splitWords(text).filter((w) => w.length >= 3 && !kStopWords.has(w)));
}

/** Every string (or number) in an argument value, however nested. */
function argStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string" || typeof value === "number") out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) argStrings(v, out);
  else if (typeof value === "object" && value !== null) for (const v of Object.values(value)) argStrings(v, out);
  return out;
}

/**
 * A step is relevant when a word of its tool name, of its minimalArgs values (paths, commands,
 * queries, urls), of its observation or of its error is a sub-goal keyword (the error is what a
 * failed step's line shows, so it counts too). Values are split on
 * non-alphanumerics like the sub-goal, so a path matches when its basename, the basename's stem
 * or any path segment is a keyword (`src/parser.ts` matches "parser" and "src").
 */
function isRelevant(step: ReducedStep, goal: Set<string>): boolean {
  const texts = [step.tool, step.observation, step.error ?? "", ...argStrings(step.minimalArgs)];
  return texts.some((t) => splitWords(t).some((w) => goal.has(w)));
}

/**
 * The history handed to a sub-agent: at most `maxSteps` steps of the parent's, compacted.
 *
 * With relevantOnly the candidates are the relevant steps (see isRelevant); a sub-goal with no
 * keyword at all ("do it") cannot select anything, so then every step is a candidate. Failed
 * candidates come first (the most recent ones if there are more than maxSteps), then the most
 * recent other candidates fill up to maxSteps; the kept steps stay in chronological order and are
 * compacted with `config` (keepRecent defaults to min(3, maxSteps)). droppedCount also counts the
 * parent's steps that were not kept, so every parent step is shown, summarised or counted.
 */
export function compactForSpawn(steps: readonly ReducedStep[], options: SpawnOptions): CompactedHistory {
  const { subGoal, maxSteps = 5, relevantOnly = true, config = {} } = options;
  if (typeof subGoal !== "string") throw notStringError("options.subGoal", subGoal);
  if (!Number.isInteger(maxSteps) || maxSteps < 0) {
    throw new CtxfoldError("E_BAD_INPUT", `must be a non-negative integer, got ${String(maxSteps)}`, { path: "options.maxSteps" });
  }
  const goal = keywords(subGoal);
  const candidates = steps.map((_, i) => i).filter((i) => !relevantOnly || goal.size === 0 || isRelevant(steps[i], goal));
  const kept = new Set(maxSteps === 0 ? [] : candidates.filter((i) => !steps[i].success).slice(-maxSteps));
  for (let k = candidates.length - 1; k >= 0 && kept.size < maxSteps; k--) kept.add(candidates[k]);
  const selected = [...kept].sort((a, b) => a - b).map((i) => steps[i]);
  const given = readDeprecatedNames(config, kDeprecatedStepNames, "config");
  const compactor = new StepCompactor({ ...given, keepRecent: given.keepRecent ?? Math.min(3, maxSteps) });
  const history = compactor.compact(selected);
  return { ...history, droppedCount: history.droppedCount + steps.length - selected.length };
}
