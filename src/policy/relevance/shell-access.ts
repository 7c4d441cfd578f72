/**
 * What a shell command does to files and directories, as far as its text tells: which files
 * its output shows (whole, a line range, or some other view of them), which directories it
 * lists, which files it changes, and whether some of its output is none of those (a program's
 * output). Supersession (supersede.ts) compares these between steps.
 *
 * The parser is deliberately small and conservative: heredoc bodies are set apart, the rest is
 * split into pipelines (`&&`, `||`, `;`, newlines) and stages (`|`), each stage into words with
 * shell quoting. A stage it does not understand makes the command's output opaque; an edit it
 * does not see (a program writing a file) only means fewer supersessions, never a wrong one.
 * Work is bounded: only the first kCommandChars characters are read.
 */

/** Characters of a command the parser reads. */
const kCommandChars = 64 << 10;

/** Part of a file an output shows: all of it, lines `from..to` (1-based, inclusive), or some other view named by a key. */
export type LineRange = "full" | { from: number; to: number } | { view: string };

export type Access = { kind: "read"; path: string; range: LineRange } | { kind: "list"; dir: string; recursive: boolean } | { kind: "edit"; path: string };

export interface CommandAccess {
  accesses: Access[];
  /** Some output is not a read or listing (a program ran, a search over a tree): only the same command again supersedes it. */
  opaque: boolean;
}

/** Whether range `later` shows every line `earlier` shows. */
export function rangeCovers(later: LineRange, earlier: LineRange): boolean {
  if (later === "full") return true;
  if (earlier === "full") return false;
  if ("view" in later || "view" in earlier) return "view" in later && "view" in earlier && later.view === earlier.view;
  return later.from <= earlier.from && later.to >= earlier.to;
}

/** A path as compared between steps: `./` leads, doubled and trailing slashes gone, joined to the `cd` directory when relative. */
export function normalizePath(path: string, cwd = ""): string {
  let p = path.trim().replace(/\/{2,}/g, "/");
  while (p.startsWith("./")) p = p.slice(2);
  if (p.length > 1) p = p.replace(/\/+$/, "");
  if (p === "" || p === ".") return cwd || ".";
  if (cwd && cwd !== "." && !p.startsWith("/") && !p.startsWith("~")) return `${cwd}/${p}`;
  return p;
}

/** The command with whitespace runs made one space: two runs of the same command compare equal. */
export function normalizeCommand(command: string): string {
  return command.slice(0, kCommandChars).replace(/\s+/g, " ").trim();
}

type Token = { word: string } | { op: string };

/** Splits heredoc bodies off: the command lines, and each body with the line that opened it. */
function splitHeredocs(text: string): { lines: string[]; bodies: { opener: string; body: string }[] } {
  const raw = text
    .slice(0, kCommandChars)
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/);
  const lines: string[] = [];
  const bodies: { opener: string; body: string }[] = [];
  for (let i = 0; i < raw.length; i++) {
    const line = raw[i];
    lines.push(line);
    const m = /(?<!<)<<-?(?!<)\s*(['"]?)([\w.-]+)\1/.exec(line);
    if (!m) continue;
    const end = raw.findIndex((l, k) => k > i && l.trim() === m[2]);
    const stop = end < 0 ? raw.length : end;
    bodies.push({ opener: line, body: raw.slice(i + 1, stop).join("\n") });
    i = stop;
  }
  return { lines, bodies };
}

/** Words and operators of one command line, with shell quoting (quotes removed from words). */
function tokenize(line: string): Token[] {
  const out: Token[] = [];
  let word = "";
  let inWord = false;
  const flush = () => {
    if (inWord) out.push({ word });
    word = "";
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      const stop = end < 0 ? line.length : end;
      word += line.slice(i + 1, stop);
      inWord = true;
      i = stop;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      flush();
    } else if (c === "#" && !inWord) {
      break;
    } else if ("|&;<>".includes(c)) {
      // `2>` and `2>&1`: a digit word right before a redirection is its file descriptor.
      if ((c === ">" || c === "<") && inWord && /^\d$/.test(word)) {
        word = "";
        inWord = false;
      } else flush();
      const two = line.slice(i, i + 2);
      const op = ["&&", "||", ">>", "<<", "&>", ">&"].includes(two) ? two : c;
      i += op.length - 1;
      out.push({ op });
    } else {
      word += c;
      inWord = true;
    }
  }
  flush();
  return out;
}

/** One stage of a pipeline: its words and where its output is redirected to (files). */
interface Stage {
  words: string[];
  writes: string[];
  /** stdout goes to a file (nothing of it reaches the output). */
  redirected: boolean;
}

