// GENERATED placeholder: replaced by scripts/calibrate.ts.
export const O200K_WEIGHTS: readonly number[] = new Array(25).fill(0.1);
export const CL100K_WEIGHTS: readonly number[] = new Array(25).fill(0.1);
