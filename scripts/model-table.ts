/**
 * The model table as docs/models.md shows it (its "model-table" section), rendered from
 * kModelProfiles: `npm run calibrate:models -- --table` rewrites the section after the table
 * changes, and test/tokens/models.test.ts holds the page equal to the table.
 */
import { kModelProfiles, type ModelProfile } from "../src/tokens/models.js";

const tokens = (n: number) => n.toLocaleString("en-US");

/** How a profile's budget is counted, for the table's factor column. */
function factorCell(p: ModelProfile): string {
  if (p.basis === "exact")
    return p.encoding === "o200k_base" ? "1 (exact)" : `exact with a ${p.encoding} counter; else ${p.factor} + ${Math.round(p.margin * 100)} %`;
  return `${p.factor} + ${Math.round(p.margin * 100)} %`;
}

/** The markdown table of every built-in profile. */
export function modelTableMarkdown(): string {
  const rows = kModelProfiles.map((p) => {
    const window = p.maxInputTokens === undefined ? tokens(p.contextWindow) : `${tokens(p.contextWindow)} (input ≤ ${tokens(p.maxInputTokens)})`;
    const sources = p.sources.factor === p.sources.window ? p.sources.window : `window: ${p.sources.window}; factor: ${p.sources.factor}`;
    return `| ${p.family} | ${p.prefixes.map((x) => `\`${x}\``).join(" ")} | ${window} | ${p.tokenizer} | ${factorCell(p)} | ${p.basis} | ${p.provider} | ${sources} |`;
  });
  return `| family | id prefixes | window | tokenizer | factor + margin | basis | overheads | sources |
|---|---|---:|---|---|---|---|---|
${rows.join("\n")}
`;
}
