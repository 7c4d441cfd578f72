#!/usr/bin/env node
/**
 * The ctxfold command. For now: `count` (tokens of text or of JSONL runs) and `hash`; the
 * compaction commands arrive with the compactor.
 */
import { readFileSync } from "node:fs";
import { createGunzip } from "node:zlib";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { CtxfoldError } from "../errors.js";
import { hashText, hashToHex } from "../core/hash.js";
import { kEncodings, type Encoding } from "../core/weights-table.js";
import { TokenCounter, type CountableMessage } from "../tokens/token-counter.js";

const kUsage = `usage: ctxfold <command> [options]

commands:
  count FILE|-  [--encoding o200k_base|cl100k_base] [--exact] [--jsonl]
                tokens of a text file, or with --jsonl of each run (one JSON per line: a
                messages array, or an object with "messages") in OpenAI chat format
  hash FILE|-   xxh64 content hash of a text file

exit codes: 0 ok, 1 bad input, 2 bad usage`;

function fail(code: number, message: string): never {
  process.stderr.write(`ctxfold: ${message}\n`);
  process.exit(code);
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  if (v === undefined || v.startsWith("--")) fail(2, `${name} needs a value`);
  args.splice(i, 2);
  return v;
}

function flag(args: string[], name: string): boolean {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
}

function lines(file: string): AsyncIterable<string> {
  const raw = file === "-" ? process.stdin : createReadStream(file);
  const input = file.endsWith(".gz") ? raw.pipe(createGunzip()) : raw;
  return createInterface({ input, crlfDelay: Infinity });
}

async function countJsonl(file: string, counter: TokenCounter, mode: "estimate" | "exact"): Promise<void> {
  let n = 0;
  let total = 0;
  for await (const line of lines(file)) {
    n++;
    if (!line.trim()) continue;
    let run: unknown;
    try {
      run = JSON.parse(line);
    } catch (err) {
      throw new CtxfoldError("E_BAD_INPUT", `not JSON: ${(err as Error).message}`, { path: `${file}:${n}` });
    }
    const messages = Array.isArray(run) ? run : (run as { messages?: unknown }).messages;
    if (!Array.isArray(messages)) throw new CtxfoldError("E_BAD_INPUT", "expected a messages array or an object with messages", { path: `${file}:${n}` });
    let tokens: number;
    try {
      tokens = counter.countMessages(messages as CountableMessage[], mode);
    } catch (err) {
      if (CtxfoldError.isInstance(err)) throw new CtxfoldError(err.code, err.message, { path: `${file}:${n}`, cause: err });
      throw err;
    }
    total += tokens;
    const id = Array.isArray(run) ? `line ${n}` : String((run as { id?: unknown }).id ?? `line ${n}`);
    process.stdout.write(`${tokens}\t${id}\n`);
  }
  process.stdout.write(`${total}\ttotal\n`);
}

async function main(argv: string[]): Promise<void> {
  const args = [...argv];
  if (args.length === 0 || flag(args, "--help") || flag(args, "-h")) {
    process.stdout.write(kUsage + "\n");
    return;
  }
  const command = args.shift();
  if (command === "count") {
    const encoding = (option(args, "--encoding") ?? "o200k_base") as Encoding;
    if (!kEncodings.includes(encoding)) fail(2, `--encoding: one of ${kEncodings.join(", ")}`);
    const mode = flag(args, "--exact") ? "exact" : "estimate";
    const jsonl = flag(args, "--jsonl");
    const file = args.shift() ?? fail(2, "count needs a FILE or -");
    if (args.length) fail(2, `unknown arguments: ${args.join(" ")}`);
    const counter = new TokenCounter({ encoding });
    if (jsonl) return countJsonl(file, counter, mode);
    const text = readFileSync(file === "-" ? 0 : file, "utf8");
    process.stdout.write(`${counter.count(text, mode)}\n`);
  } else if (command === "hash") {
    const file = args.shift() ?? fail(2, "hash needs a FILE or -");
    process.stdout.write(`${hashToHex(hashText(readFileSync(file === "-" ? 0 : file, "utf8")))}\n`);
  } else {
    fail(2, `unknown command ${JSON.stringify(command)}\n${kUsage}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (CtxfoldError.isInstance(err)) fail(1, err.message);
  if ((err as NodeJS.ErrnoException).code === "ENOENT") fail(1, (err as Error).message);
  throw err;
});
