/**
 * Seeded generator of realistic agent runs in the canonical model (src/model/schema.ts): a
 * system prompt describing the tools, a user task, then assistant turns (optional reasoning
 * with a signature, a short text, one or several tool calls with raw JSON arguments) each
 * answered by its tool results, occasional user steering, and a final answer. Tests and
 * benchmarks of every adapter and compactor stand on it where ../shared/corpus is absent.
 *
 * Decisions where real runs vary:
 * - Each run simulates one project (Python or TypeScript) with a fixed file tree, symbols and
 *   a tool harness style (argument spacing, shell exit-code wrapper, absolute or relative
 *   paths, line-numbered reads, Python or Node error traces), so one run is self-consistent
 *   and runs differ from each other. A file reads the same every time it is read; a file the
 *   agent wrote reads back as written.
 * - Turns: the system prompt and the first user task are turn 0; each assistant message and
 *   the tool messages answering it make one turn; a steering user message is a turn of its
 *   own; the final answer is the last turn. Every message is `{ loop: 0, index }`.
 * - An assistant step says a short text 85% of the time (always right after a failure or a
 *   steering message, which it acknowledges); otherwise it only calls, as models often do.
 * - Parallel steps (2-4 calls) use read-only tools: reads, searches, listings, fetches.
 * - One tool message per result (the OpenAI Chat shape), holding one tool-result part with
 *   one text part. `isError` is present only on failures; the result carries no tool name
 *   (the call id links it), as messages parsed from OpenAI Chat do.
 * - A failed call always shows a Python or Node traceback or "No such file or directory"
 *   (case as the tool prints it); a failed shell command ends with a non-zero exit code.
 * - Tool results are never empty (an empty shell output still has its exit-code line), since
 *   some providers reject empty text blocks.
 */
import { CtxfoldError } from "../errors.js";
import type { Message, Part, ReasoningPart, Role, ToolCallPart } from "../model/schema.js";
import { createRng, generateText, type Rng, type TextKind } from "./text.js";

export interface GenerateRunOptions {
  /** Any integer, taken modulo 2^32 (ids and `gen-<seed>` show that value); the run is a pure function of the options. */
  seed: number;
  /** Tool steps (assistant turns that call tools). @default random in 5..40 */
  steps?: number;
  /** Probability that a step makes 2 to 4 parallel calls. @default 0.2 */
  parallel?: number;
  /** Probability that a tool call fails. @default 0.15 */
  failures?: number;
  /** Probability that an assistant turn opens with a reasoning part. @default 0.3 */
  reasoning?: number;
  /** Probability of a user steering message before each step after the first. @default 0.1 */
  steering?: number;
  /** Probability that a reasoning part is redacted (encrypted data, no text). @default 0.05 */
  redacted?: number;
}

export interface GeneratedRun {
  /** `gen-<seed>`. */
  id: string;
  messages: Message[];
  /** Tool steps generated (assistant turns with calls). */
  steps: number;
}

/** Smallest and largest file read, in UTF-16 code units. */
export const kFileReadChars = { min: 500, max: 40_000 } as const;

type Lang = "python" | "typescript";
type ToolKey = "read" | "write" | "bash" | "search" | "fetch" | "list";

interface Project {
  lang: Lang;
  root: string;
  pkg: string;
  sources: string[];
  tests: string[];
  docs: string[];
  data: string[];
  dirs: string[];
  symbols: string[];
}

interface Harness {
  argStyle: "compact" | "spaced" | "indented";
  shell: "returncode" | "trailer" | "header";
  errors: "python" | "node";
  absPaths: boolean;
  lineNumbers: boolean;
  names: Record<ToolKey, string>;
}

interface Ctx {
  r: Rng;
  project: Project;
  harness: Harness;
  files: Map<string, string>;
  written: string[];
}

interface ToolRun {
  args: Record<string, string>;
  text: string;
}

const kNouns = ["parser", "config", "session", "cache", "router", "schema", "client", "server", "utils", "models", "tokens", "render", "loader", "store", "events", "auth", "query", "format", "compat", "registry", "worker", "queue", "storage", "metrics", "plugin", "stream", "core", "cli", "adapters", "paths"];
const kVerbs = ["get", "set", "parse", "load", "build", "resolve", "render", "validate", "normalize", "compute", "merge", "flush", "apply", "fetch", "encode", "decode", "split", "handle", "register", "emit"];
const kPackages = ["flowkit", "datapipe", "tinyorm", "httpkit", "shelfdb", "quickcfg", "astrolab", "mdtools", "taskq", "geomap"];
const kToolWeights: readonly [ToolKey, number][] = [["bash", 32], ["read", 26], ["search", 12], ["write", 10], ["list", 8], ["fetch", 6]];
const kParallelTools: readonly ToolKey[] = ["read", "read", "read", "search", "list", "fetch"];

const pick = <T>(r: Rng, xs: readonly T[]): T => xs[r.int(xs.length)];
const chance = (r: Rng, p: number): boolean => r.next() < p;
const between = (r: Rng, lo: number, hi: number): number => lo + r.int(hi - lo + 1);
const logUniform = (r: Rng, lo: number, hi: number): number => Math.round(lo * Math.pow(hi / lo, r.next()));
const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * One run. Same options, same run (deep-equal); all randomness comes from the seed.
 * Throws CtxfoldError E_BAD_INPUT for a non-integer seed, a negative or fractional step
 * count, or a probability outside [0, 1].
 */
