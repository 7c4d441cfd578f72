/**
 * The ledger's fact window (policy/fact-window.ts): whatever sequence of windows it is set to —
 * shifts as a session's epochs make them, or any others — its aggregate equals one read afresh
 * from the window's messages.
 */
import { describe, expect, it } from "vitest";
import { generateRun } from "../../../src/gen/run.js";
import type { Message } from "../../../src/model/schema.js";
import { FactWindow } from "../../../src/policy/relevance/fact-window.js";
import { createRng } from "../../helpers.js";

/** What a window holds, comparable: terms and decisions with their positions as window indices, and the files edited by shell. */
function snapshot(w: FactWindow, editCalls: ReadonlySet<string> = new Set()) {
  const terms: (readonly [string, number, number, number])[] = [];
  w.forEachTerm((t, seen, count, last) => terms.push([t, seen, count, w.at(last)]));
  terms.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const decisions = [...w.decisions].map(([d, s]) => [d, s.count, w.at(s.last)] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const edited = new Set<string>();
  w.addEdited(edited, editCalls);
  return { size: w.size, terms, decisions, edited: [...edited].sort() };
}

const fresh = (messages: readonly Message[], editCalls?: ReadonlySet<string>) => {
  const w = new FactWindow();
  w.set(messages);
  return snapshot(w, editCalls);
};

describe("FactWindow", () => {
  const messages = generateRun({ seed: 7, steps: 160 }).messages;

  it("sliding as a session's epochs slide it equals a fresh read at every step", () => {
    const w = new FactWindow();
    for (let end = 10; end <= messages.length; end += 23) {
      const window = messages.slice(Math.max(0, end - 64), end);
      w.set(window);
      expect(snapshot(w)).toEqual(fresh(window));
    }
  });

  it("any other sequence of windows (jumps back, gaps, shrinking, empty, repeats) equals a fresh read", () => {
    const rng = createRng(11);
    const w = new FactWindow();
    for (let k = 0; k < 60; k++) {
      const a = rng.int(messages.length);
      const b = a + rng.int(80);
      const picked = rng.next() < 0.2 ? messages.slice(a, b).filter(() => rng.next() < 0.7) : messages.slice(a, b);
      const window = rng.next() < 0.1 ? [] : rng.next() < 0.1 ? [...picked, ...picked.slice(0, 3)] : picked;
      w.set(window);
      expect(snapshot(w)).toEqual(fresh(window));
    }
  });

  it("a call in editCalls gives all its argument terms; another gives only the files its shell command writes", () => {
    const write: Message = {
      id: "a1",
      role: "assistant",
      parts: [{ type: "tool-call", id: "c1", name: "bash", args: JSON.stringify({ command: "echo x > out/log.txt && cat src/app.py" }) }],
      meta: {},
    };
    const edit: Message = {
      id: "a2",
      role: "assistant",
      parts: [{ type: "tool-call", id: "c2", name: "str_replace", args: JSON.stringify({ path: "src/core/util.py", old: "foo_bar" }) }],
      meta: {},
    };
    expect(fresh([write, edit]).edited).toEqual(["out/log.txt"]);
    expect(fresh([write, edit], new Set(["c2"])).edited).toEqual(["foo_bar", "out/log.txt", "src/core/util.py"]);
  });
});
