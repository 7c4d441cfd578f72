import { CtxfoldError } from "../errors.js";
import { coreFor, type Backend } from "../core/backend.js";
import { groupCategoriesReference, kGroupSimilar, kNoGroupWhenAlternating, kStatusAlternating } from "./group-categories.reference.js";

/** The step compactor's tool categories, in the order their numeric codes take. */
export const kToolCategories = ["file", "shell", "search", "web", "other"] as const;
export type ToolCategory = (typeof kToolCategories)[number];

export interface StepRun {
  /** Index of the run's first step. */
  start: number;
  count: number;
  failures: number;
  category: ToolCategory;
}

export interface GroupStepsOptions {
  /** Group consecutive same-category steps (the step compactor's group_similar). @default true */
  groupSimilar?: boolean;
  /**
   * The step compactor's "alternating tool types" rule: when no two neighbouring steps share a
   * category, do not group. With consecutive grouping this yields the same runs (all of length
   * 1); what it adds is `alternating` in the result, so a compactor renders each step on its own
   * line rather than through a group template. @default true
   */
  noGroupWhenAlternating?: boolean;
  /** Where grouping runs. @default "auto" (WASM, or the TypeScript twin where WebAssembly is unavailable) */
  backend?: Backend | "auto";
}

/**
 * Runs of consecutive same-category steps with their failure counts (the step compactor's
 * grouping, _group_and_compact), computed by the WASM kernel over one byte per step.
 */
export function groupSteps(
  steps: readonly { category: ToolCategory; success: boolean }[],
  options: GroupStepsOptions = {},
): { runs: StepRun[]; alternating: boolean } {
  const packed = new Uint8Array(steps.length);
  for (let i = 0; i < steps.length; i++) {
    const code = kToolCategories.indexOf(steps[i].category);
    if (code < 0) {
      throw new CtxfoldError("E_BAD_CATEGORY", `unknown tool category ${JSON.stringify(steps[i].category)} (one of ${kToolCategories.join(", ")})`, {
        path: `steps[${i}].category`,
      });
    }
    packed[i] = code | (steps[i].success ? 0 : 0x80);
  }
  const flags = ((options.groupSimilar ?? true) ? kGroupSimilar : 0) | ((options.noGroupWhenAlternating ?? true) ? kNoGroupWhenAlternating : 0);
  const core = coreFor(options.backend);
  const r = core ? core.groupCategories(packed, flags) : groupCategoriesReference(packed, flags);
  const runs: StepRun[] = [];
  for (let g = 0; g < r.start.length; g++) {
    runs.push({ start: r.start[g], count: r.count[g], failures: r.failures[g], category: kToolCategories[packed[r.start[g]] & 0x7f] });
  }
  return { runs, alternating: (r.status & kStatusAlternating) !== 0 };
}