export function generateRun(options: GenerateRunOptions): GeneratedRun {
  const o = resolveOptions(options);
  const r = createRng(o.seed);
  const steps = options.steps ?? between(r, 5, 40);
  const project = makeProject(r);
  const ctx: Ctx = { r, project, harness: makeHarness(r), files: new Map(), written: [] };
  const out = new RunWriter(o.seed);
  out.push("system", [text(systemPrompt(ctx))], 0);
  out.push("user", [text(taskText(ctx))], 0);
  let turn = 1;
  let steered = false;
  let lastFailure: string | undefined;
  for (let s = 0; s < steps; s++) {
    if (s > 0 && chance(r, o.steering)) {
      out.push("user", [text(steeringText(ctx))], turn++);
      steered = true;
    }
    const n = chance(r, o.parallel) ? between(r, 2, 4) : 1;
    const keys: ToolKey[] = [];
    for (let k = 0; k < n; k++) keys.push(n > 1 ? pick(r, kParallelTools) : weightedTool(r));
    const runs = keys.map((key) => {
      const failed = chance(r, o.failures);
      return { key, failed, run: kTools[key](ctx, failed) };
    });
    const parts: Part[] = [];
    if (chance(r, o.reasoning)) parts.push(reasoningPart(ctx, chance(r, o.redacted)));
    if (steered || lastFailure !== undefined || chance(r, 0.85)) parts.push(text(stepText(ctx, keys[0], runs[0].run.args, n, steered, lastFailure)));
    const calls = runs.map(({ key, run }) => out.call(ctx.harness.names[key], formatArgs(ctx.harness.argStyle, run.args)));
    out.push("assistant", [...parts, ...calls], turn);
    for (let k = 0; k < n; k++) out.push("tool", [{ type: "tool-result", callId: calls[k].id, content: [text(runs[k].run.text)], ...(runs[k].failed ? { isError: true } : {}) }], turn);
    turn++;
    steered = false;
    lastFailure = runs.find((x) => x.failed)?.run.text.split("\n").find((l) => /error|no such file/i.test(l));
  }
  const final: Part[] = chance(r, o.reasoning) ? [reasoningPart(ctx, chance(r, o.redacted))] : [];
  final.push(text(finalText(ctx)));
  out.push("assistant", final, turn);
  return { id: `gen-${o.seed}`, messages: out.messages, steps };
}

/** `count` runs; run i is `generateRun({ seed: seed + i })` (32-bit wrap-around). */
export function generateRuns(count: number, seed: number): GeneratedRun[] {
  const runs: GeneratedRun[] = [];
  for (let i = 0; i < count; i++) runs.push(generateRun({ seed: (seed + i) >>> 0 }));
  return runs;
}

function resolveOptions(options: GenerateRunOptions): Required<Omit<GenerateRunOptions, "steps">> {
  if (!Number.isInteger(options.seed)) throw new CtxfoldError("E_BAD_INPUT", `seed must be an integer, got ${options.seed}`, { path: "options.seed" });
  if (options.steps !== undefined && !(Number.isInteger(options.steps) && options.steps >= 0)) {
    throw new CtxfoldError("E_BAD_INPUT", `steps must be a non-negative integer, got ${options.steps}`, { path: "options.steps" });
  }
  const prob = (name: "parallel" | "failures" | "reasoning" | "steering" | "redacted", dflt: number): number => {
    const p = options[name] ?? dflt;
    if (!(p >= 0 && p <= 1)) throw new CtxfoldError("E_BAD_INPUT", `${name} must be a probability in [0, 1], got ${p}`, { path: `options.${name}` });
    return p;
  };
  return {
    seed: options.seed >>> 0,
    parallel: prob("parallel", 0.2),
    failures: prob("failures", 0.15),
    reasoning: prob("reasoning", 0.3),
    steering: prob("steering", 0.1),
    redacted: prob("redacted", 0.05),
  };
}

/** Numbers messages `m<i>` and calls `call_<seed>_<n>` as they are added. */
class RunWriter {
  readonly messages: Message[] = [];
  private calls = 0;
  constructor(private readonly seed: number) {}
  push(role: Role, parts: Part[], index: number): void {
    this.messages.push({ id: `m${this.messages.length}`, role, parts, turn: { loop: 0, index }, meta: {} });
  }
  call(name: string, args: string): ToolCallPart {
    return { type: "tool-call", id: `call_${this.seed}_${++this.calls}`, name, args };
  }
}

const text = (t: string): { type: "text"; text: string } => ({ type: "text", text: t });

function weightedTool(r: Rng): ToolKey {
  let x = r.int(kToolWeights.reduce((n, [, w]) => n + w, 0));
  for (const [key, w] of kToolWeights) if ((x -= w) < 0) return key;
  return "bash";
}

// ---------------------------------------------------------------------------------------------
// The simulated project and harness.

