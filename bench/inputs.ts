import { createRng, syntheticText, type TextKind } from "../src/gen/text.js";

/** Sizes the kernels are measured at (UTF-8 bytes), as the foundation's speed targets name them. */
export const kSizes = [
  { label: "200 B", bytes: 200 },
  { label: "4 KB", bytes: 4096 },
  { label: "1 MB", bytes: 1_000_000 },
] as const;

const kMix: TextKind[] = ["prose", "code", "json", "logs", "code", "logs", "json", "prose", "code", "logs", "intl", "cjk", "emoji"];

/**
 * Agent-transcript-like text of about `bytes` UTF-8 bytes: mostly prose, code, JSON and logs
 * with a little CJK, emoji and accented text, as tool outputs are.
 */
export function mixedText(bytes: number, seed: number): string {
  const r = createRng(seed);
  let s = "";
  let k = seed % kMix.length;
  while (Buffer.byteLength(s) < bytes) s += syntheticText(kMix[k++ % kMix.length], Math.min(2000, bytes), r) + "\n";
  return trimToBytes(s, bytes);
}

/** The longest prefix of `s` of at most `bytes` UTF-8 bytes that ends on a whole character. */
function trimToBytes(s: string, bytes: number): string {
  const cut = Buffer.from(s).subarray(0, bytes).toString();
  return cut.endsWith("\ufffd") && !s.startsWith(cut) ? cut.slice(0, -1) : cut;
}

/** One text of one kind, for per-class speed figures. */
export function kindText(kind: TextKind, bytes: number, seed: number): string {
  const r = createRng(seed);
  let s = "";
  while (Buffer.byteLength(s) < bytes) s += syntheticText(kind, 4000, r) + "\n";
  return trimToBytes(s, bytes);
}

/** `count` distinct texts of about `bytes` each (a batch of small parts). */
export function batchOf(count: number, bytes: number, seed: number): string[] {
  const r = createRng(seed);
  return Array.from({ length: count }, () => mixedText(bytes, r.int(2 ** 31)));
}

export const totalBytes = (texts: readonly string[]) => texts.reduce((n, s) => n + Buffer.byteLength(s), 0);
