// Human tables: aligned columns, cut to a terminal's width with the first column leading each part.
import { describe, expect, it } from "vitest";
import { table } from "../../src/cli/runs.js";

describe("table", () => {
  const rows = [
    ["contender", "recall", "cost/call", "savings", "p50 ms"],
    ["ctxfold", "92.0%", "1,234", "81.0%", "3.10"],
    ["tail baseline", "71.5%", "2,001", "80.2%", "0.02"],
  ];

  it("aligns the first column left and the others right", () => {
    expect(table(rows)).toBe(
      [
        "  contender      recall  cost/call  savings  p50 ms",
        "  ctxfold         92.0%      1,234    81.0%    3.10",
        "  tail baseline   71.5%      2,001    80.2%    0.02",
      ].join("\n") + "\n",
    );
  });

  it("wider than the terminal, it is cut into parts that fit, each led by the first column", () => {
    const out = table(rows, { width: 36 });
    for (const line of out.split("\n")) expect(line.length).toBeLessThanOrEqual(36);
    const parts = out.trimEnd().split("\n\n");
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part.split("\n").map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(["contender", "ctxfold", "tail baseline"]);
    expect(parts.join("\n")).toMatch(/recall[\s\S]*cost\/call[\s\S]*savings[\s\S]*p50 ms/);
  });

  it("keeps a column wider than the width whole, alone beside the first", () => {
    const out = table([["a", "x".repeat(50), "b"]], { width: 20 });
    expect(out.trimEnd().split("\n\n")).toEqual([`  a  ${"x".repeat(50)}`, "  a  b"]);
  });
});
