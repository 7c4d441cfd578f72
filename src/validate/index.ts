/**
 * Provider validation of canonical transcripts: the rules as data (kRules), validate(), and
 * newViolations() to tell what a compaction broke.
 */
export { kRules, severityOf, usesThinking, type Rule, type RuleContext } from "./rules.js";
export { kIssueCodes, type Finding, type Issue, type IssueCode, type Severity } from "./issues.js";
export { pairCalls, type Pairing } from "./pairing.js";
export { newViolations, validate, type ValidateOptions, type ValidationResult } from "./validate.js";
