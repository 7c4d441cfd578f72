import { historicalTextStage } from "./history.js";
import { mergeOldestStage } from "./merge.js";
import type { Stage } from "./stage.js";
import { supersededHistoryStage } from "./superseded.js";
import { toolArgsStage } from "./tool-args.js";
import { toolOutputsStage } from "./tool-outputs.js";

/**
 * The tiered pipeline's stages, in the order the runner (pipeline.ts) gives them their turn
 * (stage numbers ascending, names unique). Adding a stage is its own file, defining it
 * (stages/stage.ts's contract), and its line here: StageReport's names and numbers follow.
 */
export const kStages = [supersededHistoryStage, toolArgsStage, toolOutputsStage, historicalTextStage, mergeOldestStage] as const;

/** One stage of the registry, with its own name and number. */
export type RegisteredStage = (typeof kStages)[number];

/** Each stage's name with its number. */
type NumbersByName<T extends readonly Stage[]> = { [D in T[number] as D["name"]]: D["stage"] };

// The registry's names and numbers become StageReport's (types.ts), which imports nothing from here.
declare module "../types.js" {
  interface StageNumbers extends NumbersByName<typeof kStages> {}
}
