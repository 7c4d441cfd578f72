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
  /** Conjunctions of terms; a unit counts once when any of them holds. */
  alts: readonly (readonly Term[])[];
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
/** `name` counts the units where all of `terms` hold. */
const f = (name: string, ...terms: Term[]): Feature => ({ name, alts: [terms] });
/** `name` counts the units where any of the conjunctions `alts` holds. */
const any = (name: string, ...alts: Term[][]): Feature => ({ name, alts });
/** `k` consecutive units ending at i, each one of `names`. */
const run = (k: number, ...names: Name[]): Term[] => Array.from({ length: k }, (_, at) => t(at, ...names));

/**
 * The features, chosen by stepwise selection (add, drop and swap one at a time, scored on the
 * held-out half) from a pool of some 1,500 candidates: class counts, run starts after each
 * context, runs of length k, and every trigram of coarse classes. Most of them approximate where
 * the encoders' pre-tokenizer splits: a word starts after a space, a newline, a digit or two
 * punctuation units; camelCase and ALLCaps boundaries; digits in groups of three; runs of
 * punctuation and brackets; space runs before a word. The rest price non-Latin scripts.
 */
export const kFeatureSpec: readonly Feature[] = [
  // Where words start.
  f("L_after_SP", t(0, "L"), t(1, "SP")),
  f("L_after_NL", t(0, "L"), t(1, "NL", "CT", "ST")),
  f("L_after_DG", t(0, "L"), t(1, "DG")),
  f("L_after_PU_PU", t(0, "L"), t(1, "PU"), t(2, "PU")),
  f("L_after_PU_SP", t(0, "L"), t(1, "PU"), t(2, "SP")),
  f("camel", t(0, "UP"), t(1, "LO")),
  f("UP_UP_after_LO", t(0, "UP"), t(1, "UP"), t(2, "LO")),
  f("UP2_start", t(0, "UP"), t(1, "UP"), n(2, "L")),
  f("L_run6", ...run(6, "L")),
  // Digits: pre-tokenizers cut numbers into groups of at most three.
  any("DG_group", [t(0, "DG"), n(1, "DG")], [...run(4, "DG"), n(4, "DG")], [...run(7, "DG"), n(7, "DG")]),
  f("DG_after_SP", t(0, "DG"), t(1, "SP")),
  f("SP_SP_after_DG", t(0, "SP"), t(1, "SP"), t(2, "DG")),
  // Punctuation.
  f("PU_start", t(0, "PU"), n(1, "PU")),
  f("PU_run3", ...run(3, "PU")),
  f("PB_run3", ...run(3, "PB")),
  f("PO_DG_PO", t(0, "PO"), t(1, "DG"), t(2, "PO")),
  f("PO_LO_PB", t(0, "PO"), t(1, "LO"), t(2, "PB")),
  f("LO_PB_NL", t(0, "LO"), t(1, "PB"), t(2, "NL")),
  f("slash", t(0, "SLASH")),
  f("backtick", t(0, "TICK")),
  // Whitespace: a space run before a word leaves its last space to the word.
  f("SP_run_end", t(0, "L", "DG", "PU", "NONASCII"), t(1, "SP"), t(2, "SP", "CT")),
  f("NL_alone", t(0, "NL"), n(1, "PU", "NL")),
  // Other scripts.
  f("n_lx", t(0, "LX")),
  f("LX_run3", ...run(3, "LX")),
  f("n_cy", t(0, "CY")),
  f("n_rt", t(0, "RT")),
  f("n_br", t(0, "BR")),
  f("AL_word_start", t(0, "AL"), n(1, "W", "CK")),
  f("CK_start", t(0, "CK"), n(1, "CK")),
  f("CK_run3", ...run(3, "CK")),
  f("HS_start", t(0, "HS"), n(1, "HS")),
  f("n_ls", t(0, "LS")),
  f("n_sy", t(0, "SY")),
];
