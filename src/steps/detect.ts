/**
 * What a tool output is and how it ended: content type (JSON, text, binary, or a language by
 * the file's extension), exit code, error head and line count. Every function here is bounded
 * on huge inputs: JSON is parsed only below kParseLimit, error heads are looked for in the
 * first and last kScanWindow characters, and line counting is an indexOf loop.
 */

/** Outputs above this many characters are classified without JSON.parse. */
export const kParseLimit = 4 << 20;
/** Characters at each end of an output that error and exit-code patterns look at. */
export const kScanWindow = 64 << 10;

const kLanguages: Record<string, string> = {
  py: "Python",
  pyi: "Python",
  ipynb: "Jupyter",
  js: "JavaScript",
  mjs: "JavaScript",
  cjs: "JavaScript",
  jsx: "JavaScript",
  ts: "TypeScript",
  tsx: "TypeScript",
  mts: "TypeScript",
  cts: "TypeScript",
  rs: "Rust",
  go: "Go",
  java: "Java",
  kt: "Kotlin",
  scala: "Scala",
  rb: "Ruby",
  php: "PHP",
  c: "C",
  h: "C",
  cc: "C++",
  cpp: "C++",
  cxx: "C++",
  hpp: "C++",
  hh: "C++",
  cs: "C#",
  swift: "Swift",
  m: "Objective-C",
  mm: "Objective-C",
  pony: "Pony",
  lua: "Lua",
  pl: "Perl",
  r: "R",
  jl: "Julia",
  ex: "Elixir",
  exs: "Elixir",
  erl: "Erlang",
  hs: "Haskell",
  ml: "OCaml",
  clj: "Clojure",
  dart: "Dart",
  sh: "Shell",
  bash: "Shell",
  zsh: "Shell",
  ps1: "PowerShell",
  sql: "SQL",
  html: "HTML",
  htm: "HTML",
  css: "CSS",
  scss: "SCSS",
  vue: "Vue",
  svelte: "Svelte",
  md: "Markdown",
  markdown: "Markdown",
  rst: "reStructuredText",
  txt: "text",
  log: "log",
  json: "JSON",
  jsonl: "JSONL",
  yaml: "YAML",
  yml: "YAML",
  toml: "TOML",
  ini: "INI",
  cfg: "INI",
  xml: "XML",
  csv: "CSV",
  tsv: "TSV",
  proto: "Protobuf",
  graphql: "GraphQL",
  tf: "Terraform",
  dockerfile: "Dockerfile",
  makefile: "Makefile",
  cmake: "CMake",
  gradle: "Gradle",
  png: "binary",
  jpg: "binary",
  jpeg: "binary",
  gif: "binary",
  webp: "binary",
  pdf: "binary",
  zip: "binary",
  gz: "binary",
  tar: "binary",
  so: "binary",
  exe: "binary",
  wasm: "binary",
  pyc: "binary",
};

/** The extension of a path, lower-cased, or "" (`Dockerfile` and `Makefile` count as their own). */
export function extensionOf(path: string): string {
  const base =
    path
      .replace(/[\\/]+$/, "")
      .split(/[\\/]/)
      .pop() ?? "";
  const lower = base.toLowerCase();
  if (lower === "dockerfile" || lower === "makefile") return lower;
  const dot = lower.lastIndexOf(".");
  return dot > 0 ? lower.slice(dot + 1) : "";
}

/** The language of a file by its extension ("Python", "Markdown", …), or undefined. */
export function languageOf(path: string): string | undefined {
  return kLanguages[extensionOf(path)];
}

/** The characters isBinaryText counts (NUL included). */
const kSuspect = /[\x00-\x08\x0b\x0e-\x1f\ufffd]/;

/** A NUL, or more than 10% control characters in the first 8 KB (tabs, newlines and CR aside). */
export function isBinaryText(text: string): boolean {
  const n = Math.min(text.length, 8192);
  // Most outputs hold no control character at all: one native scan says so.
  if (!kSuspect.test(n < text.length ? text.slice(0, n) : text)) return false;
  let control = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return true;
    if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) control++;
    else if (c === 0xfffd) control++;
  }
  return n > 0 && control / n > 0.1;
}

/** The output parsed as JSON when it is an object or array below kParseLimit, else undefined. */
export function parseJsonOutput(text: string): unknown {
  if (text.length > kParseLimit) return undefined;
  const t = text.trimStart();
  if (t[0] !== "{" && t[0] !== "[") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export type ContentType = "JSON" | "text" | "binary" | (string & {});

/**
 * Step reduction's detected type: "binary" for binary content, "JSON" for JSON (by extension or by
 * parsing), the file's language by extension ("Python", "Markdown"), else "text".
 */
export function detectContentType(text: string, path?: string): ContentType {
  if (isBinaryText(text)) return "binary";
  const lang = path ? languageOf(path) : undefined;
  if (lang && lang !== "text" && lang !== "log") return lang;
  if (text.length > kParseLimit) {
    const t = text.trim();
    if ((t[0] === "{" && t.at(-1) === "}") || (t[0] === "[" && t.at(-1) === "]")) return "JSON";
    return "text";
  }
  return parseJsonOutput(text) !== undefined ? "JSON" : "text";
}

/** The file extension an offloaded output gets: the source file's own, else by content. */
export function offloadExtension(type: ContentType, path?: string): string {
  const ext = path ? extensionOf(path) : "";
  if (ext && /^[a-z0-9]{1,10}$/.test(ext)) return ext;
  return type === "JSON" ? "json" : type === "binary" ? "bin" : "txt";
}

/** Lines of `text` (a trailing newline does not start a line; "" has 0). */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n - 1 : n;
}

