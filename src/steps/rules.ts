import type { ToolCategory } from "./group-steps.js";
import { formatSize } from "./format-size.js";
import {
  countLines,
  detectContentType,
  errorHead,
  extensionOf,
  extractExitCode,
  isFailedOutput,
  offloadExtension,
  parseJsonOutput,
  unwrapOutput,
} from "./detect.js";
import type { ReducedStep, StepAction } from "./types.js";

/**
 * Step reduction's offloading thresholds. Outputs above a threshold are offloaded to the store and
 * replaced by their observation; written content is never stored (it is already on disk).
 */
export interface ReductionThresholds {
  /** File content offloaded above this many bytes (001: "> 1KB"). @default 1024 */
  fileBytes: number;
  /** Search results offloaded above this many results (001: "> 5 results"). @default 5 */
  searchResults: number;
  /** Shell output offloaded above this many characters (001: "> 500 chars"). @default 500 */
  shellChars: number;
  /** A listing offloaded above this many entries (001: "full list if > 10 items"). @default 10 */
  listEntries: number;
  /** Browser content always offloaded (001: "Always"). @default true */
  browserAlways: boolean;
  /** Any other tool's output offloaded above this many characters (our decision). @default 500 */
  otherChars: number;
}

export const kDefaultThresholds: Readonly<ReductionThresholds> = Object.freeze({
  fileBytes: 1024,
  searchResults: 5,
  shellChars: 500,
  listEntries: 10,
  browserAlways: true,
  otherChars: 500,
});

/** One tool call and its result, as a rule sees them. */
export interface RuleInput {
  tool: string;
  /** The arguments parsed from JSON when they are an object, else {} (see rawArgs). */
  args: Record<string, unknown>;
  /** The arguments as the agent sent them. */
  rawArgs: string;
  /** Whether rawArgs parsed as a JSON object. */
  argsValid: boolean;
  /** The result's text (text parts joined); "" when there is no result. */
  output: string;
  /** Bytes of the result (UTF-8, or the media size). */
  outputBytes: number;
  /** The result holds media or binary data. */
  binary: boolean;
  /** The provider flagged the result as an error (is_error, isError). */
  isError: boolean;
  /** No result answers the call (the run ended on it, or the result was lost). */
  missingResult: boolean;
}

/** What a rule returns (the step's facts, see ReducedStep); the reducer adds ids, offloading and redaction. */
export type RuleOutput = Pick<ReducedStep, "minimalArgs" | "observation" | "summary" | "success" | "error" | "size" | "count" | "exitCode" | "lines"> & {
  /** Offload the output under this kind and extension; null keeps it in the step. */
  offload: { kind: string; ext: string } | null;
};

/** A reduction rule: which tools it takes, their category and action, and how to reduce them. */
export interface ReductionRule {
  name: string;
  /** Tool names (exact), a pattern over the name, or a predicate that may look at the arguments. */
  match: string | readonly string[] | RegExp | ((tool: string, args: Record<string, unknown>) => boolean);
  category: ToolCategory;
  action: StepAction;
  reduce(input: RuleInput, thresholds: ReductionThresholds): RuleOutput;
}

export function ruleMatches(rule: ReductionRule, tool: string, args: Record<string, unknown>): boolean {
  const m = rule.match;
  if (typeof m === "string") return m === tool;
  if (m instanceof RegExp) return m.test(tool);
  if (typeof m === "function") return m(tool, args);
  return m.includes(tool);
}

// ---------------------------------------------------------------- argument helpers

/** The first string-valued argument among `keys`. */
function argString(args: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = args[k];
    if (typeof v === "string" && v.length > 0) return v;
  }
  return undefined;
}

const kPathKeys = [
  "path",
  "file_path",
  "filePath",
  "filename",
  "file_name",
  "file",
  "target_file",
  "absolute_path",
  "notebook_path",
  "dir",
  "directory",
  "dir_path",
  "relative_workspace_path",
];
const kQueryKeys = ["query", "q", "pattern", "regex", "search_term", "search", "term", "keyword", "keywords", "file_name", "name"];
const kUrlKeys = ["url", "uri", "href", "link", "target"];

