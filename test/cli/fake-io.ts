// A CliIo over in-memory streams, for running commands in-process in tests.
import { Readable, Writable } from "node:stream";
import type { CliIo } from "../../src/cli/common.js";

/** A CliIo whose streams are strings (and bytes) the test reads afterwards. */
export function fakeIo(stdin: Readable = Readable.from([])) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) =>
    new Writable({
      write(chunk, _enc, cb) {
        into.push(Buffer.from(chunk));
        cb();
      },
    });
  const interrupts: (() => void)[] = [];
  const io: CliIo = {
    stdin,
    stdout: sink(out),
    stderr: sink(err),
    stderrIsTTY: false,
    onInterrupt(handler) {
      interrupts.push(handler);
      return () => interrupts.splice(interrupts.indexOf(handler), 1);
    },
  };
  return {
    io,
    interrupts,
    bytes: () => Buffer.concat(out),
    stdout: () => Buffer.concat(out).toString("utf8"),
    stderr: () => Buffer.concat(err).toString("utf8"),
  };
}

/** Runs `command` with a fresh fake io; the exit code and what it wrote. */
export async function run(command: (argv: string[], io: CliIo) => Promise<number>, argv: string[], stdin?: Readable) {
  const f = fakeIo(stdin);
  const code = await command(argv, f.io);
  return { code, out: f.stdout(), err: f.stderr(), bytes: f.bytes(), fake: f };
}
