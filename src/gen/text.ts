/**
 * Seeded generator of realistic-looking text of several kinds, for tests, benchmarks and the
 * token-estimator calibration (so the estimator is not fitted to one corpus only).
 *
 * Dependency-free and deterministic: the same seed gives the same text on every platform.
 */

import { AR, COMMON, CONTRACTIONS, DE, EL, EMOJI, ES, FLAGS, FR, HI, IDENT_PARTS, JA, KO, LONGER, PL, RU, TONE, TONED, VI, ZH, ZWJ } from "./vocabulary.js";

/** A small seeded PRNG (mulberry32). */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
}

/** Creates a mulberry32 generator; any 32-bit seed. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number): number => Math.floor(next() * n) };
}

export type TextKind = "prose" | "code" | "json" | "logs" | "cjk" | "emoji" | "intl";

export const TEXT_KINDS: readonly TextKind[] = ["prose", "code", "json", "logs", "cjk", "emoji", "intl"];

/** Generates about `approxChars` UTF-16 code units of text of the given kind. */
export function syntheticText(kind: TextKind, approxChars: number, rng: Rng): string {
  const g = new Gen(rng, rng.int(0x10000));
  const parts: string[] = [];
  let len = 0;
  while (len < approxChars) {
    const piece = CHUNKS[kind](g);
    parts.push(piece);
    len += piece.length;
  }
  return parts.join("");
}

class Gen {
  /** A per-document style choice (language, indentation), so one text stays consistent. */
  constructor(
    readonly rng: Rng,
    readonly style: number,
  ) {}
  int(n: number): number {
    return this.rng.int(n);
  }
  range(lo: number, hi: number): number {
    return lo + this.rng.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.rng.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.rng.int(xs.length)] as T;
  }
  digits(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += String(this.int(10));
    return s;
  }
  hex(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef".charAt(this.int(16));
    return s;
  }
  join(n: number, f: () => string, sep: string): string {
    const xs: string[] = [];
    for (let i = 0; i < n; i++) xs.push(f());
    return xs.join(sep);
  }
  number(): string {
    switch (this.int(5)) {
      case 0:
        return String(this.int(10));
      case 1:
        return String(this.int(1000));
      case 2:
        return String(this.int(1e6));
      case 3:
        return (this.rng.next() * 1000).toFixed(this.range(1, 4));
      default:
        return String(this.range(1990, 2030));
    }
  }
  timestamp(): string {
    const p = (n: number): string => String(n).padStart(2, "0");
    return `${this.range(2019, 2026)}-${p(this.range(1, 12))}-${p(this.range(1, 28))}T${p(this.int(24))}:${p(this.int(60))}:${p(this.int(60))}.${this.digits(3)}Z`;
  }
  word(): string {
    return this.chance(0.8) ? this.pick(COMMON) : this.pick(LONGER);
  }
  ident(): string {
    const n = this.range(1, 3);
    const ws: string[] = [];
    for (let i = 0; i < n; i++) ws.push(this.pick(IDENT_PARTS));
    const r = this.int(10);
    if (r < 4) return ws.join("_");
    if (r < 7) return ws.map((w, i) => (i === 0 ? w : cap(w))).join("");
    if (r < 9) return ws.map(cap).join("");
    return ws.join("_").toUpperCase();
  }
  path(): string {
    const ext = this.pick([".py", ".ts", ".js", ".rs", ".go", ".json", ".md", ".txt", ".yaml", ".c", ".h"]);
    const root = this.pick(["/usr/lib/python3.11", "src", "/home/user/project", "tests", "lib", "/var/log", "./pkg", "django/db/models"]);
    return `${root}/${this.join(this.range(0, 3), () => this.pick(IDENT_PARTS), "/")}/${this.pick(IDENT_PARTS)}${ext}`.replace("//", "/");
  }
  sentence(): string {
    const n = this.range(4, 22);
    const ws: string[] = [];
    for (let i = 0; i < n; i++) {
      let w = this.word();
      if (this.chance(0.03)) w = this.number();
      else if (this.chance(0.02)) w = `"${w}"`;
      // biome-ignore lint/suspicious/noDuplicateElseIf: each chance() call draws anew
      else if (this.chance(0.02)) w = `\`${this.ident()}\``;
      if (i < n - 1 && this.chance(0.08)) w += this.pick([",", ",", ";", ":", " -"]);
      ws.push(w);
    }
    if (this.chance(0.06)) ws.splice(this.int(ws.length), 0, this.pick(CONTRACTIONS));
    if (this.chance(0.05)) ws.push(`(${this.pick(LONGER)} ${this.pick(COMMON)})`);
    return cap(ws.join(" ")) + this.pick([".", ".", ".", ".", "?", "!", "...", ":"]);
  }
}

