/**
 * `ctxfold mcp --offload-dir DIR [--run ID | --run-line FILE:LINE] [--format F] [--prefix P] [--max-bytes N]`: an MCP server over
 * stdio (the official TypeScript SDK) whose tools read what compaction stored in DIR, for any
 * agent host that speaks MCP: `recall(ref, offset?, format?)` gives a ref's original text, a page
 * at a time, or a history's removed messages in a provider format; `search(query, limit?)` lists
 * the refs whose content or name holds the query's words (src/recall/).
 *
 * Decisions:
 * - DIR holds either store layout, as for `ctxfold show`: the packs `compact` appends to, or one
 *   file per ref. The store is opened again whenever DIR's listing or an index's size or time
 *   changed since the last call, so refs a compaction wrote after the server started resolve.
 *   A DIR that does not exist yet is not an error at start: calls say nothing is stored there.
 * - A page is the tool result's first content block, exactly the original text (a client can
 *   compare it byte for byte); when there is more, a second block says which part it was and the
 *   offset to pass for the next. `structuredContent` carries the page's numbers (offset, end,
 *   size or count, next) for programs.
 * - Errors are tool errors (`isError`), never a failed server: the text is `CODE: message`
 *   (E_BAD_REF, E_REF_NOT_FOUND, E_CORRUPT, E_BAD_INPUT with its path), `structuredContent.error`
 *   the same as fields. Arguments the tools' schemas refuse are the SDK's own tool errors.
 * - Reach: without --run, every ref stored in DIR, of every run any process compacted into it.
 *   With `--run ID` (a run's id) or `--run-line FILE:LINE` (a run without one, as compact's error
 *   records locate it), only the refs the scope records in DIR give that run (store/scope.ts,
 *   store/scope-record.ts); any other ref is answered exactly as one not stored (E_REF_NOT_FOUND,
 *   the same message), and search neither lists nor counts it. The records are read again
 *   whenever DIR changed, like the store.
 * - Searches run one at a time, each in slices that yield to the event loop (searchStoreInSlices),
 *   so recalls are answered while searches of a large store go on, however many are queued.
 * - A request line over kMaxRequestBytes is answered with a JSON-RPC error and the server goes on
 *   (mcp-stdio.ts): one oversized frame never ends it.
 * - stdout carries the protocol and nothing else; the one line at start and any transport error
 *   go to stderr. The server ends when its client closes stdin (exit 0), or on SIGINT / SIGTERM.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { kFormats, type Format } from "../../adapters/index.js";
import { asCtxfoldError } from "../../errors.js";
import {
  kRecallInputShape,
  kRecallToolDescription,
  kRecallToolName,
  kSearchInputShape,
  kSearchToolDescription,
  kSearchToolName,
  pageBody,
  pageNote,
  recall,
  searchStoreInSlices,
  searchText,
  checkRecallOptions,
  type RecallResult,
} from "../../recall/index.js";
import { createPackStore, kDefaultOffloadPrefix, ScopeRecords, scopedStore, type OffloadStore, type RunSelector } from "../../store/index.js";
import { formatOption, intOption, kExit, packageRoot, parseCli, UsageError, type CliIo } from "../common.js";
import { kMcpPeers, loadWithPeers } from "../optional-peers.js";

/**
 * The longest request line the server reads: a tool call is a ref and an offset, or a few words
 * to search for, so 1 MiB is far beyond any real one (the SDK's own transport allowed 10 MiB).
 */
export const kMaxRequestBytes = 1 << 20;

