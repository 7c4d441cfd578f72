import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { errorOf } from "../helpers.js";
import {
  autoTuneCompaction,
  compactForSpawn,
  CompactStep,
  formatForPrompt,
  formatKB,
  type kDefaultStepCompactionConfig,
  kPresets,
  presetConfig,
  shouldCompact,
  StepCompactor,
  type CompactedHistory,
  type ReducedStep,
  type Summarizer,
  type ToolCategory,
} from "../../src/steps/index.js";

const kCategory: Record<string, ToolCategory> = {
  "fs:read_file": "file",
  "fs:write_file": "file",
  "shell:run": "shell",
  "web:search": "search",
  "browser:navigate": "web",
};

interface StepOpts {
  success?: boolean;
  error?: string;
  size?: number;
  count?: number;
  observation?: string;
  summary?: string;
  minimalArgs?: Record<string, unknown>;
}

function makeStep(id: string | number, tool: string, opts: StepOpts = {}): ReducedStep {
  const sid = typeof id === "number" ? stepId(id) : id;
  return {
    id: sid,
    tool,
    category: kCategory[tool] ?? "other",
    action: "call",
    minimalArgs: opts.minimalArgs ?? {},
    observation: opts.observation ?? `${tool} observation ${sid}`,
    summary: opts.summary ?? `${tool} summary ${sid}`,
    outcomeRef: null,
    success: opts.success ?? true,
    ...(opts.error !== undefined ? { error: opts.error } : {}),
    ...(opts.size !== undefined ? { size: opts.size } : {}),
    ...(opts.count !== undefined ? { count: opts.count } : {}),
  };
}

const stepId = (i: number) => `step_${String(i).padStart(3, "0")}`;
/** Steps numbered from `from`, one per tool in `tools`. */
const seq = (tools: string[], from = 1, opts: StepOpts = {}) => tools.map((t, i) => makeStep(from + i, t, opts));
const lines = (h: CompactedHistory) => h.compactSteps.map(String);
const ids = (steps: readonly ReducedStep[]) => steps.map((s) => s.id);

describe("seed 000 unit tests, ported", () => {
  // The seed's test_compaction_splits_recent expects 7 compact_steps for 7 consecutive
  // fs:read_file steps, yet group_similar defaults to True, which groups them into one line.
  // Ported as: 3 recent (last step_010), the 7 older steps covered by one "7 file operations"
  // entry; the seed's count of 7 holds with groupSimilar false.
  it("test_compaction_splits_recent (grouping on: one entry covering the 7 older steps)", () => {
    const steps = Array.from({ length: 10 }, (_, i) => makeStep(i + 1, "fs:read_file", { size: 1000 }));
    const history = new StepCompactor({ keepRecent: 3 }).compact(steps);
    expect(history.recentSteps).toHaveLength(3);
    expect(history.recentSteps[history.recentSteps.length - 1].id).toBe("step_010");
    expect(history.compactSteps).toHaveLength(1);
    expect(history.compactSteps[0].summary).toBe("7 file operations (7.0KB total)");
    expect(history.compactSteps[0].stepIds).toEqual(ids(steps.slice(0, 7)));
    expect(history.droppedCount).toBe(0);
  });

  it("test_compaction_splits_recent (groupSimilar false: exactly 7 entries, as the seed asserts)", () => {
    const steps = Array.from({ length: 10 }, (_, i) => makeStep(i + 1, "fs:read_file"));
    const history = new StepCompactor({ keepRecent: 3, groupSimilar: false }).compact(steps);
    expect(history.recentSteps).toHaveLength(3);
    expect(history.compactSteps).toHaveLength(7);
    expect(lines(history)[0]).toBe("[step_001] fs:read_file summary step_001");
  });

  // The seed's test_grouping_file_operations has 4 steps with recent_window=1, but its comment
  // counts "3 file ops grouped, 1 shell separate, 1 recent" (5 steps). Ported with a fifth,
  // recent step so the shell step stays in the compact tier: 2 entries, the first the file group.
  it("test_grouping_file_operations (with the fifth, recent step its comment counts)", () => {
    const steps = seq(["fs:read_file", "fs:read_file", "fs:write_file", "shell:run", "web:search"]);
    const history = new StepCompactor({ keepRecent: 1, groupSimilar: true }).compact(steps);
    expect(history.compactSteps).toHaveLength(2);
    expect(String(history.compactSteps[0])).toContain("3 file operations");
    expect(String(history.compactSteps[1])).toBe("[step_004] shell:run summary step_004");
    expect(ids(history.recentSteps)).toEqual(["step_005"]);
  });
});

