// Numeric error codes returned by kernels (negative results). The host maps them to
// CtxfoldError codes in src/core/core-instance.ts (kKernelErrors); keep the two tables in step.
export const E_BAD_LENGTH: i32 = -1;
export const E_BAD_TURN_ID: i32 = -2;
export const E_BAD_CATEGORY: i32 = -3;
export const E_BAD_OFFSETS: i32 = -4;
export const E_BAD_TERM: i32 = -5;