/**
 * One line of at most `max` characters (newlines shown as ⏎). What shows comes from the text's
 * start, and a start's flat form is a start of the whole's: a long text (a command with a file
 * in a heredoc) is flattened only as far as the line needs, all of it only when that start is
 * mostly whitespace.
 */
export function oneLine(text: string, max = 80): string {
  const enough = 4 * max + 64;
  const start = text.length > enough ? flatLine(text.slice(0, enough)) : "";
  const flat = start.length > max ? start : flatLine(text);
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

/** `text` on one line: each run of whitespace one space, or ` ⏎ ` where it holds a newline; trimmed. */
function flatLine(text: string): string {
  return text
    .replace(/\s*\r?\n\s*/g, " ⏎ ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The shell command of a call: `command` as a string or argv, joined with `args` (001's form). */
export function shellCommand(input: RuleInput): string {
  const a = input.args;
  const cmd = a.command ?? a.cmd ?? a.script ?? a.code ?? a.input;
  const parts: string[] = [];
  if (typeof cmd === "string") parts.push(cmd);
  else if (Array.isArray(cmd)) parts.push(cmd.map(String).join(" "));
  if (Array.isArray(a.args)) parts.push(a.args.map(String).join(" "));
  else if (typeof a.args === "string") parts.push(a.args);
  if (parts.length === 0) return input.argsValid ? "" : input.rawArgs;
  return parts.join(" ").trim();
}

/**
 * The head of a command for the observation ("git log --oneline -20" → "git log"): the first
 * command after leading `cd …&&` / env assignments, its program's basename and, when the next
 * word reads as a subcommand or a script, that word.
 */
export function commandHead(command: string): string {
  let c = command.trim().split(/\r?\n/, 1)[0];
  for (;;) {
    const m = /^(?:cd\s+\S+|export\s+\S+|[A-Z_][A-Z0-9_]*=\S*)\s*(?:&&|;)\s*/.exec(c);
    if (!m) break;
    c = c.slice(m[0].length);
  }
  c = c.replace(/^(?:sudo|time|env)\s+/, "").replace(/^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+/, "");
  const words = c.split(/\s+/).filter(Boolean);
  if (words.length === 0) return "command";
  const program = words[0].split("/").pop() || words[0];
  const next = words[1];
  if (next && /^[A-Za-z][\w.:-]*$/.test(next) && next.length <= 40) return `${program} ${next}`;
  return program;
}

/** Where a URL goes, without scheme, query or trailing slash (001: "example.com/article"). */
export function shortUrl(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname.replace(/\/+$/, "");
    return oneLine(u.host + path, 80);
  } catch {
    return oneLine(url, 80);
  }
}

/** Shared failure logic: the provider's flag, a non-zero exit code, or an output that reads as an error. */
function failure(input: RuleInput, json: unknown, exitCode?: number): { success: boolean; error?: string } {
  if (input.missingResult) return { success: true };
  if (!isFailedOutput(input.output, json, input.isError, exitCode)) return { success: true };
  const jsonError = json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>).error : undefined;
  const error = typeof jsonError === "string" && jsonError ? oneLine(jsonError, 200) : errorHead(unwrapOutput(input.output));
  return { success: false, error: error || (exitCode !== undefined ? `exit ${exitCode}` : "failed") };
}

const kNoResult = " (no result)";

/** Items of a list-like JSON result: an array, or the array under one of `keys`. */
function listItems(json: unknown, keys: readonly string[]): unknown[] | undefined {
  if (Array.isArray(json)) return json;
  if (json && typeof json === "object") {
    for (const k of keys) {
      const v = (json as Record<string, unknown>)[k];
      if (Array.isArray(v)) return v;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- built-in rules

const isEditorCommand = (tool: string, args: Record<string, unknown>, commands: readonly string[]) =>
  /^(?:str_replace_editor|str_replace_based_edit_tool|text_editor|edit_file|editor)$/.test(tool) &&
  typeof args.command === "string" &&
  commands.includes(args.command);

export const fileReadRule: ReductionRule = {
  name: "file.read",
  match: (tool, args) =>
    /^(?:fs:read_file|read_file|readFile|Read|read|cat|open|open_file|view_file|view|read_text_file|get_file_contents|NotebookRead)$/.test(tool) ||
    isEditorCommand(tool, args, ["view"]),
  category: "file",
  action: "read",
  reduce(input, t) {
    const path = argString(input.args, kPathKeys) ?? (input.argsValid ? "file" : oneLine(input.rawArgs, 60));
    const json = parseJsonOutput(input.output);
    const { success, error } = failure(input, json);
    const content =
      json && typeof json === "object" && typeof (json as Record<string, unknown>).content === "string"
        ? (json as Record<string, string>).content
        : input.output;
    const size = input.binary ? input.outputBytes : Buffer.byteLength(content);
    const type = input.binary ? "binary" : detectContentType(content, path);
    const lines = input.binary ? undefined : countLines(content);
    const observation = input.missingResult
      ? `Read ${path}${kNoResult}`
      : success
        ? `Read ${path} (${size} bytes, ${type})`
        : `Failed to read ${path}: ${error}`;
    return {
      minimalArgs: { path },
      observation,
      summary: `Read ${path} (${formatSize(size)})`,
      success,
      error,
      size,
      lines,
      offload: success && !input.missingResult && size > t.fileBytes ? { kind: "read", ext: offloadExtension(type, path) } : null,
    };
  },
};

export const fileWriteRule: ReductionRule = {
  name: "file.write",
  match: (tool, args) =>
    /^(?:fs:write_file|write_file|writeFile|Write|write|create|create_file|edit|Edit|MultiEdit|edit_file|apply_patch|insert|NotebookEdit|fs:delete|delete_file)$/.test(
      tool,
    ) || isEditorCommand(tool, args, ["create", "str_replace", "insert", "undo_edit"]),
  category: "file",
  action: "write",
  reduce(input) {
    const a = input.args;
    const path = argString(a, kPathKeys) ?? (input.argsValid ? "file" : oneLine(input.rawArgs, 60));
    const json = parseJsonOutput(input.output);
    const { success, error } = failure(input, json);
    const written = argString(a, ["content", "file_text", "text", "new_str", "new_string", "replace", "patch", "new_source"]);
    const size = written !== undefined ? Buffer.byteLength(written) : undefined;
    const edit = /edit|replace|insert|patch/i.test(input.tool) && !/^(?:create)$/.test(String(a.command ?? ""));
    const deleted = /delete/i.test(input.tool);
    const verb = deleted ? "Deleted" : edit ? "Edited" : "Wrote";
    const observation = input.missingResult
      ? `${verb} ${path}${kNoResult}`
      : !success
        ? `Failed to write ${path}: ${error}`
        : size !== undefined && !deleted
          ? `${verb} ${path} (${size} bytes)`
          : `${verb} ${path}`;
    // Written content is never stored: it is already on disk (001).
    return { minimalArgs: { path }, observation, summary: `${verb} ${path}`, success, error, size, offload: null };
  },
};

export const fileListRule: ReductionRule = {
  name: "file.list",
  match: /^(?:fs:list_dir|list_dir|listDir|list_directory|list_files|ls|LS|dir|tree|directory_tree|Glob|glob)$/,
  category: "file",
  action: "list",
  reduce(input, t) {
    const path = argString(input.args, [...kPathKeys, "pattern"]) ?? ".";
    const json = parseJsonOutput(input.output);
    const { success, error } = failure(input, json);
    const items =
      listItems(json, ["entries", "files", "items", "results", "children"]) ??
      input.output
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l && !/^total \d+$/.test(l));
    const names = items.map((e) =>
      typeof e === "string"
        ? e
        : e && typeof e === "object"
          ? String((e as Record<string, unknown>).name ?? (e as Record<string, unknown>).path ?? "")
          : String(e),
    );
    const dirs = names.filter((n) => n.endsWith("/") || /^d[rwx-]{9}/.test(n)).length;
    const count = names.length;
    const observation = input.missingResult
      ? `Listed ${path}${kNoResult}`
      : success
        ? `Listed ${path}: ${count} items (${count - dirs} files, ${dirs} dirs)`
        : `Failed to list ${path}: ${error}`;
    return {
      minimalArgs: { path },
      observation,
      summary: `Listed ${path} (${count} items)`,
      success,
      error,
      count,
      size: input.outputBytes,
      offload: success && !input.missingResult && count > t.listEntries ? { kind: "list", ext: json !== undefined ? "json" : "txt" } : null,
    };
  },
};

export const shellRule: ReductionRule = {
  name: "shell",
  match:
    /^(?:bash|Bash|shell|Shell|sh|zsh|execute_command|execute_bash|run_command|run_shell_command|run_terminal_cmd|terminal|exec|system:shell|system:exec|shell:run|bash:command|run|run_ipython|python|ipython|execute_python|run_code|execute_code|code_interpreter|powershell)$/,
  category: "shell",
  action: "shell",
  reduce(input, t) {
    const command = shellCommand(input);
    const json = parseJsonOutput(input.output);
    const exitCode = extractExitCode(input.output, json);
    const { success, error } = failure(input, json, exitCode);
    const out =
      json && typeof json === "object" && !Array.isArray(json) && typeof (json as Record<string, unknown>).stdout === "string"
        ? [(json as Record<string, string>).stdout, (json as Record<string, string>).stderr ?? ""].filter(Boolean).join("\n")
        : unwrapOutput(input.output);
    const lines = countLines(out);
    const head = commandHead(command);
    const status = exitCode !== undefined ? `exit ${exitCode}, ` : "";
    let observation = input.missingResult ? `${head}: no result` : `${head}: ${status}${lines} lines output`;
    // 001: error output (exit != 0) is kept in the observation.
    if (!success && error) observation += `: ${error}`;
    const summary = `Ran \`${oneLine(command, 80)}\`` + (exitCode !== undefined ? ` (exit ${exitCode})` : success ? "" : " (failed)");
    return {
      minimalArgs: { command: oneLine(command, 400) },
      observation,
      summary,
      success,
      error,
      exitCode,
      lines,
      size: input.outputBytes,
      offload: !input.missingResult && input.output.length > t.shellChars ? { kind: "shell", ext: "log" } : null,
    };
  },
};

/** A count a search result states in words: "Found 12 matches", "3 results". */
function statedCount(output: string): number | undefined {
  const m = /\b(?:found|returned|showing)?\s*(\d[\d,]*)\s+(?:results?|matches|hits|files?|items?|entries)\b/i.exec(output.slice(0, 2000));
  return m ? Number(m[1].replace(/,/g, "")) : undefined;
}

export const searchRule: ReductionRule = {
  name: "search",
  match: (tool) =>
    /^(?:web:search|web_search|WebSearch|search|grep|Grep|rg|ripgrep|find|find_file|find_files|search_dir|search_file|search_files|grep:search|find:files|codebase_search|file_search|semantic_search|google_search|bing_search|tavily_search|brave_search)$/.test(
      tool,
    ) || /(?:^|[_:.-])search(?:$|[_:.-])/i.test(tool),
  category: "search",
  action: "search",
  reduce(input, t) {
    const query = argString(input.args, kQueryKeys) ?? (input.argsValid ? oneLine(JSON.stringify(input.args), 60) : oneLine(input.rawArgs, 60));
    const json = parseJsonOutput(input.output);
    const { success, error } = failure(input, json);
    const items = listItems(json, ["results", "items", "hits", "matches", "data", "organic_results", "documents"]);
    const nonEmpty = input.output.split(/\r?\n/).filter((l) => l.trim()).length;
    const count = items?.length ?? statedCount(input.output) ?? nonEmpty;
    const q = oneLine(query, 80);
    const observation = input.missingResult ? `Searched '${q}'${kNoResult}` : success ? `Found ${count} results for '${q}'` : `Search '${q}' failed: ${error}`;
    return {
      minimalArgs: { query },
      observation,
      summary: `Searched '${q}' → ${count} results`,
      success,
      error,
      count,
      size: input.outputBytes,
      offload: success && !input.missingResult && count > t.searchResults ? { kind: "search", ext: json !== undefined ? "json" : "txt" } : null,
    };
  },
};

export const webRule: ReductionRule = {
  name: "web",
  match:
    /^(?:browser:navigate|browser_navigate|navigate|browse|goto|open_url|visit|visit_page|fetch|fetch_url|fetch:url|http:get|http_get|web_fetch|WebFetch|read_url|scrape|get_page)$/,
  category: "web",
  action: "navigate",
  reduce(input, t) {
    const url = argString(input.args, kUrlKeys) ?? (input.argsValid ? "page" : oneLine(input.rawArgs, 80));
    const json = parseJsonOutput(input.output);
    const o = json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
    const status = typeof o.status === "number" ? o.status : typeof o.status_code === "number" ? o.status_code : undefined;
    const { success, error } = failure({ ...input, isError: input.isError || (status !== undefined && status >= 400) }, json);
    const text = typeof o.text === "string" ? o.text : typeof o.content === "string" ? o.content : input.output;
    const size = Buffer.byteLength(text);
    const where = shortUrl(url);
    const facts = [status !== undefined ? `status=${status}` : "", `${formatSize(size)} text`].filter(Boolean).join(", ");
    const observation = input.missingResult ? `Visited ${where}${kNoResult}` : success ? `Visited ${where} (${facts})` : `Failed to visit ${where}: ${error}`;
    const summary = `Visited ${where} (${[status, formatSize(size)].filter((x) => x !== undefined).join(", ")})`;
    return {
      minimalArgs: { url },
      observation,
      summary,
      success,
      error,
      size,
      offload:
        !input.missingResult && (t.browserAlways || size > t.otherChars) && input.output.length > 0
          ? { kind: "page", ext: json !== undefined ? "json" : "txt" }
          : null,
    };
  },
};

export const weatherRule: ReductionRule = {
  name: "weather",
  match: /^(?:weather:get|get_weather|weather)$/,
  category: "other",
  action: "call",
  reduce(input, t) {
    const location = argString(input.args, ["location", "city", "place", "q"]) ?? "location";
    const json = parseJsonOutput(input.output);
    const { success, error } = failure(input, json);
    return {
      minimalArgs: { location },
      observation: success ? `Weather for ${location}: ${oneLine(input.output, 160)}` : `Weather for ${location} failed: ${error}`,
      summary: `Checked weather for ${location}`,
      success,
      error,
      size: input.outputBytes,
      offload: input.output.length > t.otherChars ? { kind: "output", ext: json !== undefined ? "json" : "txt" } : null,
    };
  },
};

/**
 * Any other tool: short outputs are kept as the observation itself (they are what the agent
 * needs to resume: a booking id, a computed value), longer ones are described by type and
 * size and offloaded above `otherChars`.
 */
export const defaultRule: ReductionRule = {
  name: "default",
  match: () => true,
  category: "other",
  action: "call",
  reduce(input, t) {
    const json = parseJsonOutput(input.output);
    const { success, error } = failure(input, json);
    const args = input.argsValid ? input.args : { arguments: oneLine(input.rawArgs, 200) };
    const minimalArgs: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(args)) {
      minimalArgs[k] = typeof v === "string" ? oneLine(v, 200) : v !== null && typeof v === "object" ? oneLine(JSON.stringify(v), 200) : v;
    }
    const type = input.binary ? "binary" : detectContentType(input.output);
    const size = input.outputBytes;
    const short = !input.binary && input.output.length <= t.otherChars;
    const observation = input.missingResult
      ? `${input.tool}: no result`
      : !success
        ? `${input.tool} failed: ${error}`
        : short
          ? `${input.tool}: ${oneLine(input.output, t.otherChars) || "(empty)"}`
          : `${input.tool}: ${type} result (${size} bytes, ${countLines(input.output)} lines)`;
    const argLine = Object.values(minimalArgs)
      .filter((v) => typeof v === "string" || typeof v === "number")
      .slice(0, 2)
      .map((v) => oneLine(String(v), 40))
      .join(", ");
    return {
      minimalArgs,
      observation,
      summary: `Called ${input.tool}${argLine ? `(${argLine})` : ""}${success ? "" : " (failed)"}`,
      success,
      error,
      size,
      offload: !input.missingResult && !short ? { kind: "output", ext: offloadExtension(type) } : null,
    };
  },
};

/** Built-in rules in the order they are tried (user rules go first, the default last). */
export const kBuiltinRules: readonly ReductionRule[] = [fileReadRule, fileWriteRule, fileListRule, shellRule, webRule, weatherRule, searchRule];

export { extensionOf };
