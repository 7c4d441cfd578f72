import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkModelProfile, kMeasuredFactors, kModelProfiles, modelProfileOf, registerModelProfile } from "../../src/tokens/models.js";
import { thrown } from "../helpers.js";
import { modelTableMarkdown } from "../../scripts/model-table.js";

describe("the model table", () => {
  it("every profile is valid, has sources, and no prefix belongs to two families", () => {
    const seen = new Map<string, string>();
    for (const p of kModelProfiles) {
      expect(() => checkModelProfile(p)).not.toThrow();
      expect(p.sources.window, p.family).toMatch(/^https:\/\//);
      expect(p.sources.factor, p.family).not.toBe("");
      // Exact families count in their own encoding; every other factor is an estimate with a margin.
      if (p.basis === "exact") expect(p.encoding, p.family).toBeDefined();
      else expect(p.margin, p.family).toBeGreaterThanOrEqual(0.02);
      for (const k of p.prefixes) {
        expect(k).toBe(k.toLowerCase());
        expect(seen.get(k), `${k} in ${p.family} and ${seen.get(k)}`).toBeUndefined();
        seen.set(k, p.family);
      }
    }
  });

  it("docs/models.md shows it as it is (npm run calibrate:models -- --table rewrites it)", () => {
    const page = readFileSync(new URL("../../docs/models.md", import.meta.url), "utf8");
    const section = page.slice(page.indexOf("<!-- model-table:begin -->\n") + "<!-- model-table:begin -->\n".length, page.indexOf("<!-- model-table:end -->"));
    expect(section).toBe(modelTableMarkdown());
  });

  it("the README's summary of it names only factors and margins the table has", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## Models and budgets"), readme.indexOf("docs/models.md)", readme.indexOf("## Models and budgets")));
    const pairs = [...section.matchAll(/(\d\.\d+) \+ (\d+) %/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(pairs.length).toBeGreaterThan(8);
    for (const [factor, margin] of pairs) {
      expect(
        kModelProfiles.some((p) => p.factor === factor && Math.round(p.margin * 100) === margin),
        `${factor} + ${margin} %`,
      ).toBe(true);
    }
  });

  it("its measured factors are the ones `npm run calibrate:models` wrote", () => {
    const measured = JSON.parse(readFileSync(new URL("../../bench/results/model-factors.json", import.meta.url), "utf8")) as {
      families: { name: string; factor: number; runs: { p95: number } }[];
    };
    const byName = new Map(measured.families.map((f) => [f.name, f]));
    for (const [name, m] of Object.entries(kMeasuredFactors)) {
      expect(m, name).toEqual({ factor: byName.get(name)!.factor, p95: byName.get(name)!.runs.p95 });
    }
    // A measured family's factor and margin reach its runs' 95th percentile.
    for (const p of kModelProfiles.filter((x) => x.basis === "measured")) {
      const m = Object.values(kMeasuredFactors).find((x) => x.factor === p.factor)!;
      expect(p.factor * (1 + p.margin), p.family).toBeGreaterThanOrEqual(m.p95 - 1e-9);
    }
  });

  it("finds a model's family by its id, the longest prefix winning, in the forms providers and hosts write ids", () => {
    const family = (id: string) => modelProfileOf(id)?.family;
    expect(family("gpt-4o-mini-2024-07-18")).toBe("GPT-4o");
    expect(family("openai/gpt-4.1-mini")).toBe("GPT-4.1");
    expect(family("gpt-4-0613")).toBe("GPT-4");
    expect(family("gpt-4-turbo-2024-04-09")).toBe("GPT-4 Turbo");
    expect(modelProfileOf("gpt-5.2")).toMatchObject({ contextWindow: 400_000, maxInputTokens: 272_000, encoding: "o200k_base" });
    expect(family("gpt-5-chat-latest")).toBe("GPT-5 chat");
    expect(family("o4-mini-2025-04-16")).toBe("o1, o3, o4-mini");
    expect(modelProfileOf("claude-sonnet-4-20250514")).toMatchObject({ contextWindow: 200_000, provider: "anthropic", basis: "estimate" });
    expect(modelProfileOf("us.anthropic.claude-opus-4-6-v1")).toMatchObject({ contextWindow: 1_000_000, basis: "estimate" });
    expect(modelProfileOf("claude-opus-4-7")).toMatchObject({ contextWindow: 1_000_000, basis: "published" });
    // A Claude id the table does not list: the smaller window and the newer tokenizer's factor.
    expect(modelProfileOf("claude-sonnet-7")).toMatchObject({
      family: "Claude (other ids)",
      contextWindow: 200_000,
      factor: modelProfileOf("claude-opus-4-7")!.factor,
    });
    expect(family("google/gemini-2.5-pro")).toBe("Gemini");
    expect(family("meta-llama/Llama-3.3-70B-Instruct")).toBe("Llama 3.1 – 3.3");
    expect(family("llama3.1:8b")).toBe("Llama 3.1 – 3.3");
    expect(family("Qwen/Qwen3-32B")).toBe("Qwen 2.5, Qwen 3");
    expect(family("deepseek-reasoner")).toBe("DeepSeek V3, R1");
    expect(family("mistral-large-latest")).toBe("Mistral Large, Medium");
    for (const id of ["my-local-model", "claude-local", "", "x".repeat(10)]) expect(modelProfileOf(id)).toBeUndefined();
    expect(modelProfileOf(undefined)).toBeUndefined();
  });

  it("a registered profile adds a family or wins over the built-in one, until removed", () => {
    const before = modelProfileOf("gpt-4o");
    const remove = registerModelProfile({
      family: "Our gateway's gpt-4o",
      prefixes: ["gpt-4o"],
      contextWindow: 64_000,
      factor: 1,
      margin: 0,
      encoding: "o200k_base",
    });
    const local = registerModelProfile({ family: "Local", prefixes: ["My-Local"], contextWindow: 32_768, factor: 1.1, margin: 0.05 });
    try {
      expect(modelProfileOf("gpt-4o-mini")).toMatchObject({ family: "Our gateway's gpt-4o", contextWindow: 64_000 });
      expect(modelProfileOf("my-local-model")).toMatchObject({ family: "Local", provider: "openai", basis: "estimate" });
    } finally {
      remove();
      local();
    }
    expect(modelProfileOf("gpt-4o-mini")).toBe(before);
    expect(modelProfileOf("my-local-model")).toBeUndefined();
  });

  it("a profile it cannot use is named field by field", () => {
    const ok = { family: "X", prefixes: ["x-"], contextWindow: 1000, factor: 1, margin: 0 };
    expect(thrown(() => registerModelProfile({ ...ok, contextWindow: 0 }), "E_BAD_INPUT").path).toBe("profile.contextWindow");
    expect(thrown(() => registerModelProfile({ ...ok, factor: Number.NaN }), "E_BAD_INPUT").path).toBe("profile.factor");
    expect(thrown(() => registerModelProfile({ ...ok, margin: -0.1 }), "E_BAD_INPUT").path).toBe("profile.margin");
    expect(thrown(() => registerModelProfile({ ...ok, prefixes: [] }), "E_BAD_INPUT").path).toBe("profile.prefixes");
    expect(thrown(() => registerModelProfile({ ...ok, encoding: "p50k_base" as never }), "E_BAD_INPUT").path).toBe("profile.encoding");
    expect(thrown(() => modelProfileOf("m".repeat(5000)), "E_BAD_INPUT").path).toBe("model");
  });
});
