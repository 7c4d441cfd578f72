/**
 * Test data: seeded generators of agent runs (tool calls and outputs, failures, reasoning,
 * steering, parallel calls) and of text of seven kinds, for the project's tests, benches and demo
 * (not shipped in the package). Deterministic: the same seed gives the same runs.
 */
export { generateRun, generateRuns, kFileReadChars } from "./run.js";
export type { GenerateRunOptions, GeneratedRun } from "./run.js";
export { createRng, syntheticText, TEXT_KINDS } from "./text.js";
export type { Rng, TextKind } from "./text.js";
