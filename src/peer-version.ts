/**
 * Whether the optional peers installed beside ctxfold are versions it works with: the CLI checks
 * the packages a command loads (cli/optional-peers.ts), each integration its framework's package
 * when it is made. A peer outside its range is E_PEER_VERSION, one line naming the range, the
 * installed version and the npm command that installs a good one.
 *
 * Decisions:
 * - The ranges are ctxfold's own package.json `peerDependencies` (packageRoot), the one list;
 *   their grammar is version-range.ts's. No package.json found, or a range of another form, and
 *   nothing is checked.
 * - The installed version is the one Node gives ctxfold's own modules: the specifier resolved from
 *   this module as its `import()` would (import.meta.resolve, loader hooks included; createRequire
 *   where there is no import.meta.resolve), then the package.json of that name at or above the
 *   resolved file (many packages do not export `./package.json`, and dual packages keep a
 *   nameless one in dist/esm/). A peer that does not resolve (not installed, or bundled where
 *   ctxfold cannot see it) is not checked: the CLI then reports it missing when it loads it, and
 *   the integrations, whose types are structural, go on.
 * - Each peer is looked up once per process (the result is kept); the verdict is given at every
 *   call, so every integration made beside an old peer throws.
 */
import { createRequire } from "node:module";
import { dirname, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import { CtxfoldError } from "./errors.js";
import { packageJsonIn, packageRoot } from "./package-root.js";
import { satisfiesRange } from "./version-range.js";

/** Resolves a module specifier as ctxfold's modules import it: a file URL or an absolute path; throws when it cannot. */
export type PeerResolver = (specifier: string) => string;

/** A peer installed at a version outside ctxfold's range for it. */
export interface PeerMismatch {
  readonly name: string;
  readonly range: string;
  readonly installed: string;
}

const kResolveFromCtxfold: PeerResolver =
  typeof import.meta.resolve === "function" ? (specifier) => import.meta.resolve(specifier) : (specifier) => createRequire(import.meta.url).resolve(specifier);

let resolver: PeerResolver = kResolveFromCtxfold;
const installed = new Map<string, string | undefined>();
let ranges: Readonly<Record<string, string>> | undefined;

/**
 * Tests: resolve peers with `resolve` from now on (undefined: as ctxfold's modules do), and look
 * every peer up again. Not part of the package's API.
 */
export function setPeerResolver(resolve: PeerResolver | undefined): void {
  resolver = resolve ?? kResolveFromCtxfold;
  installed.clear();
}

/**
 * The version of `name` that `resolve` finds: its `package.json` (when the package exports it),
 * else its main entry, and from there the package.json above it whose name is `name`. Undefined
 * when neither resolves or no such package.json is found.
 */
export function installedVersion(name: string, resolve: PeerResolver = resolver): string | undefined {
  for (const specifier of [`${name}/package.json`, name]) {
    let file: string;
    try {
      file = resolve(specifier);
    } catch {
      continue; // not installed, or not exported under that specifier: try the next
    }
    const path = file.startsWith("file:") ? fileURLToPath(file) : file;
    if (!isAbsolute(path)) continue; // a builtin, or a URL of a loader's own: no file to read
    const version = versionAbove(path, name);
    if (version !== undefined) return version;
  }
  return undefined;
}

/** The version in the nearest package.json named `name` at or above `file`'s directory. */
function versionAbove(file: string, name: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = packageJsonIn(dir); // none here (or not JSON): keep going up
    if (pkg?.name === name) return typeof pkg.version === "string" ? pkg.version : undefined;
    if (dirname(dir) === dir) return undefined;
  }
}

/** installedVersion with the current resolver, looked up once per process. */
function installedOnce(name: string): string | undefined {
  if (!installed.has(name)) installed.set(name, installedVersion(name));
  return installed.get(name);
}

/**
 * The peers among `names` that are installed at a version outside ctxfold's range for them.
 * A peer not installed, without a range, or whose range or version is not of version-range.ts's
 * grammar is not among them.
 */
export function peerMismatches(names: readonly string[]): PeerMismatch[] {
  ranges ??= packageRoot()?.peerDependencies ?? {};
  const out: PeerMismatch[] = [];
  for (const name of names) {
    const range = ranges[name];
    if (range === undefined) continue;
    const version = installedOnce(name);
    if (version !== undefined && satisfiesRange(version, range) === false) out.push({ name, range, installed: version });
  }
  return out;
}

/** A range as a shell word: quoted when it holds a character the shell would read (`>=`). */
const shellRange = (range: string): string => (/^[\w.^~+-]+$/.test(range) ? range : `"${range}"`);

/**
 * E_PEER_VERSION, one line: `ctxfold mcp needs @modelcontextprotocol/sdk ^1.32.2; 1.0.4 is
 * installed: npm install @modelcontextprotocol/sdk@^1.32.2`.
 */
export function peerVersionError(what: string, mismatches: readonly PeerMismatch[]): CtxfoldError {
  const needs = mismatches.map((m) => `${m.name} ${m.range}`).join(" and ");
  const has =
    mismatches.length === 1 ? `${mismatches[0]!.installed} is installed` : `${mismatches.map((m) => `${m.name} ${m.installed}`).join(" and ")} are installed`;
  const install = mismatches.map((m) => `${m.name}@${shellRange(m.range)}`).join(" ");
  return new CtxfoldError("E_PEER_VERSION", `${what} needs ${needs}; ${has}: npm install ${install}`);
}

/** Throws E_PEER_VERSION naming `what` when any of `peers` is installed outside its range (see peerMismatches). */
export function checkPeerVersions(peers: readonly string[], what: string): void {
  const mismatches = peerMismatches(peers);
  if (mismatches.length > 0) throw peerVersionError(what, mismatches);
}
