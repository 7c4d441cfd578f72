// A test that prints to the console unexpectedly fails (zod's fail-on-console habit): stray
// output hides real warnings. Tests that mean to print stub console themselves.
import { afterEach, beforeEach, vi } from "vitest";

let calls: string[] = [];
beforeEach(() => {
  calls = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      calls.push(`console.${level}: ${args.map(String).join(" ")}`);
    });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
  if (calls.length) throw new Error(`unexpected console output:\n${calls.join("\n")}`);
});