function makeProject(r: Rng): Project {
  const lang: Lang = chance(r, 0.55) ? "python" : "typescript";
  const pkg = pick(r, kPackages);
  const nouns = [...new Set(Array.from({ length: between(r, 5, 12) }, () => pick(r, kNouns)))];
  const sub = pick(r, ["backends", "io", "internal", "plugins"]);
  const ext = lang === "python" ? ".py" : ".ts";
  const srcDir = lang === "python" ? pkg : "src";
  const sources = nouns.map((n, i) => (i % 4 === 3 ? `${srcDir}/${sub}/${n}${ext}` : `${srcDir}/${n}${ext}`));
  if (lang === "python") sources.push(`${pkg}/__init__.py`);
  const tests = nouns.filter((_, i) => i % 2 === 0).map((n) => (lang === "python" ? `tests/test_${n}.py` : `test/${n}.test.ts`));
  const docs = ["README.md", "CHANGELOG.md", `docs/${nouns[0]}.md`];
  if (chance(r, 0.2)) docs.push(pick(r, ["docs/用户指南.md", "docs/guide.fr.md", "docs/anleitung.de.md"]));
  const data = [lang === "python" ? `${pkg}/data/${pick(r, nouns)}.json` : "package.json", "config.json", `logs/${pick(r, nouns)}.log`];
  const symbols = Array.from({ length: between(r, 6, 14) }, () => symbolName(r, lang));
  const dirs = [...new Set([".", ...[...sources, ...tests, ...docs, ...data].map(dirname)])];
  return { lang, root: pick(r, ["/repo", "/testbed", `/workspace/${pkg}`, `/home/user/${pkg}`]), pkg, sources, tests, docs, data, dirs, symbols };
}

function symbolName(r: Rng, lang: Lang): string {
  const verb = pick(r, kVerbs);
  const noun = pick(r, kNouns);
  if (chance(r, 0.2)) return cap(noun) + cap(pick(r, kNouns));
  return lang === "python" ? `${verb}_${noun}` : verb + cap(noun);
}

function makeHarness(r: Rng): Harness {
  const x = r.next();
  return {
    argStyle: x < 0.55 ? "compact" : x < 0.9 ? "spaced" : "indented",
    shell: pick(r, ["returncode", "trailer", "header"] as const),
    errors: chance(r, 0.5) ? "python" : "node",
    absPaths: chance(r, 0.3),
    lineNumbers: chance(r, 0.3),
    names: { read: "read_file", write: "write_file", bash: "bash", search: chance(r, 0.5) ? "grep" : "search", fetch: "web_fetch", list: "list_dir" },
  };
}

const dirname = (path: string): string => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".");
const shown = (ctx: Ctx, rel: string): string => (ctx.harness.absPaths ? (rel === "." ? ctx.project.root : `${ctx.project.root}/${rel}`) : rel);
const allFiles = (p: Project): string[] => [...p.sources, ...p.tests, ...p.docs, ...p.data];

/** A path that is not in the project: a made-up file beside a real one, or in a missing directory. */
function missingPath(ctx: Ctx, inMissingDir = false): string {
  const { r, project: p } = ctx;
  const ext = p.lang === "python" ? ".py" : ".ts";
  const dir = inMissingDir ? pick(r, ["build/tmp", "out/gen", "src/legacy", "vendor/patches"]) : dirname(pick(r, p.sources));
  let path = `${dir}/${pick(r, kNouns)}_${pick(r, kNouns)}${ext}`;
  while (ctx.files.has(path)) path = path.replace(/(\.\w+)$/, "_old$1");
  return path;
}

/** Raw argument text in the run's style: compact, Python json.dumps (spaced, ASCII-escaped), or indented. */
function formatArgs(style: Harness["argStyle"], args: Record<string, string>): string {
  if (style === "compact") return JSON.stringify(args);
  if (style === "indented") return JSON.stringify(args, null, 2);
  const fields: string[] = [];
  for (const k in args) fields.push(`${JSON.stringify(k)}: ${asciiJson(args[k])}`);
  return `{${fields.join(", ")}}`;
}

const asciiJson = (s: string): string => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

// ---------------------------------------------------------------------------------------------
// File contents.

function kindOf(path: string): TextKind {
  if (/\.(py|ts|js)$/.test(path)) return "code";
  if (path.endsWith(".json")) return "json";
  if (path.endsWith(".log")) return "logs";
  if (path.includes("用户指南")) return "cjk";
  if (/\.(fr|de)\.md$/.test(path)) return "intl";
  return "prose";
}

/**
 * The file's text: generated once per run, then as read or written. Sizes span 0.5-40 KB with
 * small files commoner (min * (max/min)^(u^1.5): median ~2.3 KB, mean ~6.7 KB), as in real reads.
 */
function fileText(ctx: Ctx, rel: string): string {
  let t = ctx.files.get(rel);
  if (t === undefined) {
    const { min, max } = kFileReadChars;
    const size = Math.round(min * Math.pow(max / min, Math.pow(ctx.r.next(), 1.5)));
    t = clip(generateText(kindOf(rel), size, ctx.r), max);
    ctx.files.set(rel, t);
  }
  return t;
}