describe("recent window", () => {
  it("keeps everything in full when the window is larger than the history", () => {
    const steps = seq(["shell:run", "shell:run", "web:search"]);
    const history = new StepCompactor({ keepRecent: 10 }).compact(steps);
    expect(history).toEqual({ recentSteps: steps, compactSteps: [], droppedCount: 0 });
  });

  it("window 0 puts every step in the compact tier", () => {
    const steps = seq(["shell:run", "shell:run", "web:search"]);
    const history = new StepCompactor({ keepRecent: 0 }).compact(steps);
    expect(history.recentSteps).toEqual([]);
    expect(lines(history)).toEqual(["[step_001..002] 2 commands executed", "[step_003] web:search summary step_003"]);
  });

  it("an empty history is empty", () => {
    expect(new StepCompactor().compact([])).toEqual({ recentSteps: [], compactSteps: [], droppedCount: 0 });
  });

  it("returns copies: mutating the result leaves the input alone", () => {
    const steps = seq(["shell:run", "shell:run"]);
    new StepCompactor().compact(steps).recentSteps.pop();
    expect(steps).toHaveLength(2);
  });
});

describe("group templates (seed 000's _summarize_group)", () => {
  const compactOld = (steps: ReducedStep[], config = {}) => new StepCompactor({ keepRecent: 1, ...config }).compact([...steps, makeStep(999, "other:tool")]);

  it("file: count and KB total; the seed's After Grouping example", () => {
    const steps = [
      makeStep(1, "fs:read_file", { size: 2500 }),
      makeStep(2, "fs:read_file", { size: 1200 }),
      makeStep(3, "fs:read_file", { size: 800 }),
      makeStep(4, "fs:read_file", { size: 3100 }),
      makeStep(5, "fs:read_file", { size: 1500 }),
      makeStep(6, "shell:run"),
      makeStep(7, "shell:run"),
      makeStep(8, "web:search", { count: 15, summary: "Searched 'Python best practices' → 15 results" }),
    ];
    expect(lines(compactOld(steps))).toEqual([
      "[step_001..005] 5 file operations (9.1KB total)",
      "[step_006..007] 2 commands executed",
      "[step_008] Searched 'Python best practices' → 15 results",
    ]);
  });

  it("file: a missing size counts 0, sizes round to one decimal", () => {
    const steps = [makeStep(1, "fs:write_file", { size: 1050 }), makeStep(2, "fs:read_file")];
    expect(lines(compactOld(steps))[0]).toBe("[step_001..002] 2 file operations (1.1KB total)");
  });

  it("search: count and the sum of results", () => {
    const steps = [makeStep(1, "web:search", { count: 10 }), makeStep(2, "web:search", { count: 32 }), makeStep(3, "web:search")];
    expect(lines(compactOld(steps))[0]).toBe("[step_001..003] 3 searches (42 results)");
  });

  it("web and other: `Nx category`", () => {
    expect(lines(compactOld(seq(["browser:navigate", "browser:navigate"])))[0]).toBe("[step_001..002] 2x web");
    expect(lines(compactOld(seq(["db:query", "mail:send", "db:query"])))[0]).toBe("[step_001..003] 3x other");
  });

  it("failed suffix on the group line, then each failure on its own line", () => {
    const steps = [makeStep(1, "shell:run"), makeStep(2, "shell:run", { success: false, error: "exit 2: no such file" }), makeStep(3, "shell:run")];
    const history = compactOld(steps);
    expect(lines(history)).toEqual(["[step_001..003] 3 commands executed (1 failed)", "[step_002] ✗ shell:run failed: exit 2: no such file"]);
    expect(history.compactSteps.map((c) => c.failed)).toEqual([false, true]);
    expect(history.compactSteps[0].id).toBe("step_001..step_003");
  });

  it("range rendering shortens only `step_` ranges", () => {
    expect(String(new CompactStep("a1..b2", "x", ["a1", "b2"], false))).toBe("[a1..b2] x");
    expect(String(new CompactStep("step_001..step_012", "x", ["step_001", "step_012"], false))).toBe("[step_001..012] x");
  });

  it("formatKB: KB with one decimal, 1000 bytes each", () => {
    expect([formatKB(0), formatKB(49), formatKB(50), formatKB(9100), formatKB(1_523_400)]).toEqual(["0.0KB", "0.0KB", "0.1KB", "9.1KB", "1523.4KB"]);
  });
});

