/**
 * The step compactor's configuration, its tuning-table presets and its "Adaptive Compaction"
 * (auto_tune_compaction). The zod schema is the single source of the type and the defaults.
 */
import { z } from "zod";
import { readDeprecatedNames, issueAsGiven, type DeprecatedNames } from "../deprecated-names.js";
import { configError, CtxfoldError, notStringError } from "../errors.js";

const count = (n: number) => z.number().int().nonnegative().default(n);

export const StepCompactionConfig = z.strictObject({
  /**
   * The latest steps kept in full (seed: recent_window); a step is one tool call with its
   * result. "Keep the recent N" has this one name in the tiered compactor's and block
   * compaction's configs too, each in its own unit (tool exchanges, turns); formerly
   * `recentWindow`, still read (see Deprecated names in docs/concepts.md).
   * @default 5
   */
  keepRecent: count(5),
  /** Older steps summarised in the compact tier; earlier ones are dropped (seed: max_compact_steps). @default 20 */
  maxCompactSteps: count(20),
  /** Group consecutive same-category steps into one line (seed: group_similar). @default true */
  groupSimilar: z.boolean().default(true),
  /** Keep every failed step visible with its own `✗` line (seed: preserve_failures). @default true */
  preserveFailures: z.boolean().default(true),
  /** Compact only histories longer than this (seed: "> 5 steps"); read by `shouldCompact`, not by `compact()`. @default 5 */
  triggerAbove: count(5),
  /** Steps considered at all when the history is very long (seed: "limit total history to 30 steps"). @default 30 */
  maxTotalSteps: count(30),
  /** What "very long" means (seed: "> 100 steps"). @default 100 */
  veryLongAbove: count(100),
  /**
   * A group line also names what its steps worked on (`10 commands executed: nl fields.py; …`:
   * paths, command heads, queries), which the design's templates drop. Off: the templates byte
   * for byte.
   * @default false
   */
  groupTargets: z.boolean().default(false),
});
export type StepCompactionConfig = z.infer<typeof StepCompactionConfig>;

/** The step compaction config's deprecated names, each to the name it has now (read by resolveStepCompactionConfig). */
export const kDeprecatedStepNames: DeprecatedNames = Object.freeze({ recentWindow: "keepRecent" });

/** A step compaction config as a caller gives it: any of its fields, under their names or a deprecated one. */
export interface StepCompactionInput extends Partial<StepCompactionConfig> {
  /**
   * keepRecent's former name, read as keepRecent (the same count of steps); giving both with
   * different values is E_BAD_INPUT.
   * @deprecated Use keepRecent.
   * @default none: keepRecent's applies
   */
  recentWindow?: number;
}

export const kDefaultStepCompactionConfig: Readonly<StepCompactionConfig> = Object.freeze(StepCompactionConfig.parse({}));

/**
 * Validates a partial config and fills the defaults; a deprecated name is read as its new one.
 * Throws CtxfoldError E_BAD_INPUT naming the field as given (`config.keepRecent: must be a
 * non-negative integer, got 2.5`) for a bad value or an unknown key (a snake_case `keep_recent`
 * is caught rather than silently ignored).
 */
export function resolveStepCompactionConfig(input: StepCompactionInput = {}, path = "config"): StepCompactionConfig {
  const read = readDeprecatedNames(input, kDeprecatedStepNames, path);
  const r = StepCompactionConfig.safeParse(read);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw configError(issueAsGiven(issue, input, kDeprecatedStepNames), path, {
    options: Object.keys(kDefaultStepCompactionConfig),
    describe: () => (issue.path.length === 0 ? "expected a config object" : mustBe(issue.path[0] as keyof StepCompactionConfig, read)),
  });
}

/** What a bad field of a step compaction config must be, and what it got (every field is flat: a boolean or a count). */
function mustBe(field: keyof StepCompactionConfig, input: Partial<StepCompactionConfig>): string {
  const value = (input as Record<string, unknown>)[field];
  const kind = typeof kDefaultStepCompactionConfig[field] === "boolean" ? "a boolean" : "a non-negative integer";
  const got = typeof value === "string" ? JSON.stringify(value) : String(value);
  return `must be ${kind}, got ${got}`;
}

/** The step compactor's tuning table; `debugging` does not group, to show the exact execution order. */
export const kPresets = Object.freeze({
  "interactive-chat": preset({ keepRecent: 5, maxCompactSteps: 20, groupSimilar: true }),
  "long-research": preset({ keepRecent: 3, maxCompactSteps: 10, groupSimilar: true }),
  "code-analysis": preset({ keepRecent: 5, maxCompactSteps: 15, groupSimilar: true }),
  debugging: preset({ keepRecent: 7, maxCompactSteps: 10, groupSimilar: false }),
});
export type PresetName = keyof typeof kPresets;

function preset(values: Partial<StepCompactionConfig>): Readonly<StepCompactionConfig> {
  return Object.freeze(resolveStepCompactionConfig(values));
}

/** A fresh copy of a preset; CtxfoldError E_BAD_INPUT listing the names for an unknown one. */
export function presetConfig(name: string): StepCompactionConfig {
  if (!Object.hasOwn(kPresets, name)) {
    throw new CtxfoldError("E_BAD_INPUT", `unknown preset ${JSON.stringify(name)} (one of ${Object.keys(kPresets).join(", ")})`, { path: "preset" });
  }
  return { ...kPresets[name as PresetName] };
}

/** Lowercase words of a text, split on everything that is not a letter or a digit. */
export function splitWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

const kDebugWord = /^(?:debug(?:s|ged|ging|ger|gers)?|errors?|erroring|errored)$/;
const kResearchWord = /^(?:research(?:es|ed|ing|er|ers)?|analy[sz](?:e|es|ed|ing|er|ers|is))$/;

/**
 * The step compactor's auto_tune_compaction: a debugging task ("debug", "error") keeps 7 steps in full and
 * does not group; a research task ("research", "analyze") keeps 3 and summarises at most 10;
 * anything else gets the defaults. Unlike the design's substring test, it matches whole words
 * (split on non-alphanumerics, so `error_handler` counts but `terrorism` does not), case-insensitively,
 * with simple inflections: debugging, errors, researching, analyse/analyze/analysis/analyses.
 * Debugging wins when both kinds occur, as in the design's if/elif.
 */
export function autoTuneCompaction(task: string): StepCompactionConfig {
  if (typeof task !== "string") throw notStringError("task", task);
  const words = splitWords(task);
  if (words.some((w) => kDebugWord.test(w))) return { ...kDefaultStepCompactionConfig, keepRecent: 7, groupSimilar: false };
  if (words.some((w) => kResearchWord.test(w))) return { ...kDefaultStepCompactionConfig, keepRecent: 3, maxCompactSteps: 10 };
  return { ...kDefaultStepCompactionConfig };
}