/** Cuts to at most `max` code units without splitting a surrogate pair. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const c = s.charCodeAt(max - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
}

/** `cat -n` numbering, cut back at a line boundary so the read stays within the size bound. */
function numbered(t: string): string {
  const lines = t.split("\n");
  const out: string[] = [];
  let len = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = `${String(i + 1).padStart(6)}\t${lines[i]}`;
    if (len + line.length + 1 > kFileReadChars.max) break;
    out.push(line);
    len += line.length + 1;
  }
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Tools: each makes its arguments and its result text, a success or a failure.

const kTools: Record<ToolKey, (ctx: Ctx, failed: boolean) => ToolRun> = {
  read(ctx, failed) {
    const { r, project: p } = ctx;
    if (failed) {
      const path = shown(ctx, missingPath(ctx));
      return { args: { path }, text: notFound(ctx, "open", path, "read_file") };
    }
    const pool = ctx.written.length && chance(r, 0.15) ? ctx.written : pick(r, [p.sources, p.sources, p.sources, p.tests, p.docs, p.data]);
    const rel = pick(r, pool);
    const t = fileText(ctx, rel);
    return { args: { path: shown(ctx, rel) }, text: ctx.harness.lineNumbers && t.length > 2000 ? numbered(t) : t };
  },
  write(ctx, failed) {
    const { r, project: p } = ctx;
    const rel = failed ? missingPath(ctx, true) : chance(r, 0.2) ? missingPath(ctx) : pick(r, chance(r, 0.7) ? p.sources : p.tests);
    const content = generateText(kindOf(rel), logUniform(r, 500, 4000), r);
    const path = shown(ctx, rel);
    if (failed) return { args: { path, content }, text: notFound(ctx, "open", path, "write_file") };
    ctx.files.set(rel, content);
    if (!ctx.written.includes(rel)) ctx.written.push(rel);
    const bytes = Buffer.byteLength(content);
    const msg = pick(r, [`Successfully wrote ${bytes} bytes to ${path}`, `File written: ${path} (${content.split("\n").length} lines)`, `The file ${path} has been updated.`]);
    return { args: { path, content }, text: msg };
  },
  bash(ctx, failed) {
    const { command, output, code } = failed ? failingCommand(ctx) : okCommand(ctx);
    return { args: { command }, text: shellResult(ctx, output, code) };
  },
  search(ctx, failed) {
    const { r, project: p } = ctx;
    const sym = pick(r, p.symbols);
    const pattern = pick(r, [sym, p.lang === "python" ? `def ${sym}` : `function ${sym}`, `${sym}\\(`, `import.*${sym}`, "TODO|FIXME"]);
    if (failed) {
      const path = shown(ctx, pick(r, ["lib", "source", "pkg/internal"]));
      return { args: { pattern, path }, text: `grep: ${path}: No such file or directory` };
    }
    const dir = pick(r, p.dirs);
    return { args: { pattern, path: shown(ctx, dir) }, text: searchHits(ctx, dir, sym) };
  },
  fetch(ctx, failed) {
    const url = docUrl(ctx);
    return { args: { url }, text: failed ? fetchFailure(ctx, url) : webPage(ctx, url) };
  },
  list(ctx, failed) {
    const { r, project: p } = ctx;
    if (failed) {
      const path = shown(ctx, dirname(missingPath(ctx, true)));
      return { args: { path }, text: notFound(ctx, "scandir", path, "list_dir") };
    }
    const dir = pick(r, p.dirs);
    return { args: { path: shown(ctx, dir) }, text: listing(ctx, dir) };
  },
};

/** The harness's own "No such file or directory" failure, as a Python traceback or a Node error. */
function notFound(ctx: Ctx, syscall: "open" | "scandir", path: string, tool: string): string {
  if (ctx.harness.errors === "python") {
    const call = syscall === "open" ? `with open(path, ${tool === "write_file" ? '"w", ' : ""}encoding="utf-8") as f:` : "entries = sorted(os.listdir(path))";
    if (chance(ctx.r, 0.3)) return `Error: [Errno 2] No such file or directory: '${path}'`;
    return `Traceback (most recent call last):\n  File "/opt/agent/tools/runtime.py", line 88, in dispatch\n    return handler(**arguments)\n  File "/opt/agent/tools/files.py", line ${between(ctx.r, 20, 140)}, in ${tool}\n    ${call}\nFileNotFoundError: [Errno 2] No such file or directory: '${path}'`;
  }
  const fn = syscall === "open" ? (tool === "write_file" ? "writeFile" : "readFile") : "readdir";
  return `Error: ENOENT: no such file or directory, ${syscall} '${path}'\n    at async open (node:internal/fs/promises:639:25)\n    at async Object.${fn} (node:internal/fs/promises:1242:14)\n    at async ${tool.replace(/_(\w)/, (_, c: string) => c.toUpperCase())} (/opt/agent/dist/tools/files.js:${between(ctx.r, 10, 90)}:${between(ctx.r, 3, 30)}) {\n  errno: -2,\n  code: 'ENOENT',\n  syscall: '${syscall}',\n  path: '${path}'\n}`;
}

