/** Block compaction over the corpus, each run cut into loops at its user turns. */
import { describe, expect, it } from "vitest";
import { kFormats, openaiChatAdapter } from "../../src/adapters/index.js";
import { DefaultBlockCompaction } from "../../src/block/block.js";
import { sessionFromMessages } from "../../src/block/loops.js";
import { buildContextFromSession, compactSessionLoops } from "../../src/block/orchestration.js";
import { createMemoryStore } from "../../src/store/index.js";
import { newViolations, validate } from "../../src/validate/index.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";

// Every second run of each corpus file: all of them (dev and dev2) took twice as long.
describe.skipIf(!hasCorpus)(`block compaction on the corpus${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`, () => {
  it("build_context_from_session passes the provider validators for every run (no new violation)", () => {
    let multi = 0;
    for (const line of corpusLines({ stride: 2 })) {
      const run = JSON.parse(line) as CorpusRun;
      const messages = openaiChatAdapter.parse(run.messages, { source: run.id });
      const session = sessionFromMessages(run.id, messages);
      if (session.loops.length > 1) multi++;
      const current = session.loops.at(-1)!.id;
      const compacted = compactSessionLoops(session, current, new DefaultBlockCompaction({ store: createMemoryStore() }), { keepRecent: 4 }, 1e9);
      const ctx = buildContextFromSession(compacted, current, {}, 1e9);
      const raw = session.loops.flatMap((l) => l.messages);
      for (const f of kFormats) expect(newViolations(validate(raw, f), validate(ctx, f)), `${run.id} ${f}`).toEqual([]);
    }
    expect(multi).toBeGreaterThan(100);
  });
});
