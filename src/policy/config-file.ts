import { readFileSync } from "node:fs";
import { CtxfoldError } from "../errors.js";
import { kDeprecatedTieredNames, resolveTieredSettings, TieredSettings, type CompactorConfig } from "./config.js";

/** The settings a config file holds: createCompactor's, without what is code (store, summariser, counter, callbacks, clock). */
export type ConfigFileSettings = Omit<CompactorConfig, "store" | "summarizer" | "counter" | "onEvent" | "now">;

/**
 * A ctxfold config file: a JSON object of TieredSettings fields (what createCompactor takes,
 * without store, summariser or counter, which are code). E_BAD_INPUT naming the file and the
 * field for anything else.
 */
export function readConfigFile(file: string): ConfigFileSettings {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new CtxfoldError("E_BAD_INPUT", `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { path: file });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CtxfoldError("E_BAD_INPUT", `not JSON: ${(err as Error).message}`, { path: file });
  }
  return checkConfigObject(value, file);
}

/**
 * `value` as compactor settings: a plain object of TieredSettings fields (or their deprecated
 * names) with valid values, nothing else (no store, summariser, counter or callback, which are
 * code). E_BAD_INPUT naming `path` and the field otherwise. A config file's, and a queued
 * batch job's (`options.config`: input a worker admits).
 */
export function checkConfigObject(value: unknown, path: string): ConfigFileSettings {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new CtxfoldError("E_BAD_INPUT", `expected a JSON object of compactor settings`, { path });
  const unknown = Object.keys(value).filter((k) => !Object.hasOwn(TieredSettings.shape, k) && !Object.hasOwn(kDeprecatedTieredNames, k));
  if (unknown.length) {
    throw new CtxfoldError(
      "E_BAD_INPUT",
      `unknown setting ${unknown.map((k) => JSON.stringify(k)).join(", ")} (settings: ${Object.keys(TieredSettings.shape).join(", ")})`,
      { path: `${path}.${unknown[0]}` },
    );
  }
  resolveTieredSettings(value as CompactorConfig, path); // throws naming `path.field`
  return value as ConfigFileSettings;
}
