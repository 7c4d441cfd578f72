import { hashText, hashToHex } from "../../core/hash.js";
import { kEncodings, type Encoding } from "../../tokens/weights-table.js";
import { TokenCounter, type CountableMessage } from "../../tokens/token-counter.js";
import { atLine, kExit, parseCli, readText, UsageError, type CliIo } from "../common.js";
import { readRuns } from "../runs.js";

/** `ctxfold count FILE|- [--encoding E] [--exact] [--jsonl]`. */
export async function count(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCli(argv, { encoding: { type: "string" }, exact: { type: "boolean" }, jsonl: { type: "boolean" } });
  const encoding = (values.encoding ?? "o200k_base") as Encoding;
  if (!kEncodings.includes(encoding)) throw new UsageError(`--encoding: one of ${kEncodings.join(", ")}`);
  const mode = values.exact ? "exact" : "estimate";
  const [file, ...rest] = positionals;
  if (file === undefined) throw new UsageError("count needs a FILE or -");
  if (rest.length) throw new UsageError(`unknown arguments: ${rest.join(" ")}`);
  const counter = new TokenCounter({ encoding });
  if (!values.jsonl) {
    io.stdout.write(`${counter.count(await readText(file, io), mode)}\n`);
    return kExit.ok;
  }
  let total = 0;
  for await (const item of readRuns(file, io)) {
    if (item.error) throw item.error;
    let tokens: number;
    try {
      tokens = counter.countMessages(item.run.messages as CountableMessage[], mode);
    } catch (err) {
      throw atLine(err, file, item.line);
    }
    total += tokens;
    io.stdout.write(`${tokens}\t${item.run.id}\n`);
  }
  io.stdout.write(`${total}\ttotal\n`);
  return kExit.ok;
}

/** `ctxfold hash FILE|-`: the XXH64 of a text file. */
export async function hash(argv: string[], io: CliIo): Promise<number> {
  const { positionals } = parseCli(argv, {});
  if (positionals.length !== 1) throw new UsageError("hash needs one FILE or -");
  const file = positionals[0];
  io.stdout.write(`${hashToHex(hashText(await readText(file, io)))}\n`);
  return kExit.ok;
}
