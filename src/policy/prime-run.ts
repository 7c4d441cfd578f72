/**
 * A synthetic agent run (OpenAI chat form) that a warm-up compacts so the code a real first call
 * runs has run before (see Compactor.warmup). It is built to reach what real runs reach: several
 * tools (shell, file reads, edits with file contents in their arguments, JSON search results),
 * test failures with tracebacks, a failed edit, directory listings, a secret-shaped value for
 * redaction, non-ASCII text, assistant text and a second human turn with an instruction. Its
 * reads are 400 lines long, so the code a real output runs line by line (salience, units,
 * redaction) has run often enough to be optimised: with 80, a real first compaction of one
 * large read still took 3× its warm time. Deterministic; nothing of it ever reaches a caller.
 */

const kWords = [
  "parser",
  "header",
  "value",
  "config",
  "request",
  "session",
  "token",
  "budget",
  "cache",
  "error",
  "import",
  "module",
  "return",
  "assert",
  "fixture",
  "résumé",
  "naïve",
  "→",
  "✓",
];

/** `n` words from a fixed list, varied by `seed`. */
const words = (seed: number, n: number): string => Array.from({ length: n }, (_, j) => kWords[(seed * 7 + j * 3) % kWords.length]).join(" ");

const kTools = ["bash", "read_file", "str_replace_editor", "search"] as const;

/** The arguments of step `i`'s call of `tool`. */
function argsOf(tool: (typeof kTools)[number], i: number): Record<string, unknown> {
  const file = `src/app/mod_${i % 5}.py`;
  switch (tool) {
    case "bash":
      return { command: `cd /repo && python -m pytest tests/test_parser.py -x -q -k header_${i}` };
    case "read_file":
      return { path: file, start_line: i * 10, end_line: i * 10 + 400 };
    case "str_replace_editor":
      return {
        command: "str_replace",
        path: file,
        old_str: `    return value.split(":")\n`,
        new_str: `    if not value:\n        return {}\n    return dict(p.split(":", 1) for p in value.split(";"))\n`,
      };
    default:
      return { query: `parse_header_${i}`, include: "*.py" };
  }
}

/** What step `i`'s call of `tool` gave back. */
function outputOf(tool: (typeof kTools)[number], i: number): string {
  const lines = (n: number, line: (j: number) => string) => Array.from({ length: n }, (_, j) => line(j)).join("\n");
  switch (tool) {
    case "bash":
      return i % 2
        ? [
            "============================= test session starts ==============================",
            "collected 12 items",
            "",
            "tests/test_parser.py ..F.",
            "",
            "___________________________ test_parse_header_empty ____________________________",
            "Traceback (most recent call last):",
            `  File "/repo/src/app/parser.py", line ${40 + i}, in parse_header`,
            '    key, val = part.split(":")',
            "ValueError: not enough values to unpack (expected 2, got 1)",
            "FAILED tests/test_parser.py::test_parse_header_empty - ValueError",
            `1 failed, 11 passed in 0.${i}2s`,
          ].join("\n")
        : `${lines(30, (j) => `drwxr-xr-x  2 user user 4096 Nov ${(j % 28) + 1} 12:0${j % 10} dir_${i}_${j}`)}\nexport API_TOKEN=sk-test-${"a1b2c3d4".repeat(4)}`;
    case "read_file":
      return lines(
        400,
        (j) => `${i * 10 + j}\t${j % 9 === 0 ? "def" : "   "} ${words(i + j, 6).replace(/ /g, j % 2 ? "_" : " ")}(self, value: str) -> dict:  # ${j}`,
      );
    case "str_replace_editor":
      return i % 8 === 2
        ? `The file src/app/mod_${i % 5}.py has been edited. Here's the result of running \`cat -n\`:\n${lines(12, (j) => `    ${40 + j}\t    ${words(j, 5)}`)}`
        : "Error: No replacement was performed, old_str did not appear verbatim in src/app/mod.py.";
    default:
      return JSON.stringify({ matches: Array.from({ length: 20 }, (_, j) => ({ file: `src/app/mod_${j % 5}.py`, line: j * 7 + i, text: words(j, 8) })) });
  }
}

/** The run: a system prompt, a task, `steps` tool steps (a second human turn after the fifth), in OpenAI chat form; a shorter run is a prefix of a longer one. */
export function primeRun(steps: number): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [
    {
      role: "system",
      content: `You are a careful coding agent.\nIMPORTANT: Never modify files under tests/. Always run the test suite before finishing.\n${words(1, 40)}`,
    },
    {
      role: "user",
      content:
        "Fix the failing test in tests/test_parser.py: parse_header('') should return an empty dict, not raise. Don't change the public API of src/app/parser.py.",
    },
  ];
  for (let i = 0; i < steps; i++) {
    const id = `call_${i}_${((i * 2654435761) >>> 0).toString(16)}`;
    const tool = kTools[i % kTools.length];
    const text = i % 3 === 0 ? `I'll ${words(i, 12)} next, checking src/app/mod_${i % 5}.py line ${i * 10 + 3}.` : null;
    messages.push({
      role: "assistant",
      content: text,
      tool_calls: [{ id, type: "function", function: { name: tool, arguments: JSON.stringify(argsOf(tool, i)) } }],
    });
    messages.push({ role: "tool", tool_call_id: id, content: outputOf(tool, i) });
    if (i === 4) messages.push({ role: "user", content: "Also keep the docstring of parse_header unchanged, and use UTF-8 everywhere — 日本語 OK." });
  }
  return messages;
}
