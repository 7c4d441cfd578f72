/**
 * The quick start's run: a made-up coding session in OpenAI Chat format, shaped like a real one
 * (file reads, searches, edits whose arguments hold a whole file, test runs that fail with a stack
 * trace until the last), so the example needs neither a model nor a recorded run.
 */
import { readFile } from "./fake-files.js";

type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; content: string; tool_call_id: string };

/** `npm test`'s output: a line per test, and while `failing` one failure with its stack. */
function testRun(n: number, failing: boolean): string {
  const lines = ["> app@1.0.0 test", "> vitest run", ""];
  for (let k = 1; k <= 24; k++) lines.push(` ✓ test/module${k}.test.ts > step${k} trims its input (${(k * 7) % 13} ms)`);
  if (failing)
    lines.push(
      ` ✗ test/module${n}.test.ts > step${n} keeps a quoted field whole`,
      `AssertionError: expected 'a,"b' to be 'a,"b,c"'`,
      `    at test/module${n}.test.ts:18:31`,
      `    at step${n} (src/module${n}.ts:${n}:12)`,
      "    at runTest (node_modules/@vitest/runner/dist/index.js:781:11)",
      "",
      " Tests  1 failed | 24 passed (25)",
    );
  else lines.push("", " Tests  25 passed (25)");
  return `Exit code: ${failing ? 1 : 0}\n${lines.join("\n")}`;
}

/** `grep -rn`'s output: the callers of step<n>. */
function grep(n: number): string {
  const lines: string[] = [];
  for (let k = 1; k <= 12; k++) lines.push(`src/module${(n + k) % 24}.ts:${k * 3}:  const out = step${n}(input.slice(${k}));`);
  return lines.join("\n");
}

/** Step n's words, tool call and output (the last step's test run passes). */
function step(n: number, last: boolean): { say: string; name: string; args: object; output: string } {
  const file = `src/module${n}.ts`;
  if (last) return { say: "Running the tests again.", name: "bash", args: { command: "npm test" }, output: testRun(n, false) };
  switch (n % 4) {
    case 1:
      return { say: `Reading ${file}.`, name: "read_file", args: { path: file }, output: readFile(file) };
    case 2:
      return { say: `Looking for the callers of step${n}.`, name: "grep", args: { pattern: `step${n}(`, path: "src" }, output: grep(n) };
    case 3:
      return { say: `Rewriting ${file}.`, name: "write_file", args: { path: file, content: readFile(file).replace(/^\d+\t/gm, "") }, output: `Wrote ${file}.` };
    default:
      return { say: "Running the tests.", name: "bash", args: { command: "npm test" }, output: testRun(n, true) };
  }
}

/** A task and `steps` tool calls with their results, then the agent's answer. */
export function codingRun(steps = 24): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: "system", content: "You are a coding agent in a TypeScript repository. Read, search, edit and test with your tools; leave the tests passing." },
    { role: "user", content: "`npm test` fails since the last merge: a quoted field is cut at its comma. Find out why and fix it." },
  ];
  for (let n = 1; n <= steps; n++) {
    const { say, name, args, output } = step(n, n === steps);
    const id = `call_${n}`;
    messages.push({ role: "assistant", content: say, tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] });
    messages.push({ role: "tool", content: output, tool_call_id: id });
  }
  messages.push({ role: "assistant", content: "Fixed: the field splitter now skips commas inside quotes, and the tests pass." });
  return messages;
}
