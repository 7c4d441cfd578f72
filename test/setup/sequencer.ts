// The order test files start in: the longest first, so that a long file never starts last and
// leaves one core to finish it while the other idles (the suite runs one file per core).
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that run longest (each 15-75 s on a loaded 2-core machine; CLI processes, Redis,
 * the dev corpus, 200-step agent loops), longest first. Vitest's own order is by the durations
 * its cache kept from an earlier run, and without one (a fresh clone, CI) by file size, which
 * started the corpus gate, the golden sample and the round trips among the last of 112 files.
 * A file missing here only starts in vitest's order.
 */
const kLongestFirst = [
  "test/cli/compact.test.ts",
  "test/queue/queue.test.ts",
  "test/integrations/ai-sdk.test.ts",
  "test/adapters/roundtrip.test.ts",
  "test/eval/corpus-gate.test.ts",
  "test/tokens/bpe.test.ts",
  "test/policy/corpus.test.ts",
  "test/pool/worker-entry.test.ts",
  "test/queue/confine.test.ts",
  "test/golden.test.ts",
  "test/integrations/requests.test.ts",
  "test/cli/compact-bounds.test.ts",
];

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const at = kLongestFirst.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return at < 0 ? kLongestFirst.length : at;
    };
    // A stable sort: the files not named keep vitest's order after the named ones.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
