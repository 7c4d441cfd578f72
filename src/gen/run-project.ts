/**
 * The simulated project one generated run works in (src/gen/run.ts): its language, package,
 * file tree and symbols, the tool harness's style, the files' contents (the same every time a
 * file is read, as written once written), and the seeded choices every part of a run draws with.
 */
import { syntheticText, type Rng, type TextKind } from "./text.js";

/** Smallest and largest file read, in UTF-16 code units. */
export const kFileReadChars = { min: 500, max: 40_000 } as const;

export type Lang = "python" | "typescript";
export type ToolKey = "read" | "write" | "bash" | "search" | "fetch" | "list";

export interface Project {
  lang: Lang;
  root: string;
  pkg: string;
  sources: string[];
  tests: string[];
  docs: string[];
  data: string[];
  dirs: string[];
  symbols: string[];
}

export interface Harness {
  argStyle: "compact" | "spaced" | "indented";
  shell: "returncode" | "trailer" | "header";
  errors: "python" | "node";
  absPaths: boolean;
  lineNumbers: boolean;
  names: Record<ToolKey, string>;
}

/** One run's state: its random source, project and harness, the files' contents so far, the files written. */
export interface Ctx {
  r: Rng;
  project: Project;
  harness: Harness;
  files: Map<string, string>;
  written: string[];
}

export const kNouns = [
  "parser",
  "config",
  "session",
  "cache",
  "router",
  "schema",
  "client",
  "server",
  "utils",
  "models",
  "tokens",
  "render",
  "loader",
  "store",
  "events",
  "auth",
  "query",
  "format",
  "compat",
  "registry",
  "worker",
  "queue",
  "storage",
  "metrics",
  "plugin",
  "stream",
  "core",
  "cli",
  "adapters",
  "paths",
];
export const kVerbs = [
  "get",
  "set",
  "parse",
  "load",
  "build",
  "resolve",
  "render",
  "validate",
  "normalize",
  "compute",
  "merge",
  "flush",
  "apply",
  "fetch",
  "encode",
  "decode",
  "split",
  "handle",
  "register",
  "emit",
];
const kPackages = ["flowkit", "datapipe", "tinyorm", "httpkit", "shelfdb", "quickcfg", "astrolab", "mdtools", "taskq", "geomap"];

export const pick = <T>(r: Rng, xs: readonly T[]): T => xs[r.int(xs.length)];
export const chance = (r: Rng, p: number): boolean => r.next() < p;
export const between = (r: Rng, lo: number, hi: number): number => lo + r.int(hi - lo + 1);
export const logUniform = (r: Rng, lo: number, hi: number): number => Math.round(lo * (hi / lo) ** r.next());
export const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

export function makeProject(r: Rng): Project {
  const lang: Lang = chance(r, 0.55) ? "python" : "typescript";
  const pkg = pick(r, kPackages);
  const nouns = [...new Set(Array.from({ length: between(r, 5, 12) }, () => pick(r, kNouns)))];
  const sub = pick(r, ["backends", "io", "internal", "plugins"]);
  const ext = lang === "python" ? ".py" : ".ts";
  const srcDir = lang === "python" ? pkg : "src";
  const sources = nouns.map((n, i) => (i % 4 === 3 ? `${srcDir}/${sub}/${n}${ext}` : `${srcDir}/${n}${ext}`));
  if (lang === "python") sources.push(`${pkg}/__init__.py`);
  const tests = nouns.filter((_, i) => i % 2 === 0).map((n) => (lang === "python" ? `tests/test_${n}.py` : `test/${n}.test.ts`));
  const docs = ["README.md", "CHANGELOG.md", `docs/${nouns[0]}.md`];
  if (chance(r, 0.2)) docs.push(pick(r, ["docs/用户指南.md", "docs/guide.fr.md", "docs/anleitung.de.md"]));
  const data = [lang === "python" ? `${pkg}/data/${pick(r, nouns)}.json` : "package.json", "config.json", `logs/${pick(r, nouns)}.log`];
  const symbols = Array.from({ length: between(r, 6, 14) }, () => symbolName(r, lang));
  const dirs = [...new Set([".", ...[...sources, ...tests, ...docs, ...data].map(dirname)])];
  return { lang, root: pick(r, ["/repo", "/testbed", `/workspace/${pkg}`, `/home/user/${pkg}`]), pkg, sources, tests, docs, data, dirs, symbols };
}