function shellResult(ctx: Ctx, output: string, code: number): string {
  const body = output.endsWith("\n") || output === "" ? output : `${output}\n`;
  switch (ctx.harness.shell) {
    case "returncode": return `<returncode>${code}</returncode>\n<output>\n${body}</output>`;
    case "trailer": return `${body}exit code: ${code}`;
    default: return `Exit code: ${code}\nOutput:\n${body}`;
  }
}

interface Shell {
  command: string;
  output: string;
  code: number;
}

function okCommand(ctx: Ctx): Shell {
  const { r, project: p } = ctx;
  const py = p.lang === "python";
  switch (r.int(10)) {
    case 0:
    case 1: return testRun(ctx);
    case 2: return { command: "git status", output: gitStatus(ctx), code: 0 };
    case 3: {
      const rel = pick(r, p.sources);
      return { command: `git diff ${rel}`, output: `diff --git a/${rel} b/${rel}\nindex ${hex(r, 7)}..${hex(r, 7)} 100644\n--- a/${rel}\n+++ b/${rel}\n${generateText("code", between(r, 200, 2500), r)}`, code: 0 };
    }
    case 4: {
      const dir = pick(r, p.dirs);
      return { command: `ls -la ${dir === "." ? "" : dir}`.trimEnd(), output: longListing(ctx, dir), code: 0 };
    }
    case 5: {
      const rel = pick(r, p.sources);
      const lines = fileText(ctx, rel).split("\n");
      const a = 1 + r.int(Math.max(1, lines.length - 10));
      const b = a + between(r, 10, 80);
      return { command: `sed -n '${a},${b}p' ${rel}`, output: lines.slice(a - 1, b).join("\n"), code: 0 };
    }
    case 6: {
      const files = allFiles(p).filter((f) => f.endsWith(py ? ".py" : ".ts"));
      return { command: `find . -name "*${py ? ".py" : ".ts"}" -not -path "./.git/*" | head -30`, output: files.map((f) => `./${f}`).join("\n"), code: 0 };
    }
    case 7: return { command: py ? "pip install -e ." : "npm install", output: installLog(ctx), code: 0 };
    case 8: return { command: "mkdir -p build && touch build/.keep", output: "", code: 0 };
    default: return { command: py ? "python reproduce_issue.py" : "node dist/cli.js --verbose", output: generateText("logs", logUniform(r, 40, 6000), r), code: 0 };
  }
}

function failingCommand(ctx: Ctx): Shell {
  const { r, project: p } = ctx;
  const missing = missingPath(ctx);
  const x = r.int(6);
  if (x === 0) return { command: `cat ${missing}`, output: `cat: ${missing}: No such file or directory`, code: 1 };
  if (x === 1) return { command: "bash scripts/check.sh", output: "bash: scripts/check.sh: No such file or directory", code: 127 };
  if (x === 2 && p.lang === "python") return pytestFailure(ctx);
  const sym = pick(r, p.symbols);
  const command = p.lang === "python"
    ? pick(r, ["python reproduce_issue.py", `python -c "from ${p.pkg} import ${sym}; print(${sym}())"`])
    : pick(r, ["node dist/cli.js", `npx tsx scripts/${pick(r, kNouns)}.ts`]);
  return { command, output: appTrace(ctx), code: 1 };
}

