/**
 * What a store's names and refs look like: `<prefix>/<kind>_<content address>[-<n>].<ext>`, the
 * kind and ext sanitised from the put's hint. The address is 32 hex digits (SHA-256 cut to 128
 * bits, src/core/content-address.ts) in what stores write now, or 16 (XXH64) in stores written
 * before, which are still read. One grammar for making names, checking refs, finding refs in text
 * and reading a ref's parts.
 */

const kDefaultKind = "output";
const kDefaultExt = "txt";
const kMaxKindChars = 16;
const kMaxExtChars = 10;

/** How a name looks, for messages that say what a ref should be. */
export const kNameShape = "<kind>_<32 hex digits>.<ext>";

/** The pieces of a name: `<kind>_<hash><chain>.<ext>` (the chain `-1`, `-2`… of hash collisions). */
const kKind = `[a-z0-9_-]{1,${kMaxKindChars}}`;
/** 32 hex digits, or the 16 of names written before: tried longest first, so a 32-digit address is never read as 16. */
const kHash = "(?:[0-9a-f]{32}|[0-9a-f]{16})";
const kChain = "(?:-[0-9]+)?";
const kExt = `[a-z0-9_-]{1,${kMaxExtChars}}`;

/**
 * Every name a store generates, and nothing else: no dots but the one, no slashes, no dot files.
 * Group 1 is the content hash, the same for every name of a collision chain (`-1`, `-2`…); its
 * width says which hash made it (see ContentAddressedStore's verified reads).
 */
const kNameSource = `${kKind}_(${kHash})${kChain}\\.${kExt}`;
export const kNamePattern = new RegExp(`^${kNameSource}$`);

/** What a ref names: the prefix before its last `/` (undefined for a bare name), the name, and the kind and ext the name carries. */
export interface RefParts {
  prefix: string | undefined;
  name: string;
  kind: string;
  ext: string;
}

/** The same names, with the kind in group 1 and the ext in group 2. */
const kNameParts = new RegExp(`^(${kKind})_${kHash}${kChain}\\.(${kExt})$`);

/** The same names, with the hash in group 2 and the rest of the name around it in groups 1 and 3 (the pack index's name shapes). */
export const kNameAroundHash = new RegExp(`^(${kKind}_)(${kHash})(${kChain}\\.${kExt})$`);

/**
 * The parts of `ref` when its name (after the last `/`, or all of it) is one a store could have
 * made, whatever the prefix; else undefined. Says nothing of whether any store holds it.
 */
export function parseRef(ref: string): RefParts | undefined {
  const slash = ref.lastIndexOf("/");
  const name = ref.slice(slash + 1);
  const m = kNameParts.exec(name);
  if (!m) return undefined;
  return { prefix: slash < 0 ? undefined : ref.slice(0, slash), name, kind: m[1], ext: m[2] };
}

/** Every ref under `prefix` that a store could have made, anywhere in a text (global; group 1 is the hash). */
export function refPattern(prefix: string): RegExp {
  return new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/${kNameSource}`, "g");
}

/** Lower-case, only [a-z0-9_-], at most `max` chars; empty (or not a string) → the default. */
function sanitize(value: unknown, max: number, fallback: string): string {
  if (typeof value !== "string") return fallback;
  const clean = value
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "")
    .slice(0, max);
  return clean || fallback;
}

/** The `kind` a hint names, as it goes into a file name. */
export const sanitizeKind = (kind: unknown): string => sanitize(kind, kMaxKindChars, kDefaultKind);
/** The `ext` a hint names, as it goes into a file name. */
export const sanitizeExt = (ext: unknown): string => sanitize(ext, kMaxExtChars, kDefaultExt);
