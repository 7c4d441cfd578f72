/**
 * The token estimator's features: the single source that scripts/gen-estimator.ts turns into
 * the SIMD kernel (assembly/estimate-features.generated.ts) and its scalar twin
 * (src/tokens/features.generated.ts).
 *
 * A feature counts the code units i of a text for which every term holds. A term looks at the
 * unit `at` positions back (0 = unit i itself) and asks for its class (src/tokens/classify.ts)
 * to be one of `classes`, or for the unit to be one of the printable ASCII `chars`; `not`
 * negates it. Before the text's first unit every position has class ST. Every feature's first
 * term must be at 0 and positive: padding after the text then never counts.
 *
 * The estimate of a text is the dot product of its counts with non-negative fitted weights and
 * no intercept (scripts/calibrate.ts), so estimates add up over concatenation up to the few
 * features that straddle the seam.
 */
import { kClassIds, type ClassName } from "./classify.js";

export { kClassIds, type ClassName };

export interface Term {
  at: number;
  classes?: readonly ClassName[];
  chars?: string;
  not?: boolean;
}

export interface Feature {
  name: string;
  terms: readonly Term[];
}

const L: ClassName[] = ["LO", "UP"];
const is = (at: number, ...classes: ClassName[]): Term => ({ at, classes });
const isnt = (at: number, ...classes: ClassName[]): Term => ({ at, classes, not: true });
const run = (name: string, classes: ClassName[], k: number): Feature => ({
  name,
  terms: Array.from({ length: k }, (_, j) => is(j, ...classes)),
});

export const kFeatureSpec: readonly Feature[] = [
  { name: "n_lo", terms: [is(0, "LO")] },
  { name: "n_up", terms: [is(0, "UP")] },
  { name: "n_dg", terms: [is(0, "DG")] },
  { name: "n_sp", terms: [is(0, "SP")] },
  { name: "n_nl", terms: [is(0, "NL")] },
  { name: "n_ct", terms: [is(0, "CT")] },
  { name: "n_pu", terms: [is(0, "PU")] },
  { name: "n_lx", terms: [is(0, "LX")] },
  { name: "n_al", terms: [is(0, "AL")] },
  { name: "n_cj", terms: [is(0, "CJ")] },
  { name: "n_hs", terms: [is(0, "HS")] },
  { name: "n_sy", terms: [is(0, "SY")] },
  { name: "L_start", terms: [is(0, ...L), isnt(1, ...L)] },
  { name: "camel", terms: [is(0, "UP"), is(1, "LO")] },
  run("L_run4", L, 4),
  run("L_run8", L, 8),
  { name: "D_start", terms: [is(0, "DG"), isnt(1, "DG")] },
  run("D_run4", ["DG"], 4),
  { name: "SP_cont", terms: [is(0, "SP"), is(1, "SP")] },
  { name: "PU_start", terms: [is(0, "PU"), isnt(1, "PU")] },
  { name: "PU_cont", terms: [is(0, "PU"), is(1, "PU")] },
  { name: "NL_start", terms: [is(0, "NL"), isnt(1, "NL")] },
  { name: "quote", terms: [{ at: 0, chars: "\"'`" }] },
  { name: "lx_start", terms: [is(0, "LX"), isnt(1, "LX")] },
  { name: "al_start", terms: [is(0, "AL"), isnt(1, "AL")] },
];
