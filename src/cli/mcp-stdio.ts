/**
 * The stdio transport of `ctxfold mcp`: newline-delimited JSON-RPC (the MCP SDK's framing, its
 * own deserializeMessage and serializeMessage), with every line bounded. The SDK's
 * StdioServerTransport closes itself when a line passes its buffer's limit, so one oversized
 * frame from a client ended the server; this one answers it and goes on serving.
 *
 * Decisions:
 * - A line longer than `maxLineBytes` is never held: its bytes are dropped as they arrive (only
 *   its first and last few KiB are kept, to find its id), and when it ends the server answers a
 *   JSON-RPC error -32600 (Invalid Request) saying the size and the limit. The id is the
 *   request's when it stands among the line's first members (after `jsonrpc` or `method`) or is
 *   its last (where the SDK's client writes it); otherwise null, as JSON-RPC answers a request
 *   whose id cannot be read.
 * - A line that is not JSON, or not a JSON-RPC message, is answered -32700 (Parse error) with id
 *   null, and reported to `onerror`; the lines after it are read as usual.
 */
import type { Readable, Writable } from "node:stream";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { jsonSyntaxReason } from "../pool/jsonl.js";

/** Bytes of an oversized line kept at each end to find its id. */
const kEdgeBytes = 4096;
/** The request id among a line's first members: `{"jsonrpc":…,"method":…,"id":…`. */
const kHeadId = /^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.)*"\s*,)*\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]/;
/** The request id as a line's last member: `…,"id":7}`. */
const kTailId = /,\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;

/** A line being dropped: its size so far and its two ends. */
interface Oversized {
  bytes: number;
  head: Buffer;
  tail: Buffer;
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #parts: Buffer[] = [];
  #size = 0;
  #oversized: Oversized | undefined;
  readonly #ondata = (chunk: Buffer) => this.#take(chunk);
  readonly #onerror = (error: Error) => this.onerror?.(error);

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    readonly maxLineBytes: number,
  ) {}

  async start(): Promise<void> {
    this.stdin.on("data", this.#ondata);
    this.stdin.on("error", this.#onerror);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.#ondata);
    this.stdin.off("error", this.#onerror);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.#parts = [];
    this.#size = 0;
    this.#oversized = undefined;
    this.onclose?.();
  }

  /** A chunk of stdin: each line it ends is handled, the rest kept (or dropped, past the limit). */
  #take(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      this.#append(chunk.subarray(from, nl));
      this.#endLine();
      from = nl + 1;
    }
    if (from < chunk.length) this.#append(chunk.subarray(from));
  }

  #append(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.#oversized === undefined && this.#size + piece.length <= this.maxLineBytes) {
      this.#parts.push(piece);
      this.#size += piece.length;
      return;
    }
    const o = (this.#oversized ??= { bytes: 0, head: Buffer.alloc(0), tail: Buffer.alloc(0) });
    const pieces = [...this.#parts, piece];
    this.#parts = [];
    this.#size = 0;
    for (const p of pieces) {
      if (o.head.length < kEdgeBytes) o.head = Buffer.concat([o.head, p.subarray(0, kEdgeBytes - o.head.length)]);
      o.tail = Buffer.concat([o.tail, p.subarray(Math.max(0, p.length - kEdgeBytes))]);
      o.tail = o.tail.subarray(Math.max(0, o.tail.length - kEdgeBytes));
      o.bytes += p.length;
    }
  }

  #endLine(): void {
    const oversized = this.#oversized;
    const line = Buffer.concat(this.#parts).toString("utf8").replace(/\r$/, "");
    this.#parts = [];
    this.#size = 0;
    this.#oversized = undefined;
    if (oversized) {
      this.#refuse(oversized);
      return;
    }
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      // JSON.parse's own message quotes the line around the fault (a client's token, say): the log gets its reason without the text.
      const why = err instanceof SyntaxError ? jsonSyntaxReason(err.message, line) : "JSON, but not of a JSON-RPC message's shape";
      this.onerror?.(new Error(`a line that is not a JSON-RPC message (${why}); answered with a parse error`));
      void this.send({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error: the line is not a JSON-RPC message" },
      } as unknown as JSONRPCMessage);
      return;
    }
    this.onmessage?.(message);
  }

  /** Answers a line over the limit (see the module comment). */
  #refuse(o: Oversized): void {
    const id = idOf(o.head.toString("utf8"), kHeadId) ?? idOf(o.tail.toString("utf8").replace(/\r$/, ""), kTailId) ?? null;
    const message = `Invalid Request: a request of ${o.bytes} bytes is over this server's limit of ${this.maxLineBytes} bytes a line; refused, nothing of it was read`;
    void this.send({ jsonrpc: "2.0", id, error: { code: -32600, message } } as unknown as JSONRPCMessage);
  }
}

/** The id `pattern` finds in `text` (a number, or a string as JSON spells it), or undefined. */
function idOf(text: string, pattern: RegExp): string | number | undefined {
  const m = pattern.exec(text);
  if (!m) return undefined;
  try {
    const id = JSON.parse(m[1]) as unknown;
    return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : undefined;
  } catch {
    return undefined;
  }
}