/** The head and tail windows of a long text (both, when it is short: the text). */
function windows(text: string): string {
  return text.length <= 2 * kScanWindow ? text : text.slice(0, kScanWindow) + "\n" + text.slice(-kScanWindow);
}

const kExitPatterns = [
  /<returncode>\s*(-?\d+)\s*<\/returncode>/i,
  /\b(?:exit(?:ed)?(?: with)?(?: status| code)|exit_code|exitcode|return ?code|returncode)\b["']?\s*[:=]?\s*(-?\d+)/i,
  /\bprocess exited with code (-?\d+)/i,
];

/** The exit code an output reports (mini-swe-agent, OpenHands, JSON fields, shells), or undefined. */
export function extractExitCode(output: string, json?: unknown): number | undefined {
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const o = json as Record<string, unknown>;
    for (const k of ["exit_code", "exitCode", "returncode", "return_code", "code", "status_code"]) {
      if (typeof o[k] === "number" && Number.isInteger(o[k]) && k !== "code" && k !== "status_code") return o[k] as number;
    }
  }
  const w = windows(output);
  for (const re of kExitPatterns) {
    const m = re.exec(w);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** The body of mini-swe-agent's `<returncode>…</returncode><output>…</output>` wrapper, else the text. */
export function unwrapOutput(output: string): string {
  if (!output.startsWith("<returncode>")) return output;
  const open = output.indexOf("<output>");
  const close = output.lastIndexOf("</output>");
  if (open === -1 || close < open) return output;
  let body = output.slice(open + 8, close);
  if (body.startsWith("\n")) body = body.slice(1);
  return body;
}

const kErrorLine =
  /^(?:[\w.]*(?:Error|Exception|Exit)\b:?.*|error(?:\[\w+\])?:.*|ERROR\b.*|Error\b.*|fatal:.*|FATAL\b.*|FAILED\b.*|Traceback \(most recent call last\):|panic:.*|.*: (?:command not found|No such file or directory|Permission denied)\b.*|.*\bdid not appear verbatim\b.*|No replacement was performed.*)$/;

/** Whether one line of an output reads as an error line (the lines errorHead picks from). */
export function isErrorLine(line: string): boolean {
  const t = line.trim();
  return t !== "" && kErrorLine.test(t);
}

/**
 * The most telling error line of an output, at most `max` characters: the last
 * `SomethingError: message` line of a traceback, else the first line that reads as an error,
 * else the first non-empty line.
 */
export function errorHead(output: string, max = 200): string {
  const lines = windows(output).split(/\r?\n/);
  let best: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    if (!line || !kErrorLine.test(line)) continue;
    if (/^(?:error|ERROR|Error|FAILED|FATAL):?$/.test(line)) {
      // A bare label: the message is on the next non-empty line.
      const next = lines
        .slice(i + 1)
        .find((l) => l.trim())
        ?.trim();
      if (next) line = `${line.replace(/:?$/, ":")} ${next}`;
    }
    if (/^[\w.]*(?:Error|Exception)\b/.test(line))
      best = line; // the last one wins: a traceback's cause line
    else best ??= line;
  }
  best ??= lines.map((l) => l.trim()).find((l) => l && !/^<\/?(?:returncode|output)>/.test(l)) ?? "";
  best = best.replace(/^Traceback \(most recent call last\):$/, "Traceback");
  return best.length > max ? best.slice(0, max - 1) + "…" : best;
}

/**
 * Whether a tool output failed: the provider flagged it an error, its exit code is non-zero, or
 * it reads as a failure (looksFailed). One definition for the reducer's rules, the compactor's
 * failure lines and the eval's failed-visible metric.
 */
export function isFailedOutput(output: string, json: unknown, isError: boolean | undefined, exitCode: number | undefined): boolean {
  return !!isError || (exitCode !== undefined && exitCode !== 0) || looksFailed(output, json);
}

/** Whether an output reads as a failure by its first line or a JSON error field. */
export function looksFailed(output: string, json?: unknown): boolean {
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const o = json as Record<string, unknown>;
    if (o.success === false || o.ok === false) return true;
    if (o.error !== undefined && o.error !== null && o.error !== false && o.error !== "") return true;
  }
  const first = output.trimStart().slice(0, 400).split(/\r?\n/, 1)[0] ?? "";
  return (
    /^(?:Error\b|ERROR\b|error:|Exception\b|Traceback \(most recent call last\)|fatal:|FATAL\b|panic:)/.test(first) ||
    /^No replacement was performed\b/.test(first) ||
    /\bdid not appear verbatim\b/.test(first)
  );
}