/** The pipelines of a line: `&&` / `||` / `;` / `&` separate them, `|` separates stages. */
function pipelines(tokens: Token[]): Stage[][] {
  const all: Stage[][] = [];
  let pipe: Stage[] = [];
  let stage: Stage = { words: [], writes: [], redirected: false };
  const endStage = () => {
    if (stage.words.length > 0 || stage.writes.length > 0) pipe.push(stage);
    stage = { words: [], writes: [], redirected: false };
  };
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if ("word" in t) {
      stage.words.push(t.word);
      continue;
    }
    if (t.op === "|") endStage();
    else if (t.op === "&&" || t.op === "||" || t.op === ";" || t.op === "&") {
      endStage();
      if (pipe.length > 0) all.push(pipe);
      pipe = [];
    } else {
      const next = tokens[k + 1];
      const target = next && "word" in next ? next.word : undefined;
      if (target !== undefined) k++;
      if (t.op === ">&") continue; // 2>&1: a descriptor copy
      if ((t.op === ">" || t.op === ">>" || t.op === "&>") && target !== undefined) {
        if (target !== "/dev/null") stage.writes.push(target);
        stage.redirected = true;
      }
      // `<` and `<<` (its body was set apart) feed stdin: no output of their own.
    }
  }
  endStage();
  if (pipe.length > 0) all.push(pipe);
  return all;
}

/** The program of a stage, after env assignments and `sudo` / `time` / `env` / `command`. */
function program(words: string[]): { name: string; args: string[] } {
  let k = 0;
  while (k < words.length && (/^[A-Za-z_]\w*=/.test(words[k]) || ["sudo", "time", "env", "command", "nohup"].includes(words[k]))) k++;
  const name = (words[k] ?? "").split("/").pop() ?? "";
  return { name, args: words.slice(k + 1) };
}

/** Options of grep, head, tail and sed that take the next word as their value. */
const kValued: Record<string, RegExp> = {
  grep: /^-[efmABCd]$|^--(?:regexp|file|max-count|after-context|before-context|context)$/,
  head: /^-[nc]$/,
  tail: /^-[nc]$/,
  sed: /^-[ef]$/,
};

/** The operands of a stage (words that are not options), the options, and the values options took. */
function operands(name: string, args: string[]): { files: string[]; opts: string[]; values: Map<string, string> } {
  const files: string[] = [];
  const opts: string[] = [];
  const values = new Map<string, string>();
  let optsDone = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (!optsDone && a === "--") optsDone = true;
    else if (!optsDone && a.startsWith("-") && a.length > 1) {
      opts.push(a);
      if (kValued[name]?.test(a) && k + 1 < args.length) values.set(a, args[++k]);
    } else files.push(a);
  }
  return { files, opts, values };
}

/** `sed -n` scripts that print one line range: `10,20p`, `5p`, `30,$p`. */
function sedRange(script: string): LineRange | undefined {
  const m = /^\s*(\d+)(?:\s*,\s*(\d+|\$))?\s*p\s*;?\s*$/.exec(script);
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : m[2] === "$" ? Infinity : Number(m[2]);
  return { from, to };
}

/** The lines `head` shows: `-n N`, `-N`, `-nN`, or ten. */
function headRange(opts: string[], values: Map<string, string>): LineRange | undefined {
  if (values.has("-c")) return undefined;
  const n = values.get("-n") ?? opts.map((o) => /^-n?(\d+)$/.exec(o)?.[1]).find((x) => x !== undefined) ?? "10";
  return /^\d+$/.test(n) ? { from: 1, to: Number(n) } : undefined;
}

