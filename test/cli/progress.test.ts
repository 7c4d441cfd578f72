import { describe, expect, it } from "vitest";
import { ProgressLine, progressText } from "../../src/cli/progress.js";

describe("the progress line", () => {
  it("shows runs, their pace, and with the share done an ETA from the pace since the first report", () => {
    const first = { s: 10, f: 0.2, runs: 100 };
    // 30 s after the first report, 0.2 → 0.5 done: 0.1 per 10 s, so 0.5 left is 50 s.
    expect(progressText({ runs: 400, elapsedMs: 40_000, doneFraction: 0.5 }, first)).toBe("400 runs · 10 runs/s · ETA 0:50 [############............] 50%");
    expect(progressText({ runs: 1_234, elapsedMs: 10_000 }, { s: 0, f: 0, runs: 0 })).toBe("1,234 runs · 123 runs/s");
    expect(progressText({ runs: 3, elapsedMs: 1_000, doneFraction: 0.2, note: "812 prompts" }, first)).toContain("ETA -:--");
    expect(progressText({ runs: 3, elapsedMs: 2_000, doneFraction: 0.25, note: "812 prompts" }, { s: 1, f: 0, runs: 0 })).toBe(
      "3 runs · 3 runs/s · ETA 0:03 [######..................] 25% · 812 prompts",
    );
  });

  it("redraws one line at most every 100 ms, and clears it", () => {
    let out = "";
    let clock = 0;
    const line = new ProgressLine({ stderr: { write: (s: string) => ((out += s), true) } as unknown as NodeJS.WritableStream }, () => clock);
    line.draw({ runs: 1, elapsedMs: 0, doneFraction: 0.1 });
    clock = 50;
    line.draw({ runs: 2, elapsedMs: 50, doneFraction: 0.2 });
    clock = 150;
    line.draw({ runs: 3, elapsedMs: 150, doneFraction: 0.3 });
    line.clear();
    const draws = out.split("\r").filter(Boolean);
    expect(draws).toHaveLength(3);
    expect(draws[0]).toMatch(/^1 runs .*\x1b\[K$/);
    expect(draws[1]).toMatch(/^3 runs · 13 runs\/s · ETA 0:01 .* 30%\x1b\[K$/);
    expect(draws[2]).toBe("\x1b[K");
  });

  it("where stderr is not a terminal, writes a plain line every 5 s (the first after 5 s), which clear leaves", () => {
    let out = "";
    let clock = 0;
    const line = new ProgressLine({ stderr: { write: (s: string) => ((out += s), true) } as unknown as NodeJS.WritableStream }, () => clock, true);
    for (clock = 0; clock <= 12_000; clock += 500) line.draw({ runs: clock / 100, elapsedMs: clock });
    line.clear();
    const lines = out.split("\n").filter(Boolean);
    expect(lines).toEqual(["50 runs · 10 runs/s", "100 runs · 10 runs/s"]);
    expect(out).not.toMatch(/\r|\x1b/);
  });
});
