import type { TieredSettings } from "../config.js";
import type { SkipReason, Tier } from "../types.js";
import type { StageKit, Work } from "../work.js";

/** What the stages of one call read besides the work. */
export interface StageContext {
  readonly settings: TieredSettings;
  readonly tier: Tier;
  /** Tool steps at the end that stages 1–3 leave whole (at most one in the critical tier). */
  readonly preserve: number;
  /** The plan (stages/plan.ts), made once after stage 0; absent while stage 0 has its turn. */
  readonly plan?: Plan;
}

/** What the runner decides once, after stage 0, before every other stage. */
export interface Plan {
  /** Stage 3 will run, and even the best case of stages 1 and 2 would not reach the target: their work would be replaced. */
  readonly tracesSuperseded: boolean;
}

/**
 * One stage of the tiered pipeline. The runner (pipeline.ts) gives the stages of the registry
 * (stages/index.ts) their turn in its order, each while the work is above its target and its
 * `when` holds (always, without one), and reports every turn (compaction_stage, timed): the
 * stage skipped whole near the deadline unless it is `essential`, or for the reason its `skip`
 * gives, or else `run` with the kit counting into its report. A stage writes the work only
 * through the kit; one that needs another's behaviour calls that stage's function with its own
 * arguments. Its `stage` and `name` are its reports' (StageReport's unions come from the registry).
 */
export interface Stage<N extends string = string, S extends number = number> {
  readonly stage: S;
  readonly name: N;
  /** It runs even when the deadline is near (cheap, and what the budget most depends on). */
  readonly essential: boolean;
  /** Whether it has a turn, the work being above its target; without it, it always has. */
  when?(work: Work, ctx: StageContext): boolean;
  /** Why it does nothing this turn (reported as the one skip), or undefined to run. */
  skip?(work: Work, ctx: StageContext): SkipReason | undefined;
  run(kit: StageKit, work: Work, ctx: StageContext): Promise<void> | void;
}

/** A stage's definition with its name and number as literal types (the registry derives StageReport's unions from them). */
export function defineStage<N extends string, S extends number>(stage: Stage<N, S>): Stage<N, S> {
  return stage;
}
