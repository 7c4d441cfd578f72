/**
 * The progress the long commands (compact, eval) report on stderr: runs done, their pace, and
 * where the share of the work done is known, an ETA and a bar. On a terminal, one line redrawn;
 * elsewhere (a CI log, a file), a plain line every few seconds, so a long run is never silent.
 */
import type { CliIo } from "./common.js";
import { num } from "./runs.js";

export interface ProgressReport {
  /** Runs done so far. */
  runs: number;
  elapsedMs: number;
  /** The share of the work done, 0 to 1, where it is known (compact: of the input written). */
  doneFraction?: number;
  /** Shown after the rest (eval: the prompts replayed). */
  note?: string;
}

/** How often a plain progress line is written where stderr is not a terminal. */
export const kPlainProgressMs = 5000;

/**
 * On a terminal, one line redrawn at most every 100 ms, which `clear` wipes before the command's
 * own output; with `plain`, a line of its own every kPlainProgressMs (the first after as long),
 * which stays.
 */
export class ProgressLine {
  #last = -Infinity;
  #start: number | undefined;
  /** The first report: pace and ETA count from it, so a resumed batch's earlier share does not count. */
  #first: { s: number; f: number; runs: number } | undefined;
  constructor(
    readonly io: Pick<CliIo, "stderr">,
    readonly now: () => number = () => performance.now(),
    readonly plain = false,
  ) {}

  draw(p: ProgressReport): void {
    const s = p.elapsedMs / 1000;
    this.#first ??= { s, f: p.doneFraction ?? 0, runs: p.runs };
    const now = this.now();
    this.#start ??= now;
    if (this.plain) {
      if (now - Math.max(this.#last, this.#start) < kPlainProgressMs) return;
      this.#last = now;
      this.io.stderr.write(`${progressText(p, this.#first)}\n`);
      return;
    }
    if (now - this.#last < 100) return;
    this.#last = now;
    this.io.stderr.write(`\r${progressText(p, this.#first)}\x1b[K`);
  }

  clear(): void {
    if (!this.plain) this.io.stderr.write("\r\x1b[K");
  }
}

/** The line for `p`, its pace counted from `first`. */
export function progressText(p: ProgressReport, first: { s: number; f: number; runs: number }): string {
  const s = p.elapsedMs / 1000;
  let line = `${num(p.runs)} runs · ${num((p.runs - first.runs) / Math.max(s - first.s, 1e-9))} runs/s`;
  if (p.doneFraction !== undefined) {
    const f = p.doneFraction;
    const eta = f > first.f ? Math.round(((s - first.s) * (1 - f)) / (f - first.f)) : undefined;
    const bar = "#".repeat(Math.round(f * 24)).padEnd(24, ".");
    line += ` · ETA ${eta === undefined ? "-:--" : `${Math.floor(eta / 60)}:${String(eta % 60).padStart(2, "0")}`} [${bar}] ${(f * 100).toFixed(0)}%`;
  }
  return p.note ? `${line} · ${p.note}` : line;
}