function symbolName(r: Rng, lang: Lang): string {
  const verb = pick(r, kVerbs);
  const noun = pick(r, kNouns);
  if (chance(r, 0.2)) return cap(noun) + cap(pick(r, kNouns));
  return lang === "python" ? `${verb}_${noun}` : verb + cap(noun);
}

export function makeHarness(r: Rng): Harness {
  const x = r.next();
  return {
    argStyle: x < 0.55 ? "compact" : x < 0.9 ? "spaced" : "indented",
    shell: pick(r, ["returncode", "trailer", "header"] as const),
    errors: chance(r, 0.5) ? "python" : "node",
    absPaths: chance(r, 0.3),
    lineNumbers: chance(r, 0.3),
    names: { read: "read_file", write: "write_file", bash: "bash", search: chance(r, 0.5) ? "grep" : "search", fetch: "web_fetch", list: "list_dir" },
  };
}

export const dirname = (path: string): string => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".");
export const shown = (ctx: Ctx, rel: string): string => (ctx.harness.absPaths ? (rel === "." ? ctx.project.root : `${ctx.project.root}/${rel}`) : rel);
export const allFiles = (p: Project): string[] => [...p.sources, ...p.tests, ...p.docs, ...p.data];

/** A path that is not in the project: a made-up file beside a real one, or in a missing directory. */
export function missingPath(ctx: Ctx, inMissingDir = false): string {
  const { r, project: p } = ctx;
  const ext = p.lang === "python" ? ".py" : ".ts";
  const dir = inMissingDir ? pick(r, ["build/tmp", "out/gen", "src/legacy", "vendor/patches"]) : dirname(pick(r, p.sources));
  let path = `${dir}/${pick(r, kNouns)}_${pick(r, kNouns)}${ext}`;
  while (ctx.files.has(path)) path = path.replace(/(\.\w+)$/, "_old$1");
  return path;
}

/** Raw argument text in the run's style: compact, Python json.dumps (spaced, ASCII-escaped), or indented. */
export function formatArgs(style: Harness["argStyle"], args: Record<string, string>): string {
  if (style === "compact") return JSON.stringify(args);
  if (style === "indented") return JSON.stringify(args, null, 2);
  const fields: string[] = [];
  for (const k in args) fields.push(`${JSON.stringify(k)}: ${asciiJson(args[k])}`);
  return `{${fields.join(", ")}}`;
}

const asciiJson = (s: string): string => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

export function kindOf(path: string): TextKind {
  if (/\.(py|ts|js)$/.test(path)) return "code";
  if (path.endsWith(".json")) return "json";
  if (path.endsWith(".log")) return "logs";
  if (path.includes("用户指南")) return "cjk";
  if (/\.(fr|de)\.md$/.test(path)) return "intl";
  return "prose";
}

/**
 * The file's text: generated once per run, then as read or written. Sizes span 0.5-40 KB with
 * small files commoner (min * (max/min)^(u^1.5): median ~2.3 KB, mean ~6.7 KB), as in real reads.
 */
export function fileText(ctx: Ctx, rel: string): string {
  let t = ctx.files.get(rel);
  if (t === undefined) {
    const { min, max } = kFileReadChars;
    const size = Math.round(min * (max / min) ** (ctx.r.next() ** 1.5));
    t = clip(syntheticText(kindOf(rel), size, ctx.r), max);
    ctx.files.set(rel, t);
  }
  return t;
}

/** Cuts to at most `max` code units without splitting a surrogate pair. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const c = s.charCodeAt(max - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
}

/** `cat -n` numbering, cut back at a line boundary so the read stays within the size bound. */
export function numbered(t: string): string {
  const lines = t.split("\n");
  const out: string[] = [];
  let len = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = `${String(i + 1).padStart(6)}\t${lines[i]}`;
    if (len + line.length + 1 > kFileReadChars.max) break;
    out.push(line);
    len += line.length + 1;
  }
  return out.join("\n");
}
