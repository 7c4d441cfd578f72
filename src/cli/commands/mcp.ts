/**
 * `ctxfold mcp --offload-dir DIR [--format F] [--prefix P] [--max-bytes N]`: an MCP server over
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
 * - stdout carries the protocol and nothing else; the one line at start and any transport error
 *   go to stderr. The server ends when its client closes stdin (exit 0), or on SIGINT / SIGTERM.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { kFormats, type Format } from "../../adapters/index.js";
import { asCtxfoldError } from "../../errors.js";
import {
  kRecallInputShape, kRecallToolDescription, kRecallToolName, kSearchInputShape, kSearchToolDescription, kSearchToolName, pageBody, pageNote, recall, searchStore, searchText,
  checkRecallOptions, type RecallResult,
} from "../../recall/index.js";
import { createPackStore, kDefaultOffloadPrefix, type PackOffloadStore } from "../../store/index.js";
import { formatOption, intOption, kExit, packageRoot, parseCli, UsageError, type CliIo } from "../common.js";

/** What a tool call answers (CallToolResult's fields this server uses). */
interface ToolAnswer {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export async function mcp(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCli(argv, {
    "offload-dir": { type: "string" }, format: { type: "string" }, prefix: { type: "string" }, "max-bytes": { type: "string" },
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
  const stores = new StoreOpener(dir, prefix);
  stores.current(); // a bad --prefix fails here, before the server starts

  // Imported here, not at the top: every other command would pay for loading the SDK (~180 ms).
  const [{ McpServer }, { StdioServerTransport }] = await Promise.all([import("@modelcontextprotocol/sdk/server/mcp.js"), import("@modelcontextprotocol/sdk/server/stdio.js")]);
  const server = new McpServer(
    { name: "ctxfold", version: packageRoot()?.version ?? "0.0.0" },
    { instructions: `Reads content a ctxfold compaction left out of the conversation (stored in ${path.resolve(dir)}): ${kRecallToolName} gives a ref's content, ${kSearchToolName} finds refs.` },
  );
  server.registerTool(
    kRecallToolName,
    {
      title: "Recall a ref",
      description: kRecallToolDescription,
      inputSchema: { ...kRecallInputShape, format: z.enum(kFormats).optional().describe(`The provider format a history ref's messages come back in (default ${format})`) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) => answer(() => recallAnswer(recall(stores.current(), input.ref, { offset: input.offset, maxBytes, format: input.format ?? format })), stores),
  );
  server.registerTool(
    kSearchToolName,
    { title: "Search stored content", description: kSearchToolDescription, inputSchema: kSearchInputShape, annotations: { readOnlyHint: true, openWorldHint: false } },
    (input) => answer(() => {
      const entries = searchStore(stores.current(), input.query, { limit: input.limit });
      return { content: [{ type: "text", text: searchText(entries) }], structuredContent: { entries } };
    }, stores),
  );

  const transport = new StdioServerTransport(io.stdin, io.stdout);
  transport.onerror = (err) => io.stderr.write(`ctxfold mcp: ${err.message}\n`);
  const closed = new Promise<void>((resolve) => {
    io.stdin.once("end", resolve);
    io.stdin.once("close", resolve);
    const stop = io.onInterrupt(() => {
      stop();
      resolve();
    });
  });
  await server.connect(transport);
  io.stderr.write(`ctxfold mcp: serving the refs stored in ${path.resolve(dir)} over stdio (tools: ${kRecallToolName}, ${kSearchToolName})\n`);
  await closed;
  await server.close();
  return kExit.ok;
}

/** A recall page as the tool's answer (see the module comment). */
function recallAnswer(page: RecallResult): ToolAnswer {
  const note = pageNote(page);
  // Everything but the page's content, which is the first content block.
  const about = Object.fromEntries(Object.entries(page).filter(([k]) => k !== "text" && k !== "messages" && k !== "system"));
  return { content: [{ type: "text", text: pageBody(page) }, ...(note === undefined ? [] : [{ type: "text" as const, text: note }])], structuredContent: about };
}

/** What `run` answers, or its error as a tool error naming the code (a ref not found also names DIR). */
function answer(run: () => ToolAnswer, stores: StoreOpener): ToolAnswer {
  try {
    return run();
  } catch (thrown) {
    const err = asCtxfoldError(thrown);
    const where = err.code === "E_REF_NOT_FOUND" ? ` (in ${stores.dir}${existsSync(stores.dir) ? "" : ", which does not exist yet"})` : "";
    const message = `${err.message}${where}`;
    return {
      content: [{ type: "text", text: `${err.code}: ${message}` }],
      structuredContent: { error: { code: err.code, message, ...(err.path ? { path: err.path } : {}) } },
      isError: true,
    };
  }
}

/**
 * The pack store over DIR (reading both layouts), opened again when DIR changed: its entries'
 * names, and each index's size and time (a compaction appends to its pack's index).
 */
class StoreOpener {
  readonly dir: string;
  #store: PackOffloadStore | undefined;
  #seen = "";

  constructor(dir: string, readonly prefix: string) {
    this.dir = path.resolve(dir);
  }

  current(): PackOffloadStore {
    const seen = this.#signature();
    if (!this.#store || seen !== this.#seen) {
      this.#store = createPackStore({ dir: this.dir, prefix: this.prefix });
      this.#seen = seen;
    }
    return this.#store;
  }

  #signature(): string {
    if (!existsSync(this.dir)) return "";
    const names = readdirSync(this.dir).sort();
    return names.map((n) => {
      if (!n.endsWith(".idx")) return n;
      try {
        const s = statSync(path.join(this.dir, n));
        return `${n}:${s.size}:${s.mtimeMs}`;
      } catch {
        return n;
      }
    }).join("\n");
  }
}
