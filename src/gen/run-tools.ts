/**
 * The tools of a generated run (src/gen/run.ts): each makes its arguments and its result text, a
 * success or a failure, in the run's harness style (shell exit-code wrapper, Python or Node
 * errors), from the simulated project (run-project.ts).
 */
import {
  allFiles,
  between,
  cap,
  chance,
  dirname,
  fileText,
  kindOf,
  kNouns,
  kVerbs,
  logUniform,
  missingPath,
  numbered,
  pick,
  shown,
  type Ctx,
  type Project,
  type ToolKey,
} from "./run-project.js";
import { syntheticText, type Rng, type TextKind } from "./text.js";

interface ToolRun {
  args: Record<string, string>;
  text: string;
}

/** How often a single-call step uses each tool. */
const kToolWeights: readonly [ToolKey, number][] = [
  ["bash", 32],
  ["read", 26],
  ["search", 12],
  ["write", 10],
  ["list", 8],
  ["fetch", 6],
];
/** Parallel steps use read-only tools. */
export const kParallelTools: readonly ToolKey[] = ["read", "read", "read", "search", "list", "fetch"];

/** The tool of a single-call step, by kToolWeights. */
export function weightedTool(r: Rng): ToolKey {
  let x = r.int(kToolWeights.reduce((n, [, w]) => n + w, 0));
  for (const [key, w] of kToolWeights) if ((x -= w) < 0) return key;
  return "bash";
}

export const kTools: Record<ToolKey, (ctx: Ctx, failed: boolean) => ToolRun> = {
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
    const content = syntheticText(kindOf(rel), logUniform(r, 500, 4000), r);
    const path = shown(ctx, rel);
    if (failed) return { args: { path, content }, text: notFound(ctx, "open", path, "write_file") };
    ctx.files.set(rel, content);
    if (!ctx.written.includes(rel)) ctx.written.push(rel);
    const bytes = Buffer.byteLength(content);
    const msg = pick(r, [
      `Successfully wrote ${bytes} bytes to ${path}`,
      `File written: ${path} (${content.split("\n").length} lines)`,
      `The file ${path} has been updated.`,
    ]);
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
    case "returncode":
      return `<returncode>${code}</returncode>\n<output>\n${body}</output>`;
    case "trailer":
      return `${body}exit code: ${code}`;
    default:
      return `Exit code: ${code}\nOutput:\n${body}`;
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
    case 1:
      return testRun(ctx);
    case 2:
      return { command: "git status", output: gitStatus(ctx), code: 0 };
    case 3: {
      const rel = pick(r, p.sources);
      return {
        command: `git diff ${rel}`,
        output: `diff --git a/${rel} b/${rel}\nindex ${hex(r, 7)}..${hex(r, 7)} 100644\n--- a/${rel}\n+++ b/${rel}\n${syntheticText("code", between(r, 200, 2500), r)}`,
        code: 0,
      };
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
    case 7:
      return { command: py ? "pip install -e ." : "npm install", output: installLog(ctx), code: 0 };
    case 8:
      return { command: "mkdir -p build && touch build/.keep", output: "", code: 0 };
    default:
      return { command: py ? "python reproduce_issue.py" : "node dist/cli.js --verbose", output: syntheticText("logs", logUniform(r, 40, 6000), r), code: 0 };
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
  const command =
    p.lang === "python"
      ? pick(r, ["python reproduce_issue.py", `python -c "from ${p.pkg} import ${sym}; print(${sym}())"`])
      : pick(r, ["node dist/cli.js", `npx tsx scripts/${pick(r, kNouns)}.ts`]);
  return { command, output: appTrace(ctx), code: 1 };
}

/** A crash in the project's own code: a Python traceback or a Node uncaught exception. */
function appTrace(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const noun = pick(r, kNouns);
  const frames = Array.from({ length: between(r, 2, 6) }, () => ({
    file: `${p.root}/${pick(r, p.sources)}`,
    line: between(r, 5, 900),
    fn: pick(r, p.symbols),
  }));
  if (p.lang === "python") {
    const exc = pick(r, [
      `KeyError: '${noun}'`,
      `TypeError: ${pick(r, p.symbols)}() got an unexpected keyword argument '${noun}'`,
      `AttributeError: 'NoneType' object has no attribute '${noun}'`,
      `ValueError: invalid literal for int() with base 10: '${hex(r, 4)}'`,
      `ImportError: cannot import name '${cap(noun)}' from '${p.pkg}.${noun}'`,
    ]);
    const body = frames
      .map((f) => `  File "${f.file}", line ${f.line}, in ${f.fn}\n    ${pick(r, ["return", "result =", "self._state ="])} ${f.fn}(${noun})`)
      .join("\n");
    return `Traceback (most recent call last):\n  File "${p.root}/reproduce_issue.py", line ${between(r, 3, 40)}, in <module>\n    main()\n${body}\n${exc}`;
  }
  const exc = pick(r, [
    `TypeError: Cannot read properties of undefined (reading '${noun}')`,
    `RangeError: Invalid array length`,
    `Error: ${cap(noun)} not initialised`,
    `TypeError: ${pick(r, p.symbols)} is not a function`,
  ]);
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
    const lines = files.map(
      (f, i) =>
        `${f} ${".".repeat(counts[i])}${" ".repeat(Math.max(1, 60 - f.length - counts[i]))}[${String(Math.round((100 * (done += counts[i])) / total)).padStart(3)}%]`,
    );
    return {
      command: `python -m pytest ${files.length === 1 ? files[0] : "tests/"} -q`,
      output: `${lines.join("\n")}\n\n${total} passed in ${secs}s`,
      code: 0,
    };
  }
  const lines = files.map((f, i) => ` ✓ ${f} (${counts[i]} tests) ${between(r, 2, 900)}ms`);
  return {
    command: `npx vitest run ${files.length === 1 ? files[0] : ""}`.trimEnd(),
    output: `\n RUN  v1.6.0 ${p.root}\n\n${lines.join("\n")}\n\n Test Files  ${files.length} passed (${files.length})\n      Tests  ${total} passed (${total})\n   Duration  ${secs}s`,
    code: 0,
  };
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
    const match = pick(
      r,
      p.lang === "python"
        ? [
            `def ${sym}(self, ${pick(r, kNouns)}=None):`,
            `result = ${sym}(${pick(r, kNouns)})`,
            `from .${pick(r, kNouns)} import ${sym}`,
            `# TODO: ${sym} ignores ${pick(r, kNouns)}`,
          ]
        : [
            `export function ${sym}(${pick(r, kNouns)}: string): void {`,
            `const ${pick(r, kNouns)} = ${sym}(options);`,
            `import { ${sym} } from "./${pick(r, kNouns)}.js";`,
            `// TODO: ${sym} ignores ${pick(r, kNouns)}`,
          ],
    );
    hits.push(`${shown(ctx, pick(r, files))}:${between(r, 1, 900)}: ${match}`);
  }
  return hits.join("\n");
}

