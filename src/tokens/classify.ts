/**
 * Code-unit classes of the token estimator: the definition, and the scalar twin of the class
 * masks the kernel builds (scripts/gen-estimator.ts). Classes work on UTF-16 code units, so an
 * astral character (most emoji) is a high surrogate followed by a low surrogate, and a lone
 * surrogate is simply a unit of its class: every string has a defined estimate.
 */
export const kClassIds = {
  ST: 0, // start: positions before the text, never a real unit
  LO: 1, // a-z
  UP: 2, // A-Z
  DG: 3, // 0-9
  SP: 4, // ' '
  NL: 5, // \n \r
  CT: 6, // other C0 controls (tab among them), DEL
  PQ: 7, // quotes " ' `
  PB: 8, // brackets ( ) [ ] { } < >
  PO: 9, // every other printable ASCII unit
  LX: 10, // U+0080..U+036F Latin-1 supplement, Latin extended, IPA, combining marks
  // Other alphabets, in three ranges because the encodings merge them very differently
  // (cl100k_base spends about one token per UTF-8 byte on Indic scripts, o200k_base far fewer).
  CY: 11, // U+0370..U+052F Greek, Cyrillic
  RT: 12, // U+0530..U+07FF Armenian, Hebrew, Arabic, Syriac, Thaana, NKo
  BR: 13, // U+0800..U+1FFF Indic (Brahmic) scripts, Thai, Lao, Tibetan, Georgian, Ethiopic, ...
  HG: 14, // U+AC00..U+D7AF Hangul syllables
  CJ: 15, // U+2E80..U+9FFF, U+F900..U+FAFF, U+FF00..U+FFEF CJK, kana, fullwidth forms
  HS: 16, // U+D800..U+DBFF high surrogate
  LS: 17, // U+DC00..U+DFFF low surrogate
  SY: 18, // every other BMP unit (general punctuation, symbols, private use, ...)
} as const;
export type ClassName = keyof typeof kClassIds;

/** Unions of classes that features name. */
export const kClassGroups = {
  PU: ["PQ", "PB", "PO"],
  L: ["LO", "UP"],
  AL: ["CY", "RT", "BR"],
  W: ["LO", "UP", "LX", "CY", "RT", "BR"],
  /** Han, kana and Hangul: the scripts written without spaces between words. */
  CK: ["CJ", "HG"],
  NONASCII: ["LX", "CY", "RT", "BR", "HG", "CJ", "HS", "LS", "SY"],
} as const satisfies Record<string, readonly ClassName[]>;
export type GroupName = keyof typeof kClassGroups;

export const kQuoteChars = "\"'`";
export const kBracketChars = "()[]{}<>";

export function classifyUnit(u: number): number {
  if (u < 0x80) {
    if (u >= 97 && u <= 122) return 1;
    if (u >= 65 && u <= 90) return 2;
    if (u >= 48 && u <= 57) return 3;
    if (u === 32) return 4;
    if (u === 10 || u === 13) return 5;
    if (u < 32 || u === 127) return 6;
    if (u === 34 || u === 39 || u === 96) return 7;
    if (u === 40 || u === 41 || u === 91 || u === 93 || u === 123 || u === 125 || u === 60 || u === 62) return 8;
    return 9;
  }
  if (u < 0x370) return 10;
  if (u < 0x530) return 11;
  if (u < 0x800) return 12;
  if (u < 0x2000) return 13;
  if (u >= 0xac00 && u < 0xd7b0) return 14;
  if ((u >= 0x2e80 && u < 0xa000) || (u >= 0xf900 && u < 0xfb00) || (u >= 0xff00 && u < 0xfff0)) return 15;
  if (u >= 0xd800 && u < 0xdc00) return 16;
  if (u >= 0xdc00 && u < 0xe000) return 17;
  return 18;
}
