import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/store/index.js";
import fc from "fast-check";
import { containsSecret, kSecretPatterns, redactSecrets } from "../../src/steps/redact.js";
import { commandHead } from "../../src/steps/rules.js";
import { countLines, detectContentType, errorHead, extractExitCode } from "../../src/steps/detect.js";
import { StepReducer, extractSteps } from "../../src/steps/reducer.js";
import type { Message } from "../../src/model/schema.js";

const reducer = (opts: ConstructorParameters<typeof StepReducer>[0] = {}) => new StepReducer({ store: createMemoryStore(), ...opts });
const json = (v: unknown) => JSON.stringify(v);

describe("seed 001 templates", () => {
  it("fs:read_file: 'Read config.json (1523 bytes, JSON)', offloaded above 1 KB", () => {
    const r = reducer();
    const content = json({ model: "gpt-4", pad: "x".repeat(1480) });
    const s = r.reduce("fs:read_file", json({ path: "config.json" }), json({ content }));
    expect(s.observation).toBe(`Read config.json (${Buffer.byteLength(content)} bytes, JSON)`);
    expect(s.minimalArgs).toEqual({ path: "config.json" });
    expect(s.outcomeRef).toMatch(/^workspace\/outputs\/read_[0-9a-f]{32}\.json$/);
    expect(r.store.getText(s.outcomeRef!)).toBe(json({ content }));
    expect(s).toMatchObject({ id: "step_001", category: "file", action: "read", success: true });
    const small = r.reduce("read_file", json({ path: "notes.md" }), "# hi\n");
    expect(small.observation).toBe("Read notes.md (5 bytes, Markdown)");
    expect(small.outcomeRef).toBeNull();
    expect(small.id).toBe("step_002");
  });

  it("detects JSON, text, binary and languages by extension", () => {
    expect(detectContentType('{"a":1}')).toBe("JSON");
    expect(detectContentType("plain words")).toBe("text");
    expect(detectContentType("\u0000\u0001PNG")).toBe("binary");
    expect(detectContentType("def f(): pass", "src/main.py")).toBe("Python");
    expect(detectContentType("x", "a/b.tsx")).toBe("TypeScript");
    const s = reducer().reduce("Read", json({ file_path: "/repo/lib.rs" }), "fn main() {}\n");
    expect(s.observation).toBe("Read /repo/lib.rs (13 bytes, Rust)");
  });

  it("fs:write_file: written content never stored", () => {
    const r = reducer();
    const s = r.reduce("fs:write_file", json({ path: "report.md", content: "y".repeat(5234) }), json({ success: true }));
    expect(s.observation).toBe("Wrote report.md (5234 bytes)");
    expect(s.minimalArgs).toEqual({ path: "report.md" });
    expect(s.outcomeRef).toBeNull();
    expect(s.summary).toBe("Wrote report.md");
    expect(JSON.stringify(s)).not.toContain("yyyy");
  });

  it("fs:list_dir: counts files and dirs, offloads above 10 entries", () => {
    const entries = [...Array.from({ length: 15 }, (_, i) => `f${i}.py`), "a/", "b/", "c/", "d/", "e/"];
    const s = reducer().reduce("fs:list_dir", json({ path: "src/" }), json({ entries }));
    expect(s.observation).toBe("Listed src/: 20 items (15 files, 5 dirs)");
    expect(s.outcomeRef).toMatch(/list_[0-9a-f]{32}\.json$/);
    expect(s.summary).toBe("Listed src/ (20 items)");
    const few = reducer().reduce("ls", json({ path: "." }), "a.txt\nb.txt\n");
    expect(few.observation).toBe("Listed .: 2 items (2 files, 0 dirs)");
    expect(few.outcomeRef).toBeNull();
  });

  it("web:search: 'Found 10 results for …', offloaded above 5", () => {
    const results = Array.from({ length: 10 }, (_, i) => ({ title: `t${i}`, url: `https://x/${i}`, snippet: "s" }));
    const s = reducer().reduce("web:search", json({ query: "Bitcoin price prediction 2024", count: 10 }), json({ results }));
    expect(s.observation).toBe("Found 10 results for 'Bitcoin price prediction 2024'");
    expect(s.minimalArgs).toEqual({ query: "Bitcoin price prediction 2024" });
    expect(s.summary).toBe("Searched 'Bitcoin price prediction 2024' → 10 results");
    expect(s.outcomeRef).toMatch(/search_/);
    const three = reducer().reduce("grep", json({ pattern: "TODO" }), "a.ts:1: TODO\nb.ts:2: TODO\nc.ts:9: TODO\n");
    expect(three.observation).toBe("Found 3 results for 'TODO'");
    expect(three.outcomeRef).toBeNull();
    expect(reducer().reduce("find_file", json({ file_name: "x.py" }), 'Found 1 matches for "x.py" in /r:\n/r/x.py').count).toBe(1);
  });

  it("browser:navigate: always offloaded, status and size", () => {
    const page = { status: 200, title: "Example", text: "z".repeat(50_000), links: [] };
    const s = reducer().reduce("browser:navigate", json({ url: "https://example.com/article?ref=1" }), json(page));
    expect(s.observation).toBe("Visited example.com/article (status=200, 50.0KB text)");
    expect(s.outcomeRef).toMatch(/page_[0-9a-f]{32}\.json$/);
    expect(s.summary).toBe("Visited example.com/article (200, 50.0KB)");
    const notFound = reducer().reduce("fetch_url", json({ url: "https://x.org/missing" }), json({ status: 404, text: "nope" }));
    expect(notFound.success).toBe(false);
  });

  it("system:shell: 'git log: exit 0, 20 lines output', offloaded above 500 chars", () => {
    const stdout = Array.from({ length: 20 }, (_, i) => `abc${i}23 fix: bug number ${i} in the parser module`).join("\n");
    const s = reducer().reduce("system:shell", json({ command: "git", args: ["log", "--oneline", "-20"] }), json({ stdout, stderr: "", exit_code: 0 }));
    expect(s.observation).toBe("git log: exit 0, 20 lines output");
    expect(s.minimalArgs).toEqual({ command: "git log --oneline -20" });
    expect(s.summary).toBe("Ran `git log --oneline -20` (exit 0)");
    expect(s.outcomeRef).toMatch(/shell_[0-9a-f]{32}\.log$/);
    const short = reducer().reduce("bash", json({ command: "ls" }), "<returncode>0</returncode>\n<output>\na\nb\n</output>");
    expect(short.observation).toBe("ls: exit 0, 2 lines output");
    expect(short.outcomeRef).toBeNull();
  });

  it("shell failures keep exit code and error head in the observation", () => {
    const out =
      "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    import nope\nModuleNotFoundError: No module named 'nope'\n</output>";
    const s = reducer().reduce("bash", json({ command: "cd /repo && python x.py" }), out);
    expect(s.success).toBe(false);
    expect(s.exitCode).toBe(1);
    expect(s.error).toBe("ModuleNotFoundError: No module named 'nope'");
    expect(s.observation).toBe("python x.py: exit 1, 4 lines output: ModuleNotFoundError: No module named 'nope'");
    expect(reducer().reduce("execute_command", json({ command: "false" }), "", { isError: true }).success).toBe(false);
  });

  it("error heads of edit tools and tau-style errors", () => {
    const s = reducer().reduce(
      "str_replace_editor",
      json({ command: "str_replace", path: "a.c", old_str: "x", new_str: "y" }),
      "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in a.c.",
    );
    expect(s).toMatchObject({ action: "write", success: false });
    expect(s.error).toContain("did not appear verbatim");
    const t = reducer().reduce("book_reservation", json({ user_id: "u1" }), "Error: payment amount does not add up");
    expect(t).toMatchObject({ success: false, error: "Error: payment amount does not add up", category: "other" });
    expect(t.observation).toBe("book_reservation failed: Error: payment amount does not add up");
  });

  it("str_replace_editor view is a read", () => {
    const s = reducer().reduce("str_replace_editor", json({ command: "view", path: "/w/a.py" }), "1\tprint(1)\n");
    expect(s.action).toBe("read");
    expect(s.observation).toMatch(/^Read \/w\/a\.py \(\d+ bytes, Python\)$/);
  });

  it("thresholds are configuration", () => {
    const r = reducer({ thresholds: { fileBytes: 10, shellChars: 5_000 } });
    expect(r.reduce("read_file", json({ path: "a.txt" }), "0123456789ab").outcomeRef).not.toBeNull();
    expect(r.reduce("bash", json({ command: "seq 200" }), "1\n".repeat(200)).outcomeRef).toBeNull();
    expect(() => reducer({ thresholds: { fileBytes: -1 } })).toThrowError(/thresholds\.fileBytes/);
  });

  it("a non-finite threshold is shown as given", () => {
    expect(() => reducer({ thresholds: { fileBytes: Infinity } })).toThrowError(/^thresholds\.fileBytes: expected a non-negative number, got Infinity$/);
  });

  it("user rules by name, pattern and predicate come first", () => {
    const r = reducer({
      rules: [
        {
          name: "flights",
          match: /^search_\w+_flight$/,
          category: "search",
          action: "search",
          reduce: (input) => ({
            minimalArgs: input.args,
            observation: `flights: ${JSON.parse(input.output).length}`,
            summary: "flights",
            success: true,
            offload: null,
          }),
        },
      ],
    });
    expect(r.reduce("search_direct_flight", json({ origin: "JFK" }), json([1, 2])).observation).toBe("flights: 2");
    r.addRule({
      name: "bash-x",
      match: "bash",
      category: "shell",
      action: "shell",
      reduce: () => ({ minimalArgs: {}, observation: "mine", summary: "mine", success: true, offload: null }),
    });
    expect(r.reduce("bash", json({ command: "ls" }), "").observation).toBe("mine");
    expect(r.ruleFor("Bash").name).toBe("shell");
    expect(r.ruleFor("get_user_details").name).toBe("default");
  });

  it("a throwing user rule falls back to the default rule with a note", () => {
    const r = reducer({
      rules: [
        {
          name: "boom",
          match: "x",
          category: "other",
          action: "call",
          reduce: () => {
            throw new Error("bad");
          },
        },
      ],
    });
    const s = r.reduce("x", "{}", "ok");
    expect(s.observation).toBe("x: ok (rule boom failed: bad)");
  });
});