describe("failure preservation", () => {
  it("a single failed step gets the failure line; the observation stands in for a missing error", () => {
    const steps = [makeStep(1, "shell:run", { success: false, observation: "pytest: exit 1" }), makeStep(2, "web:search"), makeStep(3, "fs:read_file")];
    expect(lines(new StepCompactor({ keepRecent: 1 }).compact(steps))).toEqual([
      "[step_001] ✗ shell:run failed: pytest: exit 1",
      "[step_002] web:search summary step_002",
    ]);
  });

  it("failures among the dropped keep their place and are not counted", () => {
    const steps = [
      ...seq(["shell:run", "shell:run"]),
      makeStep(3, "fs:write_file", { success: false, error: "EACCES" }),
      ...seq(["shell:run", "shell:run", "web:search", "web:search", "fs:read_file"], 4),
    ];
    const history = new StepCompactor({ keepRecent: 1, maxCompactSteps: 2 }).compact(steps);
    expect(lines(history)).toEqual(["[step_003] ✗ fs:write_file failed: EACCES", "[step_006..007] 2 searches (0 results)"]);
    expect(history.droppedCount).toBe(4);
  });

  it("preserveFailures false: no ✗ lines, failures are dropped like the rest, the group still counts them", () => {
    const steps = [
      makeStep(1, "fs:write_file", { success: false, error: "EACCES" }),
      makeStep(2, "shell:run"),
      makeStep(3, "shell:run", { success: false, error: "boom" }),
      makeStep(4, "fs:read_file"),
    ];
    const history = new StepCompactor({ keepRecent: 1, maxCompactSteps: 2, preserveFailures: false }).compact(steps);
    expect(lines(history)).toEqual(["[step_002..003] 2 commands executed (1 failed)"]);
    expect(history.droppedCount).toBe(1);
  });

  it("every failed step of the considered window is visible on its own (property)", () => {
    const tools = Object.keys(kCategory).concat("db:query");
    const arbStep = fc.record({ tool: fc.constantFrom(...tools), success: fc.boolean() });
    const arbConfig = fc.record({
      keepRecent: fc.nat(8),
      maxCompactSteps: fc.nat(12),
      groupSimilar: fc.boolean(),
      preserveFailures: fc.boolean(),
      veryLongAbove: fc.nat(40),
      maxTotalSteps: fc.nat(30),
    });
    fc.assert(
      fc.property(fc.array(arbStep, { maxLength: 60 }), arbConfig, fc.option(fc.nat(25), { nil: undefined }), (specs, config, maxSteps) => {
        const steps = specs.map((s, i) => makeStep(i + 1, s.tool, { success: s.success, error: `e${i + 1}` }));
        const history = new StepCompactor(config).compact(steps, { maxSteps });
        // Accounting: every step is recent, covered by a line, or counted dropped, exactly once.
        const shown = new Set([...ids(history.recentSteps), ...history.compactSteps.flatMap((c) => c.stepIds)]);
        expect(shown.size + history.droppedCount).toBe(steps.length);
        expect(ids(history.recentSteps)).toEqual(ids(steps.slice(steps.length - history.recentSteps.length)));
        // Chronological order of the compact tier.
        const first = history.compactSteps.map((c) => Number(c.stepIds[0].slice(5)));
        expect(first).toEqual([...first].sort((a, b) => a - b));
        // Failures of the considered window each keep a line of their own.
        const window =
          steps.length > config.veryLongAbove
            ? steps.slice(Math.max(0, steps.length - Math.min(maxSteps ?? config.maxTotalSteps, config.maxTotalSteps)))
            : steps;
        if (config.preserveFailures) {
          const own = new Set([...ids(history.recentSteps), ...history.compactSteps.filter((c) => c.failed).flatMap((c) => c.stepIds)]);
          for (const s of window) if (!s.success) expect(own.has(s.id)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("edge cases", () => {
  it("all steps failed: nothing dropped, the last 5 in full, each older step on its own line", () => {
    const steps = Array.from({ length: 12 }, (_, i) => makeStep(i + 1, "shell:run", { success: false, error: "exit 1" }));
    const history = new StepCompactor({ keepRecent: 3, maxCompactSteps: 2 }).compact(steps, { maxSteps: 4 });
    expect(ids(history.recentSteps)).toEqual(ids(steps.slice(7)));
    expect(lines(history)).toEqual(steps.slice(0, 7).map((s) => `[${s.id}] ${s.summary}`));
    expect(history.compactSteps.every((c) => c.failed)).toBe(true);
    expect(history.droppedCount).toBe(0);
  });

  it("all steps failed: a recent window larger than 5 wins", () => {
    const steps = Array.from({ length: 12 }, (_, i) => makeStep(i + 1, "shell:run", { success: false }));
    const history = new StepCompactor({ keepRecent: 7 }).compact(steps);
    expect(history.recentSteps).toHaveLength(7);
    expect(history.compactSteps).toHaveLength(5);
  });

  it("more than 100 steps: only the last 30 are considered, but failures before them keep their line", () => {
    const steps = Array.from({ length: 120 }, (_, i) => makeStep(i + 1, i % 2 ? "shell:run" : "web:search", { success: i !== 3 }));
    const history = new StepCompactor().compact(steps);
    expect(ids(history.recentSteps)).toEqual(ids(steps.slice(115)));
    // 30 considered: 5 recent, 20 summarised, 5 dropped; plus the 90 before them, of which the failed step_004 stays.
    expect(history.compactSteps.flatMap((c) => c.stepIds)).toEqual(["step_004", ...ids(steps.slice(95, 115))]);
    expect(history.droppedCount).toBe(94);
    expect(lines(history)[0]).toMatch(/^\[step_004\] ✗ shell:run failed: /);
    const lax = new StepCompactor({ preserveFailures: false }).compact(steps);
    expect(lax.droppedCount).toBe(95);
    expect(lines(lax).some((l) => l.includes("step_004"))).toBe(false);
  });

  it("more than 100 steps with maxSteps: the window is min(maxSteps, 30)", () => {
    const steps = Array.from({ length: 150 }, (_, i) => makeStep(i + 1, "shell:run"));
    const history = new StepCompactor().compact(steps, { maxSteps: 10 });
    expect(ids(history.recentSteps)).toEqual(ids(steps.slice(145)));
    expect(lines(history)).toEqual(["[step_141..145] 5 commands executed"]);
    expect(history.droppedCount).toBe(140);
  });

  it("exactly 100 steps is not very long", () => {
    const steps = Array.from({ length: 100 }, (_, i) => makeStep(i + 1, "shell:run"));
    const history = new StepCompactor().compact(steps);
    expect(history.droppedCount).toBe(75);
    expect(lines(history)).toEqual(["[step_076..095] 20 commands executed"]);
  });

  it("alternating categories: no grouping, each step its own line", () => {
    const steps = seq(["fs:read_file", "web:search", "fs:read_file", "web:search", "fs:read_file", "shell:run"]);
    const history = new StepCompactor({ keepRecent: 1 }).compact(steps);
    expect(lines(history)).toEqual(steps.slice(0, 5).map((s) => `[${s.id}] ${s.summary}`));
  });

  it("one repeated neighbour is enough to group again", () => {
    const steps = seq(["fs:read_file", "web:search", "web:search", "fs:read_file", "shell:run"]);
    expect(lines(new StepCompactor({ keepRecent: 1 }).compact(steps))).toEqual([
      "[step_001] fs:read_file summary step_001",
      "[step_002..003] 2 searches (0 results)",
      "[step_004] fs:read_file summary step_004",
    ]);
  });
});

describe("dropping", () => {
  it("maxCompactSteps drops the oldest and the prompt says how many", () => {
    const steps = Array.from({ length: 20 }, (_, i) => makeStep(i + 1, "shell:run"));
    const history = new StepCompactor({ keepRecent: 3, maxCompactSteps: 4 }).compact(steps);
    expect(lines(history)).toEqual(["[step_014..017] 4 commands executed"]);
    expect(history.droppedCount).toBe(13);
    expect(formatForPrompt(history)).toContain("\n  ... (13 earlier steps omitted)\n");
  });

  it("maxSteps caps recent + compact tiers together", () => {
    const steps = Array.from({ length: 20 }, (_, i) => makeStep(i + 1, "shell:run"));
    const eight = new StepCompactor().compact(steps, { maxSteps: 8 });
    expect([eight.recentSteps.length, lines(eight), eight.droppedCount]).toEqual([5, ["[step_013..015] 3 commands executed"], 12]);
    const three = new StepCompactor().compact(steps, { maxSteps: 3 });
    expect([ids(three.recentSteps), three.compactSteps.length, three.droppedCount]).toEqual([["step_018", "step_019", "step_020"], 0, 17]);
  });
});

describe("formatForPrompt (seed 000's format_for_prompt, byte-exact)", () => {
  // Seed-style example: 8 dropped, 5 file ops (12.3KB), 5 searches (73 results), 3 commands (1 failed), 3 recent.
  const build = () => [
    ...Array.from({ length: 8 }, (_, i) => makeStep(i + 1, "shell:run")),
    ...[2500, 3100, 1700, 4000, 1000].map((size, i) => makeStep(9 + i, "fs:read_file", { size })),
    ...[15, 20, 8, 18, 12].map((count, i) => makeStep(14 + i, "web:search", { count })),
    makeStep(19, "shell:run"),
    makeStep(20, "shell:run", { success: false, error: "exit 1: 3 tests failed" }),
    makeStep(21, "shell:run"),
    makeStep(22, "fs:read_file", { observation: "Read analysis.py (2.1KB, Python)" }),
    makeStep(23, "web:search", { observation: "Searched 'error handling patterns' → 12 results" }),
    makeStep(24, "browser:navigate", { success: false, observation: "Visited best-practices.md (5KB text)" }),
  ];

  it("renders both sections", () => {
    const history = new StepCompactor({ keepRecent: 3, maxCompactSteps: 13, preserveFailures: false }).compact(build());
    expect(formatForPrompt(history)).toBe(
      "Previous actions (summarized):\n" +
        "  [step_009..013] 5 file operations (12.3KB total)\n" +
        "  [step_014..018] 5 searches (73 results)\n" +
        "  [step_019..021] 3 commands executed (1 failed)\n" +
        "  ... (8 earlier steps omitted)\n" +
        "\n" +
        "Recent actions:\n" +
        "  [step_022] ✓ Read analysis.py (2.1KB, Python)\n" +
        "  [step_023] ✓ Searched 'error handling patterns' → 12 results\n" +
        "  [step_024] ✗ Visited best-practices.md (5KB text)\n",
    );
  });

  it("with preserveFailures the failure follows its group", () => {
    const history = new StepCompactor({ keepRecent: 3, maxCompactSteps: 13 }).compact(build());
    expect(formatForPrompt(history)).toContain(
      "  [step_019..021] 3 commands executed (1 failed)\n  [step_020] ✗ shell:run failed: exit 1: 3 tests failed\n  ... (8 earlier steps omitted)\n",
    );
  });

  it("sections appear only when they have lines; the omitted line only with compact steps (as in the seed)", () => {
    const steps = seq(["shell:run", "shell:run"]);
    expect(formatForPrompt(new StepCompactor().compact([]))).toBe("");
    expect(formatForPrompt(new StepCompactor().compact(steps))).toBe(
      "Recent actions:\n  [step_001] ✓ shell:run observation step_001\n  [step_002] ✓ shell:run observation step_002\n",
    );
    expect(formatForPrompt({ recentSteps: [], compactSteps: [], droppedCount: 4 })).toBe("");
    expect(formatForPrompt(new StepCompactor({ keepRecent: 0 }).compact(steps))).toBe(
      "Previous actions (summarized):\n  [step_001..002] 2 commands executed\n",
    );
  });
});

describe("config, presets, auto-tuning", () => {
  it("defaults are the seed's dataclass plus the thresholds", () => {
    expect(new StepCompactor().config).toEqual({
      keepRecent: 5,
      maxCompactSteps: 20,
      groupSimilar: true,
      preserveFailures: true,
      triggerAbove: 5,
      maxTotalSteps: 30,
      veryLongAbove: 100,
      groupTargets: false,
    });
    expect(new StepCompactor({ keepRecent: undefined }).config.keepRecent).toBe(5);
  });

  it("reads the deprecated recentWindow as keepRecent, with the same output everywhere a config is taken", () => {
    const steps = seq(["fs:read_file", "fs:read_file", "shell:run", "web:search", "shell:run", "fs:write_file", "shell:run", "web:search"]);
    for (const n of [0, 1, 3, 7]) {
      const byNew = new StepCompactor({ keepRecent: n });
      expect(new StepCompactor({ recentWindow: n }).config).toEqual(byNew.config);
      expect(new StepCompactor({ recentWindow: n, keepRecent: n }).config).toEqual(byNew.config);
      expect(new StepCompactor({ recentWindow: n }).compact(steps)).toEqual(byNew.compact(steps));
      expect(compactForSpawn(steps, { subGoal: "", relevantOnly: false, config: { recentWindow: n } })).toEqual(
        compactForSpawn(steps, { subGoal: "", relevantOnly: false, config: { keepRecent: n } }),
      );
    }
    expect(new StepCompactor({ recentWindow: 2 }).config).not.toHaveProperty("recentWindow");
    expect(shouldCompact(steps, { recentWindow: 2, triggerAbove: 7 })).toBe(true);
  });

  it("a config giving recentWindow and keepRecent different values is an error naming the deprecated field", () => {
    for (const make of [
      () => new StepCompactor({ recentWindow: 3, keepRecent: 4 }),
      () => compactForSpawn([], { subGoal: "", config: { recentWindow: 3, keepRecent: 4 } }),
    ]) {
      const err = errorOf(make);
      expect([err.code, err.path]).toEqual(["E_BAD_INPUT", "config.recentWindow"]);
      expect(err.message).toBe("config.recentWindow: the deprecated name of keepRecent, given beside it with another value (3 and 4): give keepRecent only");
    }
  });

  it("shouldCompact: more than triggerAbove steps", () => {
    const steps = (n: number) => Array.from({ length: n }, (_, i) => makeStep(i + 1, "shell:run"));
    expect([shouldCompact(steps(5)), shouldCompact(steps(6)), shouldCompact(steps(1), { triggerAbove: 0 })]).toEqual([false, true, true]);
  });

  it("rejects bad values naming the field", () => {
    const cases: [object, RegExp][] = [
      [{ keepRecent: 2.5 }, /^config\.keepRecent: must be a non-negative integer, got 2\.5$/],
      [{ recentWindow: 2.5 }, /^config\.recentWindow: must be a non-negative integer, got 2\.5$/],
      [{ maxCompactSteps: -1 }, /^config\.maxCompactSteps: must be a non-negative integer, got -1$/],
      [{ maxTotalSteps: Number.NaN }, /^config\.maxTotalSteps: .* got NaN$/],
      [{ groupSimilar: "yes" }, /^config\.groupSimilar: must be a boolean, got "yes"$/],
      [{ keep_recent: 3 }, /^config: unknown option "keep_recent" \(options: keepRecent, maxCompactSteps, /],
    ];
    for (const [config, message] of cases) {
      const err = errorOf(() => new StepCompactor(config as never));
      expect(err.code).toBe("E_BAD_INPUT");
      expect(err.message).toMatch(message);
    }
    expect(errorOf(() => new StepCompactor().compact([], { maxSteps: -1 })).message).toBe("options.maxSteps: must be a non-negative integer, got -1");
  });

  it("presets are the seed's tuning table", () => {
    const pick = (c: typeof kDefaultStepCompactionConfig) => [c.keepRecent, c.maxCompactSteps, c.groupSimilar, c.preserveFailures];
    expect(Object.fromEntries(Object.entries(kPresets).map(([k, v]) => [k, pick(v)]))).toEqual({
      "interactive-chat": [5, 20, true, true],
      "long-research": [3, 10, true, true],
      "code-analysis": [5, 15, true, true],
      debugging: [7, 10, false, true],
    });
  });

  it("presetConfig returns a copy and lists the names for an unknown one", () => {
    const c = presetConfig("debugging");
    c.keepRecent = 99;
    expect(kPresets.debugging.keepRecent).toBe(7);
    const err = errorOf(() => presetConfig("toString"));
    expect(err.code).toBe("E_BAD_INPUT");
    expect(err.message).toBe('preset: unknown preset "toString" (one of interactive-chat, long-research, code-analysis, debugging)');
  });

  it("autoTuneCompaction matches whole words with inflections", () => {
    const tune = (task: string) => {
      const c = autoTuneCompaction(task);
      return [c.keepRecent, c.maxCompactSteps, c.groupSimilar];
    };
    const debug = [7, 20, false];
    const research = [3, 10, true];
    const plain = [5, 20, true];
    expect(tune("Debug the login flow")).toEqual(debug);
    expect(tune("DEBUGGING a flaky test")).toEqual(debug);
    expect(tune("fix the errors in parser.ts")).toEqual(debug);
    expect(tune("refactor error_handler")).toEqual(debug);
    expect(tune("Research Bitcoin prices and debug the scraper")).toEqual(debug);
    expect(tune("Research Bitcoin price predictions for 2025")).toEqual(research);
    expect(tune("keep researching")).toEqual(research);
    for (const t of ["analyze logs", "analyse logs", "an analysis of logs", "analyzing logs"]) expect(tune(t)).toEqual(research);
    expect(tune("write a report on terrorism")).toEqual(plain);
    expect(tune("debugfs mount")).toEqual(plain);
    expect(tune("")).toEqual(plain);
    expect(errorOf(() => autoTuneCompaction(42 as never)).code).toBe("E_NOT_STRING");
  });
});

describe("compactAsync (semantic compaction)", () => {
  const steps = [
    makeStep(1, "fs:read_file", { size: 2000, observation: "Read a.ts (2.0KB)" }),
    makeStep(2, "fs:read_file", { size: 1000, observation: "Read b.ts (1.0KB)" }),
    makeStep(3, "shell:run", { success: false, error: "exit 1" }),
    makeStep(4, "web:search", { count: 3 }),
    makeStep(5, "web:search", { count: 4 }),
    makeStep(6, "browser:navigate"),
  ];
  const compactor = new StepCompactor({ keepRecent: 1 });

  it("a sync summariser gets the seed's prompt, the target and the label; its first line is used", async () => {
    const calls: [string, number, string][] = [];
    const summarizer: Summarizer = (text, target, label) => {
      calls.push([text, target, label]);
      return label === "group:file" ? "  2 file operations (sources loaded)\nmore detail" : "";
    };
    const history = await compactor.compactAsync(steps, { summarizer });
    expect(calls).toEqual([
      ["Summarize these 2 actions in one line:\nRead a.ts (2.0KB)\nRead b.ts (1.0KB)\n\nFormat: <count> <type> operations (<key_outcome>)", 30, "group:file"],
      [expect.stringMatching(/^Summarize these 2 actions/), 30, "group:search"],
    ]);
    // The empty answer for the searches falls back to the template; single steps stay deterministic.
    expect(lines(history)).toEqual([
      "[step_001..002] 2 file operations (sources loaded)",
      "[step_003] ✗ shell:run failed: exit 1",
      "[step_004..005] 2 searches (7 results)",
    ]);
    expect(history.compactSteps[0].stepIds).toEqual(["step_001", "step_002"]);
    expect(history.recentSteps).toEqual(compactor.compact(steps).recentSteps);
  });

  it("an async summariser and a custom target", async () => {
    const history = await compactor.compactAsync(steps, { summarizer: async (_t, n, label) => `${label} in ${n}`, targetTokens: 12 });
    expect(lines(history)).toEqual(["[step_001..002] group:file in 12", "[step_003] ✗ shell:run failed: exit 1", "[step_004..005] group:search in 12"]);
  });

  it("a summariser's line is redacted like every line the compactor writes", async () => {
    const key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
    const history = await compactor.compactAsync(steps, { summarizer: () => `2 reads with OPENAI_API_KEY=${key}` });
    expect(lines(history).join("\n")).not.toContain(key);
    expect(lines(history)[0]).toContain("[REDACTED:");
  });

  it("throwing, rejecting or blank summarisers fall back to the templates", async () => {
    const expected = lines(compactor.compact(steps));
    const bad: Summarizer[] = [
      () => {
        throw new Error("offline");
      },
      async () => Promise.reject(new Error("rate limited")),
      () => " \n ",
      () => 42 as unknown as string,
    ];
    for (const summarizer of bad) expect(lines(await compactor.compactAsync(steps, { summarizer }))).toEqual(expected);
  });

  it("failure lines after a group stay deterministic", async () => {
    const failing = [makeStep(1, "shell:run"), makeStep(2, "shell:run", { success: false, error: "boom" }), makeStep(3, "web:search")];
    const history = await compactor.compactAsync(failing, { summarizer: () => "LLM summary" });
    expect(lines(history)).toEqual(["[step_001..002] LLM summary", "[step_002] ✗ shell:run failed: boom"]);
  });

  it("rejects a missing summariser or a bad target", async () => {
    await expect(compactor.compactAsync(steps, { summarizer: undefined as never })).rejects.toMatchObject({ code: "E_BAD_INPUT", path: "options.summarizer" });
    await expect(compactor.compactAsync(steps, { summarizer: () => "", targetTokens: 1.5 })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options.targetTokens",
    });
  });

  it("rejects missing options as a missing summariser, and a summariser passed as the options as such", async () => {
    await expect(compactor.compactAsync(steps, undefined as never)).rejects.toMatchObject({ code: "E_BAD_INPUT", path: "options.summarizer" });
    await expect(compactor.compactAsync(steps, (() => "") as never)).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "options",
      message: "options: expected an object { summarizer, targetTokens?, maxSteps? }, got a function",
    });
  });
});

describe("compactForSpawn (cross-agent compaction)", () => {
  const parent = [
    makeStep(1, "fs:read_file", { minimalArgs: { path: "src/parser.ts" }, observation: "Read src/parser.ts (4.0KB)" }),
    makeStep(2, "web:search", { minimalArgs: { query: "bitcoin price" }, observation: "Searched → 10 results" }),
    makeStep(3, "shell:run", { minimalArgs: { command: "npm test -- lexer" }, observation: "npm test: exit 0" }),
    makeStep(4, "fs:read_file", { minimalArgs: { path: "docs/guide.md" }, observation: "Read docs/guide.md (1.0KB)" }),
    makeStep(5, "shell:run", { success: false, minimalArgs: { command: "tsc" }, error: "parser.ts(3,1): error TS1005", observation: "tsc: exit 2" }),
    makeStep(6, "browser:navigate", { minimalArgs: { url: "https://example.com/pricing" }, observation: "Visited example.com (5KB text)" }),
    makeStep(7, "fs:write_file", { minimalArgs: { path: "lib/lexer/index.ts" }, observation: "Wrote lib/lexer/index.ts" }),
  ];
  const keptIds = (h: CompactedHistory) => [...h.compactSteps.flatMap((c) => c.stepIds), ...ids(h.recentSteps)];

  it("keeps the steps whose args, observation or error mention the sub-goal's words", () => {
    const history = compactForSpawn(parent, { subGoal: "Fix the parser" });
    // step_001 through its path's basename stem, step_005 through its error "parser.ts(3,1): …".
    expect(keptIds(history)).toEqual(["step_001", "step_005"]);
    expect(history.droppedCount).toBe(5);
  });

  it("matches path segments, commands, urls and tool names", () => {
    expect(keptIds(compactForSpawn(parent, { subGoal: "Update the lexer" }))).toEqual(["step_003", "step_007"]);
    expect(keptIds(compactForSpawn(parent, { subGoal: "Check the pricing page" }))).toEqual(["step_006"]);
    expect(keptIds(compactForSpawn(parent, { subGoal: "look at docs" }))).toEqual(["step_004"]);
    expect(keptIds(compactForSpawn(parent, { subGoal: "navigate somewhere" }))).toEqual(["step_006"]);
  });

  it("stop-words and words under 3 characters do not match", () => {
    const steps = [...parent, makeStep(8, "fs:read_file", { observation: "Read the notes for it", minimalArgs: { path: "a/ts/x.js" } })];
    const history = compactForSpawn(steps, { subGoal: "Then the pricing for it, in ts" });
    expect(keptIds(history)).toEqual(["step_006"]);
    expect(history.droppedCount).toBe(7);
  });

  it("a sub-goal without keywords cannot select: every step is a candidate (failures first)", () => {
    expect(keptIds(compactForSpawn(parent, { subGoal: "do it", maxSteps: 2 }))).toEqual(["step_005", "step_007"]);
  });

  it("failures first, then the most recent relevant steps, in chronological order, at most maxSteps", () => {
    const steps = [
      makeStep(1, "shell:run", { success: false, minimalArgs: { command: "make build" }, error: "exit 2" }),
      ...Array.from({ length: 8 }, (_, i) => makeStep(i + 2, "shell:run", { minimalArgs: { command: `make build step${i}` } })),
      makeStep(10, "web:search", { minimalArgs: { query: "weather" } }),
    ];
    const history = compactForSpawn(steps, { subGoal: "make the build pass", maxSteps: 3 });
    expect(keptIds(history)).toEqual(["step_001", "step_008", "step_009"]);
    expect(history.recentSteps).toHaveLength(3);
    expect(history.droppedCount).toBe(7);
  });

  it("maxSteps bounds the failures too; relevantOnly false takes the most recent steps", () => {
    const failures = Array.from({ length: 6 }, (_, i) => makeStep(i + 1, "shell:run", { success: i % 2 === 0, minimalArgs: { command: "make" } }));
    expect(keptIds(compactForSpawn(failures, { subGoal: "make", maxSteps: 2 }))).toEqual(["step_004", "step_006"]);
    expect(keptIds(compactForSpawn(parent, { subGoal: "parser", relevantOnly: false, maxSteps: 4 }))).toEqual(["step_004", "step_005", "step_006", "step_007"]);
    expect(keptIds(compactForSpawn(parent, { subGoal: "parser", maxSteps: 0 }))).toEqual([]);
  });

  it("keepRecent defaults to min(3, maxSteps); config overrides it", () => {
    const all = { subGoal: "", relevantOnly: false };
    const five = compactForSpawn(parent, { ...all, maxSteps: 5 });
    expect([five.recentSteps.length, five.compactSteps.flatMap((c) => c.stepIds)]).toEqual([3, ["step_003", "step_004"]]);
    expect(compactForSpawn(parent, { ...all, maxSteps: 2 }).recentSteps).toHaveLength(2);
    expect(compactForSpawn(parent, { ...all, maxSteps: 5, config: { keepRecent: 1 } }).recentSteps).toHaveLength(1);
  });

  it("rejects a bad sub-goal or maxSteps", () => {
    expect(errorOf(() => compactForSpawn(parent, { subGoal: 3 as never })).code).toBe("E_NOT_STRING");
    expect(errorOf(() => compactForSpawn(parent, { subGoal: "x", maxSteps: -2 })).message).toBe("options.maxSteps: must be a non-negative integer, got -2");
  });
});
