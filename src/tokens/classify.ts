/**
 * Code-unit classes of the token estimator: the definition, and the scalar twin of
 * assembly/classify.ts. Classes work on UTF-16 code units, so an astral character (most emoji)
 * is a high surrogate followed by a low surrogate, and a lone surrogate is simply a unit of its
 * class: every string has a defined estimate.
 */
export const kClassIds = {
  ST: 0, // start: before the text (and padding), never a real unit
  LO: 1, // a-z
  UP: 2, // A-Z
  DG: 3, // 0-9
  SP: 4, // ' '
  NL: 5, // \n \r
  CT: 6, // other C0 controls, DEL
  PU: 7, // other printable ASCII
  LX: 8, // U+0080..U+036F Latin-1, Latin extended, IPA, combining marks
  AL: 9, // U+0370..U+1FFF Greek, Cyrillic, Hebrew, Arabic, Indic, ...
  CJ: 10, // U+2E80..U+9FFF, U+AC00..U+D7AF, U+F900..U+FAFF, U+FF00..U+FFEF
  HS: 11, // U+D800..U+DBFF high surrogate
  LS: 12, // U+DC00..U+DFFF low surrogate
  SY: 13, // every other BMP unit
} as const;
export type ClassName = keyof typeof kClassIds;

export function classifyUnit(u: number): number {
  if (u < 0x80) {
    if (u >= 97 && u <= 122) return 1;
    if (u >= 65 && u <= 90) return 2;
    if (u >= 48 && u <= 57) return 3;
    if (u === 32) return 4;
    if (u === 10 || u === 13) return 5;
    if (u < 32 || u === 127) return 6;
    return 7;
  }
  if (u < 0x370) return 8;
  if (u < 0x2000) return 9;
  if ((u >= 0x2e80 && u < 0xa000) || (u >= 0xac00 && u < 0xd7b0) || (u >= 0xf900 && u < 0xfb00) || (u >= 0xff00 && u < 0xfff0)) return 10;
  if (u >= 0xd800 && u < 0xdc00) return 11;
  if (u >= 0xdc00 && u < 0xe000) return 12;
  return 13;
}