describe("bad input never throws out of the reducer", () => {
  it("non-JSON arguments", () => {
    const s = reducer().reduce("bash", "ls -la /tmp", "a\nb");
    expect(s.minimalArgs).toEqual({ command: "ls -la /tmp" });
    expect(s.observation).toBe("ls: 2 lines output");
    expect(reducer().reduce("read_file", "{not json", "x").observation).toBe("Read {not json (1 bytes, text)");
  });

  it("binary content", () => {
    const bytes = new Uint8Array(4096).map((_, i) => i & 255);
    const r = reducer();
    const s = r.reduce("read_file", json({ path: "logo.png" }), bytes);
    expect(s.observation).toBe("Read logo.png (4096 bytes, binary)");
    expect(Buffer.from(r.store.get(s.outcomeRef!)).equals(Buffer.from(bytes))).toBe(true);
    const media = r.reduce("screenshot", "{}", [{ type: "media", mediaType: "image/png", data: "iVBORw0KGgo".repeat(200) }]);
    expect(media.observation).toMatch(/^screenshot: binary result \(\d+ bytes/);
    expect(JSON.parse(r.store.getText(media.outcomeRef!))).toEqual([{ type: "media", mediaType: "image/png", data: "iVBORw0KGgo".repeat(200) }]);
  });

  it("an unanswered call", () => {
    const s = reducer().reduce("bash", json({ command: "sleep 100" }), undefined);
    expect(s).toMatchObject({ observation: "sleep: no result", outcomeRef: null, success: true });
  });

  it("an output of 200 MB", () => {
    const big = "line of log output\n".repeat(200e6 / 19);
    const r = reducer();
    const s = r.reduce("bash", json({ command: "cat big.log" }), big);
    expect(s.lines).toBe(Math.floor(200e6 / 19));
    expect(r.store.get(s.outcomeRef!).byteLength).toBe(big.length);
  }, 60_000);

  it("results with no matching call are reduced in place, flagged", () => {
    const messages: Message[] = [
      { id: "u", role: "user", parts: [{ type: "text", text: "go" }], meta: {} },
      { id: "t0", role: "tool", parts: [{ type: "tool-result", callId: "ghost", name: "bash", content: [{ type: "text", text: "out" }] }], meta: {} },
      { id: "a", role: "assistant", parts: [{ type: "tool-call", id: "c1", name: "bash", args: json({ command: "ls" }) }], meta: {} },
      { id: "t1", role: "tool", parts: [{ type: "tool-result", callId: "c1", content: [{ type: "text", text: "x" }] }], meta: {} },
    ];
    expect(extractSteps(messages).orphans).toHaveLength(1);
    const steps = reducer().reduceMessages(messages);
    expect(steps.map((s) => s.id)).toEqual(["step_001", "step_002"]);
    expect(steps[0].observation).toContain('result with no matching call "ghost"');
    expect(steps[1]).toMatchObject({ callId: "c1", callMessage: 2, resultMessage: 3 });
  });
});

describe("secret redaction", () => {
  const secrets = [
    "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "xoxb-1234567890-abcdefghijkl",
    "AKIAIOSFODNN7EXAMPLE",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
  ];
  it.each(secrets)("redacts %s", (secret) => {
    const out = redactSecrets(`token is ${secret} ok`);
    expect(out).not.toContain(secret);
    expect(out).toMatch(/\[REDACTED:[a-z-]+\]/);
  });

  it("keeps keys, replaces values", () => {
    expect(redactSecrets('{"api_key": "abcd1234efgh", "model": "gpt-4"}')).toBe('{"api_key": "[REDACTED:credential]", "model": "gpt-4"}');
    expect(redactSecrets("export OPENAI_API_KEY=abc123def456")).toBe("export OPENAI_API_KEY=[REDACTED:credential]");
    expect(redactSecrets("curl -H 'Authorization: Bearer abcdefghijklmnop1234'")).toContain("Bearer [REDACTED:bearer-token]");
    expect(redactSecrets("postgres://admin:hunter22@db:5432/x")).toBe("postgres://admin:[REDACTED:url-password]@db:5432/x");
  });

  it("each pattern's cheap test and its places to try (needs, near) only skip what its regex would not match: the same output as running every regex", () => {
    const always = kSecretPatterns.map(({ kind, re }) => ({ kind, re }));
    const pieces = [
      ...secrets,
      "api_key",
      '"password": "hunter2hunter"',
      "PASSWORD=abcdefgh",
      "Bearer abcdefghijklmnop1234",
      "token abcdefghijklmnopqrst",
      "https://u:pw123@h/x",
      "eyJabcdefghij.eyJabcdefghij.abcdefghij",
      "AIza" + "x".repeat(35),
      "rk_live_" + "a".repeat(16),
      "github_pat_" + "a".repeat(22),
      "sk-ant-",
      "PRIVATE KEY",
      "[REDACTED:credential]",
      "Secret_Key: 'abcdefgh'",
      " ",
      "\n",
      "=",
      ":",
      "'",
      '"',
      "x",
      "KEY",
      "pwd",
      "--token ",
      "--db-password ",
      "--max-tokens ",
      "-",
      "abcd1234",
      "x-api-",
      "my_",
      "Token",
      "apikey",
      "secret",
      "_",
      "\\",
      "passwd: abcdefg",
      "'pwd'=\"abcd\"",
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
        const text = parts.join("");
        expect(redactSecrets(text)).toBe(redactSecrets(text, always));
      }),
      { numRuns: 5000, seed: 41 },
    );
  });

  it("a pattern's places to try (near) need not be a global regex, nor its regex a non-sticky one", () => {
    const patterns = kSecretPatterns.map((p) => (p.near ? { ...p, near: new RegExp(p.near.source, "i"), re: new RegExp(p.re.source, `${p.re.flags}y`) } : p));
    const text = 'config: {"db_password": "hunter2hunter", "api_key": "abcd1234efgh"} and PASSWORD=abcdefgh';
    expect(redactSecrets(text, patterns)).toBe(redactSecrets(text));
    expect(redactSecrets(text, patterns)).not.toContain("hunter2hunter");
  });

  it("leaves ordinary text alone", () => {
    for (const t of ["the key point is", "sha 4f2a9c1d", "task-1234", "monkey", "sk-short", "password reset flow"]) expect(containsSecret(t)).toBe(false);
  });

  it("observations never echo credentials; the offload keeps the original unless redactOffload", () => {
    const content = json({ api_key: "sk-proj-abcdefghijklmnopqrstuvwxyz012345", pad: "p".repeat(2000) });
    const r = reducer();
    const s = r.reduce("bash", json({ command: "curl -H 'Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwxyz012345' x" }), content);
    expect(JSON.stringify(s)).not.toContain("abcdefghijklmnopqrstuvwxyz012345");
    expect(r.store.getText(s.outcomeRef!)).toBe(content);
    const r2 = reducer({ redactOffload: true });
    const s2 = r2.reduce("bash", json({ command: "cat cfg" }), content);
    expect(r2.store.getText(s2.outcomeRef!)).not.toContain("abcdefghijklmnopqrstuvwxyz012345");
  });
});

describe("helpers", () => {
  it("commandHead", () => {
    expect(commandHead("git log --oneline -20")).toBe("git log");
    expect(commandHead("cd /w && python -m pytest -x")).toBe("python");
    expect(commandHead("FOO=1 /usr/bin/make test")).toBe("make test");
    expect(commandHead("")).toBe("command");
  });
  it("countLines, extractExitCode, errorHead", () => {
    expect([countLines(""), countLines("a"), countLines("a\n"), countLines("a\nb")]).toEqual([0, 1, 1, 2]);
    expect(extractExitCode("<returncode>2</returncode>")).toBe(2);
    expect(extractExitCode("[The command completed with exit code 127.]")).toBe(127);
    expect(extractExitCode("{}", { exit_code: 3 })).toBe(3);
    expect(extractExitCode("all good")).toBeUndefined();
    expect(errorHead("fatal: not a git repository\nmore")).toBe("fatal: not a git repository");
  });
});