/** What a tool call answers (CallToolResult's fields this server uses). */
interface ToolAnswer {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What the command line asks of the server. */
interface McpOptions {
  dir: string;
  /** The provider format history refs come back in unless a call names one. */
  format: Format;
  prefix: string;
  /** The most bytes of a ref one recall returns. */
  maxBytes: number;
  /** The run whose refs alone the server reaches; undefined for every ref in DIR. */
  scope: RunSelector | undefined;
}

export async function mcp(argv: string[], io: CliIo): Promise<number> {
  const opts = mcpOptions(argv);
  const stores = new StoreOpener(opts.dir, opts.prefix, opts.scope);
  stores.current(); // a bad --prefix fails here, before the server starts
  const server = await createServer(opts, stores);
  const { BoundedStdioTransport } = await loadWithPeers(() => import("../mcp-stdio.js"), kMcpPeers, "ctxfold mcp");
  const transport = new BoundedStdioTransport(io.stdin, io.stdout, kMaxRequestBytes);
  transport.onerror = (err) => io.stderr.write(`ctxfold mcp: ${err.message}\n`);
  const closed = untilClosed(io);
  await server.connect(transport);
  io.stderr.write(`ctxfold mcp: serving ${reachOf(opts.scope)} ${path.resolve(opts.dir)} over stdio (tools: ${kRecallToolName}, ${kSearchToolName})\n`);
  await closed;
  await server.close();
  return kExit.ok;
}

/** The command line's options, checked (a UsageError names the flag). */
function mcpOptions(argv: string[]): McpOptions {
  const { values, positionals } = parseCli(argv, {
    "offload-dir": { type: "string" },
    format: { type: "string" },
    prefix: { type: "string" },
    "max-bytes": { type: "string" },
    run: { type: "string" },
    "run-line": { type: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unknown arguments: ${positionals.join(" ")}`);
  const dir = values["offload-dir"] as string | undefined;
  if (dir === undefined || dir === "") throw new UsageError("--offload-dir DIR is required (where compaction stored the refs)");
  if (values.format === "auto") throw new UsageError("--format: name the format history refs come back in (auto has nothing to detect here)");
  const format: Format = formatOption(values.format as string | undefined) ?? "openai-chat";
  const prefix = (values.prefix as string | undefined) ?? kDefaultOffloadPrefix;
  const maxBytes = intOption(values["max-bytes"] as string | undefined, "max-bytes", 16 * 1024);
  try {
    checkRecallOptions({ maxBytes, format });
  } catch (err) {
    throw new UsageError(`--max-bytes: ${(err as Error).message.replace(/^maxBytes: /, "")}`);
  }
  return { dir, format, prefix, maxBytes, scope: runOption(values.run as string | undefined, values["run-line"] as string | undefined) };
}

/** The MCP server with its two tools, recall and search, over the stores of DIR (searches run one at a time). */
async function createServer({ dir, format, maxBytes }: McpOptions, stores: StoreOpener): Promise<McpServer> {
  // Imported here, not at the top: every other command would pay for loading the SDK (~180 ms).
  const { McpServer } = await loadWithPeers(() => import("@modelcontextprotocol/sdk/server/mcp.js"), kMcpPeers, "ctxfold mcp");
  const searches = new OneAtATime();
  const server = new McpServer(
    { name: "ctxfold", version: packageRoot()?.version ?? "0.0.0" },
    {
      instructions: `Reads content a ctxfold compaction left out of the conversation (stored in ${path.resolve(dir)}): ${kRecallToolName} gives a ref's content, ${kSearchToolName} finds refs.`,
    },
  );
  server.registerTool(
    kRecallToolName,
    {
      title: "Recall a ref",
      description: kRecallToolDescription,
      inputSchema: {
        ...kRecallInputShape,
        format: z.enum(kFormats).optional().describe(`The provider format a history or message ref's messages come back in (default ${format})`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) => answer(() => recallAnswer(recall(stores.current(), input.ref, { offset: input.offset, maxBytes, format: input.format ?? format })), stores),
  );
  server.registerTool(
    kSearchToolName,
    {
      title: "Search stored content",
      description: kSearchToolDescription,
      inputSchema: kSearchInputShape,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) =>
      searches.run(() =>
        answerAsync(async () => {
          const entries = await searchStoreInSlices(stores.current(), input.query, { limit: input.limit });
          return { content: [{ type: "text", text: searchText(entries) }], structuredContent: { entries } };
        }, stores),
      ),
  );
  return server;
}

/** Settles when the client closes stdin, or on SIGINT / SIGTERM. */
function untilClosed(io: CliIo): Promise<void> {
  return new Promise<void>((resolve) => {
    io.stdin.once("end", resolve);
    io.stdin.once("close", resolve);
    const stop = io.onInterrupt(() => {
      stop();
      resolve();
    });
  });
}

/** What the server reaches, as the line at start says it: every ref, or the refs of one run. */
function reachOf(scope: RunSelector | undefined): string {
  if (scope === undefined) return "the refs stored in";
  return `the refs of ${"run" in scope ? `run ${JSON.stringify(scope.run)}` : `the run at ${scope.file}:${scope.line}`} stored in`;
}

/** A recall page as the tool's answer (see the module comment). */
function recallAnswer(page: RecallResult): ToolAnswer {
  const note = pageNote(page);
  // Everything but the page's content, which is the first content block.
  const about = Object.fromEntries(Object.entries(page).filter(([k]) => k !== "text" && k !== "messages" && k !== "system"));
  return {
    content: [{ type: "text", text: pageBody(page) }, ...(note === undefined ? [] : [{ type: "text" as const, text: note }])],
    structuredContent: about,
  };
}

/** The scope --run or --run-line names (UsageError naming the flag), or undefined for the whole store. */
function runOption(run: string | undefined, line: string | undefined): RunSelector | undefined {
  if (run !== undefined && line !== undefined) throw new UsageError("--run and --run-line: name one run, by its id or by its line");
  if (run !== undefined) {
    if (run === "") throw new UsageError("--run: expected a run's id, got nothing");
    return { run };
  }
  if (line === undefined) return undefined;
  const m = /^(.+):([1-9][0-9]*)$/.exec(line);
  if (!m || !Number.isSafeInteger(Number(m[2])))
    throw new UsageError(`--run-line: expected FILE:LINE (the input file compact read and a line number), got ${JSON.stringify(line)}`);
  return { file: m[1] === "-" ? "-" : path.resolve(m[1]), line: Number(m[2]) };
}

/** Tasks run one at a time, in the order given (the server's searches). */
class OneAtATime {
  #last: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.#last.then(task, task);
    this.#last = next.catch(() => undefined);
    return next;
  }
}

/** What `run` answers, or its error as a tool error (errorAnswer). */
function answer(run: () => ToolAnswer, stores: StoreOpener): ToolAnswer {
  try {
    return run();
  } catch (thrown) {
    return errorAnswer(thrown, stores);
  }
}

/** answer, for a task that resolves later. */
async function answerAsync(run: () => Promise<ToolAnswer>, stores: StoreOpener): Promise<ToolAnswer> {
  try {
    return await run();
  } catch (thrown) {
    return errorAnswer(thrown, stores);
  }
}

/** A thrown error as a tool error naming its code (a ref not found also names DIR). */
function errorAnswer(thrown: unknown, stores: StoreOpener): ToolAnswer {
  const err = asCtxfoldError(thrown);
  const where = err.code === "E_REF_NOT_FOUND" ? ` (in ${stores.dir}${existsSync(stores.dir) ? "" : ", which does not exist yet"})` : "";
  const message = `${err.message}${where}`;
  return {
    content: [{ type: "text", text: `${err.code}: ${message}` }],
    structuredContent: { error: { code: err.code, message, ...(err.path ? { path: err.path } : {}) } },
    isError: true,
  };
}

/**
 * The pack store over DIR (reading both layouts), opened again when DIR changed: its entries'
 * names, and each index's size and time (a compaction appends to its pack's index). With a
 * scope, the store seen through it, the scope records read again with the store.
 */
class StoreOpener {
  readonly dir: string;
  readonly #records: ScopeRecords | undefined;
  #store: OffloadStore | undefined;
  #seen = "";

  constructor(
    dir: string,
    readonly prefix: string,
    readonly scope?: RunSelector,
  ) {
    this.dir = path.resolve(dir);
    if (scope) this.#records = new ScopeRecords(this.dir);
  }

  current(): OffloadStore {
    const seen = this.#signature();
    if (!this.#store || seen !== this.#seen) {
      const store = createPackStore({ dir: this.dir, prefix: this.prefix });
      this.#store = this.#records && this.scope ? scopedStore(store, this.#records.refsOf(this.scope, store.prefix)) : store;
      this.#seen = seen;
    }
    return this.#store;
  }

  #signature(): string {
    if (!existsSync(this.dir)) return "";
    const names = readdirSync(this.dir).sort();
    return names
      .map((n) => {
        if (!n.endsWith(".idx")) return n;
        try {
          const s = statSync(path.join(this.dir, n));
          return `${n}:${s.size}:${s.mtimeMs}`;
        } catch {
          return n;
        }
      })
      .join("\n");
  }
}