/** Python code writing a file: `open('f', 'w')`, `Path('f').write_text(`. */
function pythonWrites(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/open\(\s*(['"])([^'"\n]+)\1\s*,\s*(['"])[wax]\+?b?\3/g)) out.push(m[2]);
  for (const m of code.matchAll(/Path\(\s*(['"])([^'"\n]+)\1\s*\)\s*\.write_(?:text|bytes)\(/g)) out.push(m[2]);
  return out;
}

/** What a source stage of a pipeline reads, or undefined when it is not a plain read. */
function stageRead(name: string, args: string[]): { paths: string[]; range: LineRange } | undefined {
  const { files, opts, values } = operands(name, args);
  if (name === "cat" || name === "nl") return files.length > 0 ? { paths: files, range: "full" } : undefined;
  if (name === "head") {
    const range = headRange(opts, values);
    return range && files.length > 0 ? { paths: files, range } : undefined;
  }
  if (name === "tail" && files.length > 0) return { paths: files, range: { view: `tail ${opts.join(" ")} ${[...values].flat().join(" ")}` } };
  if (name === "sed" && opts.includes("-n") && !opts.some((o) => /^-i/.test(o)) && !values.has("-e") && files.length >= 2) {
    const range = sedRange(files[0]);
    return { paths: files.slice(1), range: range ?? { view: `sed -n ${files[0]}` } };
  }
  if (name === "grep" && !opts.some((o) => /^-[a-zA-Z]*[rR]/.test(o) || o === "--recursive")) {
    const pattern = values.has("-e") || values.has("--regexp") || values.has("-f") ? undefined : files[0];
    const paths = pattern === undefined ? files : files.slice(1);
    if (paths.length === 0 || paths.some((p) => /[*?]/.test(p))) return undefined;
    return { paths, range: { view: `grep ${args.join(" ")}` } };
  }
  return undefined;
}

/** A filter stage after a full read: the lines it keeps, or undefined for any other view. */
function filterRange(stage: Stage): LineRange | undefined {
  const { name, args } = program(stage.words);
  const { files, opts, values } = operands(name, args);
  if (name === "sed" && opts.includes("-n") && !values.has("-e") && files.length === 1) return sedRange(files[0]);
  if (name === "head" && files.length === 0) return headRange(opts, values);
  return undefined;
}

/** Programs whose output (if any) says nothing about files: they change files or the shell only. */
const kSilent = new Set([
  "cd",
  "mkdir",
  "rm",
  "rmdir",
  "touch",
  "mv",
  "cp",
  "chmod",
  "export",
  "true",
  "sleep",
  "echo",
  "printf",
  "sed",
  "perl",
  "tee",
  "source",
  "set",
  "unset",
  "clear",
]);

/** The files a stage changes (besides its redirections). */
function stageEdits(name: string, args: string[], bodies: readonly { opener: string; body: string }[]): string[] {
  const { files, opts, values } = operands(name, args);
  if (name === "sed" && opts.some((o) => /^-i/.test(o) || o === "--in-place")) return values.has("-e") ? files : files.slice(1);
  if (name === "perl" && opts.some((o) => /^-\w*i/.test(o))) return files.slice(opts.some((o) => /e$/.test(o)) ? 1 : 0);
  if (name === "rm" || name === "touch" || name === "mv" || name === "tee") return files;
  if (name === "cp") return files.slice(-1);
  if (/^python[\d.]*$/.test(name)) {
    const c = args.indexOf("-c");
    if (c >= 0 && c + 1 < args.length) return pythonWrites(args[c + 1]);
    if (args.length === 0 || args[0] === "-") return bodies.flatMap((b) => (/\bpython/.test(b.opener) ? pythonWrites(b.body) : []));
  }
  return [];
}

/** What one pipeline shows and changes, added to `acc`; the working directory after it. */
function pipelineAccess(pipe: Stage[], cwd: string, bodies: readonly { opener: string; body: string }[], acc: CommandAccess): string {
  for (const st of pipe) {
    const { name, args } = program(st.words);
    for (const p of [...st.writes, ...stageEdits(name, args, bodies)]) acc.accesses.push({ kind: "edit", path: normalizePath(p, cwd) });
  }
  const first = program(pipe[0].words);
  if (pipe.length === 1 && first.name === "cd") return first.args.length === 1 ? normalizePath(first.args[0], cwd) : cwd;
  if (pipe[pipe.length - 1].redirected) return cwd; // its output went to a file
  const read = stageRead(first.name, first.args);
  if (read) {
    const filtered = pipe.length === 2 && read.range === "full" ? filterRange(pipe[1]) : undefined;
    const range: LineRange = pipe.length === 1 ? read.range : (filtered ?? { view: normalizeCommand(pipe.map((s) => s.words.join(" ")).join(" | ")) });
    for (const p of read.paths) acc.accesses.push({ kind: "read", path: normalizePath(p, cwd), range });
    return cwd;
  }
  const list = pipe.length === 1 ? stageList(first.name, first.args) : undefined;
  if (list) {
    for (const d of list.dirs) acc.accesses.push({ kind: "list", dir: normalizePath(d, cwd), recursive: list.recursive });
    return cwd;
  }
  // A sed or perl that edits nothing prints what it made of its input.
  const prints = (first.name === "sed" || first.name === "perl") && stageEdits(first.name, first.args, bodies).length === 0;
  const silent = pipe.length === 1 && kSilent.has(first.name) && !prints;
  if (!silent) acc.opaque = true;
  return cwd;
}

/** The directories a listing shows: `ls [-R] dirs`, `tree dir`, `find dir` with no predicate. */
function stageList(name: string, args: string[]): { dirs: string[]; recursive: boolean } | undefined {
  const { files, opts } = operands(name, args);
  if (name === "ls") return { dirs: files.length > 0 ? files : ["."], recursive: opts.some((o) => /^-[a-zA-Z]*R/.test(o) || o === "--recursive") };
  if (name === "tree" && files.length <= 1) return { dirs: files.length > 0 ? files : ["."], recursive: true };
  if (name === "find" && opts.length === 0 && files.length <= 1) return { dirs: files.length > 0 ? files : ["."], recursive: true };
  return undefined;
}

/** What `command` reads, lists and changes (see the module comment). */
export function commandAccess(command: string): CommandAccess {
  const acc: CommandAccess = { accesses: [], opaque: false };
  const { lines, bodies } = splitHeredocs(command);
  let cwd = "";
  for (const line of lines) for (const pipe of pipelines(tokenize(line))) cwd = pipelineAccess(pipe, cwd, bodies, acc);
  return acc;
}