function docUrl(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const word = pick(r, kNouns);
  return pick(r, [
    p.lang === "python"
      ? `https://docs.python.org/3/library/${pick(r, ["functools", "pathlib", "typing", "asyncio", "json"])}.html`
      : `https://nodejs.org/api/${pick(r, ["fs", "path", "stream", "worker_threads"])}.html`,
    `https://github.com/${p.pkg}/${p.pkg}/issues/${between(r, 10, 9000)}`,
    `https://stackoverflow.com/questions/${between(r, 1_000_000, 79_000_000)}/how-to-${pick(r, kVerbs)}-${word}-in-${p.lang}`,
    `https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/${pick(r, ["Map", "Promise", "Array/sort", "JSON/parse"])}`,
  ]);
}

function webPage(ctx: Ctx, url: string): string {
  const { r } = ctx;
  const kind: TextKind = chance(r, 0.08) ? pick(r, ["cjk", "intl"] as const) : "prose";
  const code = chance(r, 0.5) ? `\n\n\`\`\`${ctx.project.lang}\n${syntheticText("code", between(r, 100, 1200), r).trim()}\n\`\`\`\n\n` : "\n\n";
  return `# ${cap(pick(r, kVerbs))} ${pick(r, kNouns)}\n\nSource: ${url}\n\n${syntheticText(kind, logUniform(r, 400, 8000), r)}${code}${syntheticText("prose", logUniform(r, 100, 4000), r)}`;
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
