// Code-unit classes of the token estimator (src/tokens/classify.ts is the scalar twin and the
// definition). Class 0 is "start": before the text and in padding, never a real unit.
export const ST: u8 = 0;
export const LO: u8 = 1; // a-z
export const UP: u8 = 2; // A-Z
export const DG: u8 = 3; // 0-9
export const SP: u8 = 4; // ' '
export const NL: u8 = 5; // \n \r
export const CT: u8 = 6; // other C0 controls, DEL
export const PU: u8 = 7; // other printable ASCII
export const LX: u8 = 8; // U+0080..U+036F Latin-1, Latin extended, IPA, combining marks
export const AL: u8 = 9; // U+0370..U+1FFF Greek, Cyrillic, Hebrew, Arabic, Indic, ...
export const CJ: u8 = 10; // CJK, kana, hangul, fullwidth forms
export const HS: u8 = 11; // high surrogate
export const LS: u8 = 12; // low surrogate
export const SY: u8 = 13; // every other BMP unit (symbols, punctuation, private use)

/** 16 code units at p narrowed to bytes (saturating: non-ASCII never equals printable ASCII). */
// @ts-ignore: decorator
@inline export function loadBytes(p: usize): v128 {
  return i8x16.narrow_i16x8_u(v128.load(p), v128.load(p, 16));
}

// @ts-ignore: decorator
@inline function inRange8(v: v128, lo: i32, count: i32): v128 {
  return i8x16.lt_u(i8x16.sub(v, i8x16.splat(<i8>lo)), i8x16.splat(<i8>count));
}

// @ts-ignore: decorator
@inline function inRange16(v: v128, lo: i32, count: i32): v128 {
  return i16x8.lt_u(i16x8.sub(v, i16x8.splat(<i16>lo)), i16x8.splat(<i16>count));
}

/** Classes of 8 wide (>= 0x80) units as i16 lanes; lanes of ASCII units are meaningless. */
function classifyWide(u: v128): v128 {
  let c = i16x8.splat(SY);
  c = v128.bitselect(i16x8.splat(LX), c, inRange16(u, 0x80, 0x370 - 0x80));
  c = v128.bitselect(i16x8.splat(AL), c, inRange16(u, 0x370, 0x2000 - 0x370));
  const cjk = v128.or(
    v128.or(inRange16(u, 0x2e80, 0xa000 - 0x2e80), inRange16(u, 0xac00, 0xd7b0 - 0xac00)),
    v128.or(inRange16(u, 0xf900, 0xfb00 - 0xf900), inRange16(u, 0xff00, 0xfff0 - 0xff00)),
  );
  c = v128.bitselect(i16x8.splat(CJ), c, cjk);
  c = v128.bitselect(i16x8.splat(HS), c, inRange16(u, 0xd800, 0x400));
  c = v128.bitselect(i16x8.splat(LS), c, inRange16(u, 0xdc00, 0x400));
  return c;
}

/** Classes of the 16 code units at p (bytes = loadBytes(p)), one byte per lane. */
// @ts-ignore: decorator
@inline export function classifyBlock(p: usize, bytes: v128): v128 {
  let c = i8x16.splat(PU);
  const nl = v128.or(i8x16.eq(bytes, i8x16.splat(10)), i8x16.eq(bytes, i8x16.splat(13)));
  const ct = v128.or(i8x16.lt_u(bytes, i8x16.splat(32)), i8x16.eq(bytes, i8x16.splat(127)));
  c = v128.bitselect(i8x16.splat(CT), c, ct);
  c = v128.bitselect(i8x16.splat(NL), c, nl);
  c = v128.bitselect(i8x16.splat(SP), c, i8x16.eq(bytes, i8x16.splat(32)));
  c = v128.bitselect(i8x16.splat(DG), c, inRange8(bytes, 48, 10));
  c = v128.bitselect(i8x16.splat(UP), c, inRange8(bytes, 65, 26));
  c = v128.bitselect(i8x16.splat(LO), c, inRange8(bytes, 97, 26));
  const lo = v128.load(p);
  const hi = v128.load(p, 16);
  const wideMask16 = i16x8.splat(<i16>0xff80);
  if (v128.any_true(v128.and(v128.or(lo, hi), wideMask16))) {
    const wide = i8x16.narrow_i16x8_s(
      i16x8.ne(v128.and(lo, wideMask16), i16x8.splat(0)),
      i16x8.ne(v128.and(hi, wideMask16), i16x8.splat(0)),
    );
    const wc = i8x16.narrow_i16x8_u(classifyWide(lo), classifyWide(hi));
    c = v128.bitselect(wc, c, wide);
  }
  return c;
}