/** A crash in the project's own code: a Python traceback or a Node uncaught exception. */
function appTrace(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const noun = pick(r, kNouns);
  const frames = Array.from({ length: between(r, 2, 6) }, () => ({ file: `${p.root}/${pick(r, p.sources)}`, line: between(r, 5, 900), fn: pick(r, p.symbols) }));
  if (p.lang === "python") {
    const exc = pick(r, [`KeyError: '${noun}'`, `TypeError: ${pick(r, p.symbols)}() got an unexpected keyword argument '${noun}'`, `AttributeError: 'NoneType' object has no attribute '${noun}'`, `ValueError: invalid literal for int() with base 10: '${hex(r, 4)}'`, `ImportError: cannot import name '${cap(noun)}' from '${p.pkg}.${noun}'`]);
    const body = frames.map((f) => `  File "${f.file}", line ${f.line}, in ${f.fn}\n    ${pick(r, ["return", "result =", "self._state ="])} ${f.fn}(${noun})`).join("\n");
    return `Traceback (most recent call last):\n  File "${p.root}/reproduce_issue.py", line ${between(r, 3, 40)}, in <module>\n    main()\n${body}\n${exc}`;
  }
  const exc = pick(r, [`TypeError: Cannot read properties of undefined (reading '${noun}')`, `RangeError: Invalid array length`, `Error: ${cap(noun)} not initialised`, `TypeError: ${pick(r, p.symbols)} is not a function`]);
  const js = (f: (typeof frames)[number]): string => f.file.replace(/\/src\//, "/dist/").replace(/\.ts$/, ".js");
  const stack = frames.map((f) => `    at ${f.fn} (file://${js(f)}:${f.line}:${between(r, 3, 60)})`).join("\n");
  return `file://${js(frames[0])}:${frames[0].line}\n    const ${noun} = ${frames[0].fn}(options.${noun});\n                  ^\n\n${exc}\n${stack}\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n\nNode.js v20.${between(r, 9, 18)}.${between(r, 0, 3)}`;
}

function pytestFailure(ctx: Ctx): Shell {
  const { r, project: p } = ctx;
  const test = pick(r, p.tests);
  const name = `test_${pick(r, kVerbs)}_${pick(r, kNouns)}`;
  const passed = between(r, 0, 40);
  const trace = appTrace(ctx);
  const exc = trace.slice(trace.lastIndexOf("\n") + 1);
  const output = `============================= test session starts ==============================\nplatform linux -- Python 3.11.${between(r, 2, 9)}, pytest-8.${between(r, 0, 3)}.${between(r, 0, 4)}, pluggy-1.5.0\nrootdir: ${p.root}\ncollected ${passed + 1} items\n\n${test} ${".".repeat(passed % 20)}F\n\n=================================== FAILURES ===================================\n${"_".repeat(20)} ${name} ${"_".repeat(20)}\n${trace}\n=========================== short test summary info ============================\nFAILED ${test}::${name} - ${exc}\n!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n========================= 1 failed, ${passed} passed in ${(r.next() * 5).toFixed(2)}s =========================`;
  return { command: `python -m pytest ${test} -x --tb=native`, output, code: 1 };
}

function testRun(ctx: Ctx): Shell {
  const { r, project: p } = ctx;
  const files = p.tests.slice(0, between(r, 1, p.tests.length));
  const counts = files.map(() => between(r, 1, 30));
  const total = counts.reduce((a, b) => a + b, 0);
  const secs = (r.next() * 8).toFixed(2);
  if (p.lang === "python") {
    let done = 0;
    const lines = files.map((f, i) => `${f} ${".".repeat(counts[i])}${" ".repeat(Math.max(1, 60 - f.length - counts[i]))}[${String(Math.round((100 * (done += counts[i])) / total)).padStart(3)}%]`);
    return { command: `python -m pytest ${files.length === 1 ? files[0] : "tests/"} -q`, output: `${lines.join("\n")}\n\n${total} passed in ${secs}s`, code: 0 };
  }
  const lines = files.map((f, i) => ` ✓ ${f} (${counts[i]} tests) ${between(r, 2, 900)}ms`);
  return { command: `npx vitest run ${files.length === 1 ? files[0] : ""}`.trimEnd(), output: `\n RUN  v1.6.0 ${p.root}\n\n${lines.join("\n")}\n\n Test Files  ${files.length} passed (${files.length})\n      Tests  ${total} passed (${total})\n   Duration  ${secs}s`, code: 0 };
}

function gitStatus(ctx: Ctx): string {
  const changed = ctx.written;
  if (!changed.length) return "On branch main\nYour branch is up to date with 'origin/main'.\n\nnothing to commit, working tree clean";
  return `On branch main\nChanges not staged for commit:\n  (use "git add <file>..." to update what will be committed)\n${changed.map((f) => `\tmodified:   ${f}`).join("\n")}\n\nno changes added to commit (use "git add" and/or "git commit -a")`;
}

function installLog(ctx: Ctx): string {
  const { r, project: p } = ctx;
  if (p.lang === "python") {
    return `Obtaining file://${p.root}\n  Installing build dependencies ... done\n  Checking if build backend supports build_editable ... done\nSuccessfully built ${p.pkg}\nInstalling collected packages: ${p.pkg}\nSuccessfully installed ${p.pkg}-0.${between(r, 1, 9)}.${between(r, 0, 20)}`;
  }
  return `\nadded ${between(r, 20, 900)} packages, and audited ${between(r, 900, 1200)} packages in ${between(r, 2, 40)}s\n\n${between(r, 10, 200)} packages are looking for funding\n  run \`npm fund\` for details\n\nfound 0 vulnerabilities`;
}

function entriesOf(p: Project, dir: string): string[] {
  const prefix = dir === "." ? "" : `${dir}/`;
  const names = new Set<string>();
  for (const f of allFiles(p)) {
    if (!f.startsWith(prefix)) continue;
    const rest = f.slice(prefix.length);
    names.add(rest.includes("/") ? `${rest.slice(0, rest.indexOf("/"))}/` : rest);
  }
  return [...names].sort();
}

function listing(ctx: Ctx, dir: string): string {
  return entriesOf(ctx.project, dir).join("\n");
}

function longListing(ctx: Ctx, dir: string): string {
  const { r } = ctx;
  const entries = [".", "..", ...entriesOf(ctx.project, dir)];
  const line = (name: string): string => {
    const d = name.endsWith("/") || name === "." || name === "..";
    return `${d ? "drwxr-xr-x" : "-rw-r--r--"} ${d ? between(r, 2, 9) : 1} root root ${String(d ? 4096 : between(r, 100, 60000)).padStart(6)} ${pick(r, ["Jan", "Mar", "Nov"])} ${String(between(r, 1, 28)).padStart(2)} ${between(r, 10, 23)}:${between(r, 10, 59)} ${name.replace(/\/$/, "")}`;
  };
  return `total ${between(r, 8, 400)}\n${entries.map(line).join("\n")}`;
}

function searchHits(ctx: Ctx, dir: string, sym: string): string {
  const { r, project: p } = ctx;
  const prefix = dir === "." ? "" : `${dir}/`;
  const files = [...p.sources, ...p.tests].filter((f) => f.startsWith(prefix));
  const n = files.length ? between(r, 0, 30) : 0;
  if (n === 0) return "No matches found.";
  const hits: string[] = [];
  for (let i = 0; i < n; i++) {
    const match = pick(r, p.lang === "python"
      ? [`def ${sym}(self, ${pick(r, kNouns)}=None):`, `result = ${sym}(${pick(r, kNouns)})`, `from .${pick(r, kNouns)} import ${sym}`, `# TODO: ${sym} ignores ${pick(r, kNouns)}`]
      : [`export function ${sym}(${pick(r, kNouns)}: string): void {`, `const ${pick(r, kNouns)} = ${sym}(options);`, `import { ${sym} } from "./${pick(r, kNouns)}.js";`, `// TODO: ${sym} ignores ${pick(r, kNouns)}`]);
    hits.push(`${shown(ctx, pick(r, files))}:${between(r, 1, 900)}: ${match}`);
  }
  return hits.join("\n");
}

function docUrl(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const word = pick(r, kNouns);
  return pick(r, [
    p.lang === "python" ? `https://docs.python.org/3/library/${pick(r, ["functools", "pathlib", "typing", "asyncio", "json"])}.html` : `https://nodejs.org/api/${pick(r, ["fs", "path", "stream", "worker_threads"])}.html`,
    `https://github.com/${p.pkg}/${p.pkg}/issues/${between(r, 10, 9000)}`,
    `https://stackoverflow.com/questions/${between(r, 1_000_000, 79_000_000)}/how-to-${pick(r, kVerbs)}-${word}-in-${p.lang}`,
    `https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/${pick(r, ["Map", "Promise", "Array/sort", "JSON/parse"])}`,
  ]);
}

function webPage(ctx: Ctx, url: string): string {
  const { r } = ctx;
  const kind: TextKind = chance(r, 0.08) ? pick(r, ["cjk", "intl"] as const) : "prose";
  const code = chance(r, 0.5) ? `\n\n\`\`\`${ctx.project.lang}\n${generateText("code", between(r, 100, 1200), r).trim()}\n\`\`\`\n\n` : "\n\n";
  return `# ${cap(pick(r, kVerbs))} ${pick(r, kNouns)}\n\nSource: ${url}\n\n${generateText(kind, logUniform(r, 400, 8000), r)}${code}${generateText("prose", logUniform(r, 100, 4000), r)}`;
}

function fetchFailure(ctx: Ctx, url: string): string {
  const host = new URL(url).host;
  if (ctx.harness.errors === "python") {
    return `Traceback (most recent call last):\n  File "/opt/agent/tools/web.py", line 41, in web_fetch\n    response.raise_for_status()\n  File "/usr/local/lib/python3.11/site-packages/requests/models.py", line 1024, in raise_for_status\n    raise HTTPError(http_error_msg, response=self)\nrequests.exceptions.HTTPError: ${pick(ctx.r, ["404 Client Error: Not Found", "403 Client Error: Forbidden", "503 Server Error: Service Unavailable"])} for url: ${url}`;
  }
  return `TypeError: fetch failed\n    at node:internal/deps/undici/undici:13502:13\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n    at async webFetch (/opt/agent/dist/tools/web.js:18:15) {\n  [cause]: Error: getaddrinfo ENOTFOUND ${host}\n      at GetAddrInfoReqWrap.onlookup [as oncomplete] (node:dns:120:26) {\n    errno: -3008,\n    code: 'ENOTFOUND',\n    syscall: 'getaddrinfo',\n    hostname: '${host}'\n  }\n}`;
}

const hex = (r: Rng, n: number): string => {
  let s = "";
  for (let i = 0; i < n; i++) s += "0123456789abcdef".charAt(r.int(16));
  return s;
};

// ---------------------------------------------------------------------------------------------
// What the people and the model say.

function systemPrompt(ctx: Ctx): string {
  const { r, project: p, harness: h } = ctx;
  const params: Record<ToolKey, [string, Record<string, string>]> = {
    read: ["Read a file and return its contents.", { path: "Path of the file to read." }],
    write: ["Create or overwrite a file with the given content.", { path: "Path of the file to write.", content: "The full new content of the file." }],
    bash: ["Run a shell command in the repository and return its output and exit code.", { command: "The command to run." }],
    search: ["Search file contents with a regular expression; returns path:line: match lines.", { pattern: "Regular expression to search for.", path: "Directory or file to search in." }],
    fetch: ["Fetch a web page and return it as markdown.", { url: "The URL to fetch." }],
    list: ["List the entries of a directory.", { path: "Directory to list." }],
  };
  const defs = (Object.keys(params) as ToolKey[]).map((key) => {
    const [description, props] = params[key];
    const properties = Object.fromEntries(Object.entries(props).map(([k, d]) => [k, { type: "string", description: d }]));
    return JSON.stringify({ name: h.names[key], description, parameters: { type: "object", properties, required: Object.keys(props) } }, null, 2);
  });
  const rules = ["Read the relevant code before changing it.", "Run the tests after every change.", "Keep changes minimal and focused on the task.", "Never invent file contents; read them.", "When you are done, summarise what you changed."];
  return `You are an autonomous software engineering agent working in the repository at ${p.root} (a ${p.lang === "python" ? "Python" : "TypeScript"} project).\n${generateText("prose", between(r, 200, 1200), r).trim()}\n\n# Tools\n\nYou have access to the following tools:\n\n${defs.join("\n\n")}\n\n# Rules\n\n${rules.filter(() => chance(r, 0.8)).map((x, i) => `${i + 1}. ${x}`).join("\n")}`;
}

function taskText(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const sym = pick(r, p.symbols);
  const file = pick(r, p.sources);
  const title = pick(r, [`\`${sym}\` returns the wrong result when the ${pick(r, kNouns)} is empty`, `Crash in \`${sym}\` after upgrading to ${between(r, 1, 4)}.${between(r, 0, 12)}`, `Add support for ${pick(r, kNouns)} in ${file}`, `${cap(pick(r, kVerbs))} is slow on large inputs`]);
  if (chance(r, 0.06)) return `${title}\n\n${generateText(pick(r, ["cjk", "intl"] as const), between(r, 200, 1500), r)}`;
  const repro = `\`\`\`${p.lang}\n${generateText("code", between(r, 150, 1200), r).trim()}\n\`\`\``;
  return pick(r, [
    `<issue>\n${title}\n\n${generateText("prose", between(r, 200, 2500), r).trim()}\n\n${repro}\n</issue>\n\nPlease resolve the issue above with a minimal change to the non-test files.`,
    `${title}. ${generateText("prose", between(r, 100, 800), r).trim()}\n\nTo reproduce:\n\n${repro}`,
    `Can you fix this? ${title}.`,
  ]);
}

function steeringText(ctx: Ctx): string {
  const { r, project: p } = ctx;
  if (chance(r, 0.1)) return generateText(pick(r, ["cjk", "intl", "emoji"] as const), between(r, 40, 300), r).trim();
  const line = pick(r, [
    `Actually, don't modify the tests; only change \`${pick(r, p.sources)}\`.`,
    `Please keep the public API of \`${pick(r, p.symbols)}\` unchanged.`,
    `Stop. Use the existing \`${pick(r, p.symbols)}\` helper instead of writing a new one.`,
    "Can you also add a test for the empty case?",
    `Make sure it still works on ${p.lang === "python" ? "Python 3.8" : "Node 18"}.`,
    `You're going in circles. Look at \`${pick(r, p.sources)}\` first.`,
  ]);
  return chance(r, 0.3) ? `${line} ${generateText("prose", between(r, 40, 400), r).trim()}` : line;
}

function stepText(ctx: Ctx, key: ToolKey, args: Record<string, string>, n: number, steered: boolean, lastFailure: string | undefined): string {
  const { r, project: p } = ctx;
  const lead = steered ? `${pick(r, ["Understood.", "Got it, I'll adjust.", "Okay, changing course."])} ` : lastFailure !== undefined ? `That failed (${lastFailure.trim().slice(0, 120)}). ` : "";
  const say = n > 1 ? "I'll look at a few things in parallel." : {
    read: `Let me read \`${args.path}\` to see how \`${pick(r, p.symbols)}\` works.`,
    write: `Now I'll update \`${args.path}\` with the fix.`,
    bash: pick(r, [`Let me run \`${args.command}\`.`, "Let me check the current state.", "Now let's verify the change."]),
    search: `Searching for \`${args.pattern}\` to find where it is used.`,
    fetch: "Let me check the documentation for this.",
    list: `Let me see what is in \`${args.path}\`.`,
  }[key];
  const more = chance(r, 0.35) ? ` ${generateText("prose", between(r, 40, 500), r).trim()}` : "";
  return lead + say + more;
}

function reasoningPart(ctx: Ctx, redacted: boolean): ReasoningPart {
  const { r, project: p } = ctx;
  if (redacted) return { type: "reasoning", redacted: base64(r, between(r, 300, 2000)) };
  const open = pick(r, [`The user wants \`${pick(r, p.symbols)}\` fixed.`, `So the problem is in \`${pick(r, p.sources)}\`.`, "Let me think about what the output means.", "Hmm, that is not what I expected."]);
  return { type: "reasoning", text: `${open} ${generateText("prose", logUniform(r, 100, 2500), r).trim()}`, signature: base64(r, between(r, 200, 600)) };
}

/** Base64 of `bytes` random bytes, padded: the shape of provider signatures and encrypted data. */
function base64(r: Rng, bytes: number): string {
  const b = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) b[i] = r.int(256);
  return Buffer.from(b).toString("base64");
}

function finalText(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const changed = ctx.written.length
    ? `\n\n## Changes\n\n${ctx.written.map((f) => `- \`${f}\`: ${generateText("prose", between(r, 30, 200), r).trim()}`).join("\n")}`
    : "";
  const head = ctx.written.length ? `I've fixed the issue in \`${pick(r, ctx.written)}\`.` : `I investigated \`${pick(r, p.symbols)}\` but made no changes.`;
  return `${head}${changed}\n\n${generateText("prose", between(r, 100, 1200), r).trim()}`;
}
