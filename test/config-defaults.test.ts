// Every setting documents its default: each optional field of an exported config or options type
// (an interface named …Options, …Config, …Settings or …Input) and each field of an exported zod
// config schema carries a TSDoc @default tag, so the API docs say what leaving it out means.
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../src/", import.meta.url));
const kConfigName = /(Options|Config|Settings|Input)$/;

const exported = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
const hasDefault = (node: ts.Node) => ts.getJSDocTags(node).some((t) => t.tagName.text === "default");

/** The object literal of `z.strictObject({ … })` or `z.object({ … })`, if that is what `init` is. */
function zodShape(init: ts.Expression | undefined): ts.ObjectLiteralExpression | undefined {
  if (!init || !ts.isCallExpression(init) || !/^z\.(strictObject|object)$/.test(init.expression.getText())) return undefined;
  const [shape] = init.arguments;
  return shape && ts.isObjectLiteralExpression(shape) ? shape : undefined;
}

/** `Type.field` for every setting of `file` without a @default, and how many settings it has. */
function undocumented(file: string): { missing: string[]; settings: number } {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const missing: string[] = [];
  let settings = 0;
  for (const st of sf.statements) {
    if (ts.isInterfaceDeclaration(st) && exported(st) && kConfigName.test(st.name.text)) {
      for (const m of st.members) {
        if (!ts.isPropertySignature(m) || !m.questionToken) continue;
        settings++;
        if (!hasDefault(m)) missing.push(`${st.name.text}.${m.name.getText()}`);
      }
    }
    if (ts.isVariableStatement(st) && exported(st)) {
      for (const d of st.declarationList.declarations) {
        const shape = zodShape(d.initializer);
        if (!shape || !kConfigName.test(d.name.getText())) continue;
        for (const p of shape.properties) {
          settings++;
          if (!hasDefault(p)) missing.push(`${d.name.getText()}.${p.name?.getText()}`);
        }
      }
    }
  }
  return { missing, settings };
}

describe("config and options types", () => {
  it("every setting of every exported config or options type documents its default", () => {
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).map((f) => path.join(src, f));
    const results = files.map((f) => ({ file: path.relative(src, f), ...undocumented(f) }));
    expect(results.flatMap((r) => r.missing.map((m) => `${r.file}: ${m}`))).toEqual([]);
    // The three compaction configs are among those read.
    for (const file of ["policy/config.ts", "steps/config.ts", "block/config.ts"]) expect(results.find((r) => r.file === file)!.settings).toBeGreaterThan(5);
  });
});
