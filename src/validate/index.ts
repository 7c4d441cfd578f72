/**
 * Provider validation of canonical transcripts: the rules as data (kRules), validate(), and
 * newViolations() to tell what a compaction broke.
 */
export { kIssueCodes, kRules, severityOf, usesThinking, type Finding, type Issue, type IssueCode, type Rule, type RuleContext, type Severity } from "./rules.js";
export { pairCalls, type Pairing } from "./pairing.js";
export { newViolations, validate, type ValidateOptions, type ValidationResult } from "./validate.js";
