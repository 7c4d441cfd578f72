import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/setup/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup/fail-on-console.ts"],
    globalSetup: ["test/setup/build-dist.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One test file per core. Vitest's own default leaves a core to its main process (cores − 1),
    // which on a 2-core machine runs the files one at a time: the suite then takes the sum of its
    // files, while most of a file's time goes to child processes and I/O the other core could
    // overlap.
    maxWorkers: Math.max(2, availableParallelism()),
    sequence: { sequencer: LongestFirstSequencer },
  },
});
