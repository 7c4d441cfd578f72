/**
 * Reference XXH64 in plain TypeScript (BigInt arithmetic), the twin of assembly/hash.ts. It is
 * the fallback where WebAssembly is unavailable and the oracle of the differential tests, so it
 * is written for clarity, not speed.
 */
const M = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;

const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & M;
const round = (acc: bigint, input: bigint) => (rotl((acc + input * P2) & M, 31n) * P1) & M;
const mergeRound = (acc: bigint, val: bigint) => ((acc ^ round(0n, val)) * P1 + P4) & M;

export function xxh64Reference(bytes: Uint8Array, seed: bigint = 0n): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = bytes.length;
  seed &= M;
  let p = 0;
  let h: bigint;
  if (len >= 32) {
    let v1 = (seed + P1 + P2) & M;
    let v2 = (seed + P2) & M;
    let v3 = seed;
    let v4 = (seed - P1) & M;
    while (p <= len - 32) {
      v1 = round(v1, view.getBigUint64(p, true));
      v2 = round(v2, view.getBigUint64(p + 8, true));
      v3 = round(v3, view.getBigUint64(p + 16, true));
      v4 = round(v4, view.getBigUint64(p + 24, true));
      p += 32;
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M;
    h = mergeRound(h, v1);
    h = mergeRound(h, v2);
    h = mergeRound(h, v3);
    h = mergeRound(h, v4);
  } else {
    h = (seed + P5) & M;
  }
  h = (h + BigInt(len)) & M;
  while (p + 8 <= len) {
    h ^= round(0n, view.getBigUint64(p, true));
    h = (rotl(h, 27n) * P1 + P4) & M;
    p += 8;
  }
  if (p + 4 <= len) {
    h ^= (BigInt(view.getUint32(p, true)) * P1) & M;
    h = (rotl(h, 23n) * P2 + P3) & M;
    p += 4;
  }
  while (p < len) {
    h ^= (BigInt(bytes[p]) * P5) & M;
    h = (rotl(h, 11n) * P1) & M;
    p++;
  }
  h ^= h >> 33n;
  h = (h * P2) & M;
  h ^= h >> 29n;
  h = (h * P3) & M;
  h ^= h >> 32n;
  return h;
}

/** Seed tweak of the UTF-16 view (assembly/hash.ts UTF16_DOMAIN). */
export const kUtf16Domain = 0x9e3779b97f4a7c15n;

/** Every code unit of `s` is <= 0xFF (ASCII or Latin-1). */
function isLatin1(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return false;
  return true;
}

/**
 * The bytes ctxfold hashes a string by, and the seed tweak that goes with them (the definition;
 * assembly/hash.ts computes the same without building them): one byte per code unit when
 * every unit is <= 0xFF (for ASCII: its UTF-8 bytes); otherwise the grouped view under
 * `seed ^ kUtf16Domain`: blocks of 32 units in groups of 256 blocks, each group its blocks,
 * each as one byte per unit or, when it holds a unit above 0xFF, as UTF-16LE (lone surrogates
 * kept), then a 32-byte bitmap of its wide blocks; last, the unit count as a u64 LE.
 */
export function stringHashView(s: string): { bytes: Uint8Array; domain: bigint } {
  if (isLatin1(s)) return { bytes: Buffer.from(s, "latin1"), domain: 0n };
  const out: number[] = [];
  const blocks = Math.ceil(s.length / 32);
  for (let g0 = 0; g0 < blocks; g0 += 256) {
    const bitmap = new Array<number>(32).fill(0);
    for (let b = g0; b < Math.min(blocks, g0 + 256); b++) {
      const block = s.slice(b * 32, b * 32 + 32);
      const wide = !isLatin1(block);
      if (wide) bitmap[(b - g0) >> 3] |= 1 << ((b - g0) & 7);
      out.push(...(wide ? Buffer.from(block, "utf16le") : Buffer.from(block, "latin1")));
    }
    out.push(...bitmap);
  }
  const count = Buffer.alloc(8);
  count.writeBigUInt64LE(BigInt(s.length));
  out.push(...count);
  return { bytes: Uint8Array.from(out), domain: kUtf16Domain };
}

export function hashStringReference(s: string, seed: bigint = 0n): bigint {
  const { bytes, domain } = stringHashView(s);
  return xxh64Reference(bytes, seed ^ domain);
}