function cap(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

function prose(g: Gen): string {
  const r = g.int(10);
  if (r === 0) return `\n\n${g.pick(["#", "##", "###"])} ${cap(g.word())} ${g.word()}\n\n`;
  if (r === 1) return `\n${g.join(g.range(2, 5), () => `${g.pick(["-", "*", "1."])} ${g.sentence()}`, "\n")}\n`;
  const s = g.join(g.range(1, 6), () => g.sentence(), " ");
  return s + (g.chance(0.3) ? "\n\n" : " ");
}

function code(g: Gen): string {
  const ind = ["  ", "    ", "\t", "    "][g.style % 4] as string;
  const r = g.int(6);
  const lit = (): string => (g.chance(0.5) ? g.number() : `'${g.join(g.range(1, 4), () => g.word(), " ")}'`);
  const stmt = (d: number): string => {
    const pad = ind.repeat(d);
    switch (g.int(7)) {
      case 0:
        return `${pad}${g.ident()} = ${g.ident()}(${g.join(g.range(0, 3), () => g.ident(), ", ")})`;
      case 1:
        return `${pad}if ${g.ident()} ${g.pick(["==", "!=", ">=", "<", "is", "in"])} ${lit()}:`;
      case 2:
        return `${pad}return ${g.ident()}.${g.ident()}[${g.int(10)}]`;
      case 3:
        return `${pad}# ${g.sentence()}`;
      case 4:
        return `${pad}const ${g.ident()}: ${g.pick(["number", "string", "Map<string, number>", "boolean[]"])} = ${lit()};`;
      case 5:
        return `${pad}self.${g.ident()}.append((${g.ident()}, ${lit()}))`;
      default:
        return `${pad}${g.ident()}(${g.ident()}=${lit()}, ${g.ident()}=${g.pick(["None", "True", "null", "[]", "{}"])});`;
    }
  };
  if (r === 0)
    return `\nimport ${g.ident()} from '${g.pick(["./", "../", "node:", "@scope/"])}${g.ident()}.js';\nfrom ${g.ident()}.${g.ident()} import ${g.ident()}, ${g.ident()}\n`;
  if (r === 1) {
    const body = g.join(g.range(2, 8), () => stmt(g.range(1, 3)), "\n");
    return `\ndef ${g.ident()}(self, ${g.ident()}, ${g.ident()}=None):\n${ind}"""${g.sentence()}"""\n${body}\n`;
  }
  if (r === 2) {
    const body = g.join(g.range(2, 6), () => stmt(g.range(1, 2)), "\n");
    return `\nexport function ${g.ident()}(${g.ident()}: ${g.pick(["string", "number", "Uint8Array"])}): void {\n${body}\n}\n`;
  }
  if (r === 3) {
    const n = g.range(1, 300);
    return `\n@@ -${n},${g.range(3, 9)} +${n},${g.range(3, 9)} @@\n${g.join(g.range(3, 8), () => g.pick(["-", "+", " "]) + stmt(g.range(0, 2)), "\n")}\n`;
  }
  if (r === 4) return `\n${g.join(g.range(2, 6), () => `${g.range(1, 999)}\t${stmt(g.range(0, 3))}`, "\n")}\n`;
  return g.join(g.range(2, 6), () => stmt(g.range(0, 3)), "\n") + "\n";
}

function jsonValue(g: Gen, depth: number): unknown {
  const r = g.int(depth > 2 ? 6 : 9);
  switch (r) {
    case 0:
      return g.int(100000);
    case 1:
      return Math.round(g.rng.next() * 1e5) / 100;
    case 2:
      return g.chance(0.5);
    case 3:
      return null;
    case 4:
      return g.pick([g.timestamp(), g.hex(g.pick([8, 12, 24, 32])), g.path(), `${g.pick(["HAT", "ABC", "ZX"])}${g.digits(3)}`]);
    case 5:
      return g.join(g.range(1, 8), () => g.word(), " ");
    case 6:
    case 7: {
      const o: Record<string, unknown> = {};
      for (let i = g.range(1, 6); i > 0; i--) o[g.chance(0.7) ? g.ident().toLowerCase() : g.word()] = jsonValue(g, depth + 1);
      return o;
    }
    default: {
      const xs: unknown[] = [];
      for (let i = g.range(0, 5); i > 0; i--) xs.push(jsonValue(g, depth + 1));
      return xs;
    }
  }
}

function json(g: Gen): string {
  const o: Record<string, unknown> = {};
  for (let i = g.range(2, 6); i > 0; i--) o[g.ident().toLowerCase()] = jsonValue(g, 1);
  const s = JSON.stringify(o, null, g.pick([0, 0, 2, 4]));
  return s + "\n";
}

function logs(g: Gen): string {
  const r = g.int(8);
  const lvl = g.pick(["INFO", "DEBUG", "WARN", "ERROR", "info", "warning"]);
  if (r === 0) {
    const frames = g.join(g.range(2, 6), () => `  File "${g.path()}", line ${g.range(1, 2000)}, in ${g.ident()}\n    ${g.ident()}(${g.ident()})`, "\n");
    return `Traceback (most recent call last):\n${frames}\n${g.pick(["ValueError", "KeyError", "TypeError", "AssertionError"])}: ${g.sentence()}\n`;
  }
  if (r === 1) return g.join(g.range(2, 5), () => `    at ${g.ident()}.${g.ident()} (${g.path()}:${g.range(1, 900)}:${g.range(1, 80)})`, "\n") + "\n";
  if (r === 2)
    return `${g.path().replace(/\.\w+$/, ".py")}::${g.ident()}::test_${g.ident().toLowerCase()} ${g.pick(["PASSED", "FAILED", "SKIPPED", "ERROR"])} [${g.range(1, 100)}%]\n`;
  if (r === 3)
    return `${g.pick(["-rw-r--r--", "drwxr-xr-x", "-rwxr-xr-x"])} ${g.range(1, 9)} root root ${String(g.int(99999)).padStart(6)} ${g.pick(["Jan", "Mar", "Nov"])} ${String(g.range(1, 28)).padStart(2)} ${g.range(10, 23)}:${g.range(10, 59)} ${g.ident().toLowerCase()}${g.pick([".py", "", ".log", ".json"])}\n`;
  if (r === 4)
    return `${g.range(10, 250)}.${g.int(256)}.${g.int(256)}.${g.int(256)} - - [${g.range(1, 28)}/Nov/2025:${g.range(10, 23)}:${g.range(10, 59)}:${g.range(10, 59)} +0000] "${g.pick(["GET", "POST"])} /${g.ident().toLowerCase()}/${g.int(10000)}?q=${g.hex(6)} HTTP/1.1" ${g.pick([200, 201, 304, 404, 500])} ${g.int(50000)}\n`;
  if (r === 5) return `commit ${g.hex(40)}\nAuthor: ${cap(g.pick(IDENT_PARTS))} <${g.pick(IDENT_PARTS)}@example.com>\n\n    ${g.sentence()}\n`;
  return `${g.timestamp()} ${lvl.padEnd(5)} [${g.ident()}] ${g.sentence()} id=${g.hex(g.pick([8, 16, 32]))} took ${g.number()}ms\n`;
}

function cjk(g: Gen): string {
  const lang = g.chance(0.9) ? g.style % 3 : g.int(3);
  const [words, sep, stops]: [readonly string[], string, readonly string[]] =
    lang === 0 ? [ZH, "", ["。", "，", "！", "？", "；"]] : lang === 1 ? [JA, "", ["。", "、", "！", "？"]] : [KO, " ", [".", ",", "?"]];
  const n = g.range(4, 18);
  const ws: string[] = [];
  for (let i = 0; i < n; i++) {
    if (g.chance(0.05)) ws.push(g.chance(0.5) ? g.number() : g.pick(["API", "JSON", "Python", "OK", "GPU", "v2"]));
    else ws.push(g.pick(words));
    if (i < n - 1 && g.chance(0.1)) ws[ws.length - 1] += g.pick(stops);
  }
  const s = ws.join(sep) + g.pick(stops) + sep;
  return g.chance(0.15) ? `${s}\n` : g.chance(0.1) ? `「${s}」` : s;
}

function emojiOne(g: Gen): string {
  const r = g.int(10);
  if (r < 5) return g.pick(EMOJI);
  if (r < 7) return g.pick(TONED).replace("\uFE0F", "") + g.pick(TONE);
  if (r < 9) return g.pick(ZWJ);
  return g.pick(FLAGS);
}

function emoji(g: Gen): string {
  const r = g.int(4);
  if (r === 0) return g.join(g.range(1, 6), () => emojiOne(g), g.chance(0.5) ? "" : " ") + " ";
  if (r === 1) return `${emojiOne(g)} ${g.sentence()} `;
  if (r === 2) return `${g.sentence().slice(0, -1)} ${emojiOne(g)}${emojiOne(g)}\n`;
  return `- ${emojiOne(g)} **${cap(g.word())}**: ${g.join(g.range(2, 8), () => g.word(), " ")}\n`;
}

function intl(g: Gen): string {
  const langs = [FR, DE, ES, PL, RU, RU, AR, AR, EL, VI, HI];
  const words = g.chance(0.85) ? (langs[g.style % langs.length] as readonly string[]) : g.pick(langs);
  const n = g.range(4, 16);
  const ws: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = g.chance(0.08) ? g.number() : g.pick(words);
    if (i === 0) w = cap(w);
    if (i < n - 1 && g.chance(0.08)) w += ",";
    ws.push(w);
  }
  const end = words === AR ? g.pick([".", "؟", "،"]) : words === HI ? g.pick(["।", "?", "."]) : g.pick([".", ".", "?", "!"]);
  return ws.join(" ") + end + (g.chance(0.2) ? "\n" : " ");
}

const CHUNKS: Record<TextKind, (g: Gen) => string> = { prose, code, json, logs, cjk, emoji, intl };
