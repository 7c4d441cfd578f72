/**
 * The token estimator's features: the single source that scripts/gen-estimator.ts turns into
 * the SIMD kernel (assembly/estimate-features.generated.ts) and its scalar twin
 * (src/tokens/features.generated.ts).
 *
 * A feature counts the code units i of a text (0 <= i < length) at which every term holds. A
 * term looks at the unit `at` positions back (0 = unit i itself, at most 7) and asks for it to
 * be of one of `classes` (src/tokens/classify.ts; groups expand to their classes) or one of the
 * printable ASCII `chars`; `not` negates it. Positions before the text have class ST, so a
 * text's counts never depend on what precedes it in a larger string, and `1:!L` holds at i = 0.
 * Every feature's first term is positive and at 0, so padding after the text never counts.
 *
 * The estimate is the dot product of the counts with non-negative fitted weights and no
 * intercept (scripts/calibrate.ts), so estimates add up over concatenation except for the few
 * terms that look across the seam.
 */
import { kBracketChars, kClassGroups, kClassIds, kQuoteChars, type ClassName, type GroupName } from "./classify.js";

export { kBracketChars, kClassGroups, kClassIds, kQuoteChars, type ClassName, type GroupName };

export interface Term {
  at: number;
  classes?: readonly (ClassName | GroupName)[];
  chars?: string;
  not?: boolean;
}

export interface Feature {
  name: string;
  terms: readonly Term[];
}

/** Names a term may use: classes, groups, and two char sets that are not classes. */
type Name = ClassName | GroupName | "SLASH" | "TICK";
const kCharNames: Partial<Record<Name, string>> = { SLASH: "/\\", TICK: "`" };

function term(at: number, names: Name[], not: boolean): Term {
  const classes = names.filter((x) => !(x in kCharNames)) as (ClassName | GroupName)[];
  const chars = names.map((x) => kCharNames[x] ?? "").join("");
  return { at, ...(classes.length ? { classes } : {}), ...(chars ? { chars } : {}), ...(not ? { not } : {}) };
}
/** The unit `at` back is one of `names`. */
const t = (at: number, ...names: Name[]): Term => term(at, names, false);
/** The unit `at` back is none of `names`. */
const n = (at: number, ...names: Name[]): Term => term(at, names, true);
const f = (name: string, ...terms: Term[]): Feature => ({ name, terms });

export const kFeatureSpec: readonly Feature[] = [
  f("n_lo", t(0, "LO")),
  f("n_up", t(0, "UP")),
  f("n_dg", t(0, "DG")),
  f("n_sp", t(0, "SP")),
  f("n_nl", t(0, "NL")),
  f("n_ct", t(0, "CT")),
  f("n_pu", t(0, "PU")),
  f("n_lx", t(0, "LX")),
  f("n_al", t(0, "AL")),
  f("n_cj", t(0, "CJ", "HG")),
  f("n_hs", t(0, "HS")),
  f("n_sy", t(0, "SY")),
  f("L_start", t(0, "L"), n(1, "L")),
  f("camel", t(0, "UP"), t(1, "LO")),
  f("L_run4", t(0, "L"), t(1, "L"), t(2, "L"), t(3, "L")),
  f("L_run8", t(0, "L"), t(1, "L"), t(2, "L"), t(3, "L"), t(4, "L"), t(5, "L"), t(6, "L"), t(7, "L")),
  f("D_start", t(0, "DG"), n(1, "DG")),
  f("D_run4", t(0, "DG"), t(1, "DG"), t(2, "DG"), t(3, "DG")),
  f("SP_cont", t(0, "SP"), t(1, "SP")),
  f("PU_start", t(0, "PU"), n(1, "PU")),
  f("PU_cont", t(0, "PU"), t(1, "PU")),
  f("NL_start", t(0, "NL"), n(1, "NL")),
  f("quote", t(0, "PQ")),
  f("lx_start", t(0, "LX"), n(1, "LX")),
  f("al_start", t(0, "AL"), n(1, "AL")),
];
