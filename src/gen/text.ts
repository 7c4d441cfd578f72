/**
 * Seeded generator of realistic-looking text of several kinds, for tests, benchmarks and the
 * token-estimator calibration (so the estimator is not fitted to one corpus only).
 *
 * Dependency-free and deterministic: the same seed gives the same text on every platform.
 */

/** A small seeded PRNG (mulberry32). */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
}

/** Creates a mulberry32 generator; any 32-bit seed. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number): number => Math.floor(next() * n) };
}

export type TextKind = "prose" | "code" | "json" | "logs" | "cjk" | "emoji" | "intl";

export const TEXT_KINDS: readonly TextKind[] = ["prose", "code", "json", "logs", "cjk", "emoji", "intl"];

/** Generates about `approxChars` UTF-16 code units of text of the given kind. */
export function syntheticText(kind: TextKind, approxChars: number, rng: Rng): string {
  const g = new Gen(rng, rng.int(0x10000));
  const parts: string[] = [];
  let len = 0;
  while (len < approxChars) {
    const piece = CHUNKS[kind](g);
    parts.push(piece);
    len += piece.length;
  }
  return parts.join("");
}

class Gen {
  /** A per-document style choice (language, indentation), so one text stays consistent. */
  constructor(
    readonly rng: Rng,
    readonly style: number,
  ) {}
  int(n: number): number {
    return this.rng.int(n);
  }
  range(lo: number, hi: number): number {
    return lo + this.rng.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.rng.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.rng.int(xs.length)] as T;
  }
  digits(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += String(this.int(10));
    return s;
  }
  hex(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef".charAt(this.int(16));
    return s;
  }
  join(n: number, f: () => string, sep: string): string {
    const xs: string[] = [];
    for (let i = 0; i < n; i++) xs.push(f());
    return xs.join(sep);
  }
  number(): string {
    switch (this.int(5)) {
      case 0:
        return String(this.int(10));
      case 1:
        return String(this.int(1000));
      case 2:
        return String(this.int(1e6));
      case 3:
        return (this.rng.next() * 1000).toFixed(this.range(1, 4));
      default:
        return String(this.range(1990, 2030));
    }
  }
  timestamp(): string {
    const p = (n: number): string => String(n).padStart(2, "0");
    return `${this.range(2019, 2026)}-${p(this.range(1, 12))}-${p(this.range(1, 28))}T${p(this.int(24))}:${p(this.int(60))}:${p(this.int(60))}.${this.digits(3)}Z`;
  }
  word(): string {
    return this.chance(0.8) ? this.pick(COMMON) : this.pick(LONGER);
  }
  ident(): string {
    const n = this.range(1, 3);
    const ws: string[] = [];
    for (let i = 0; i < n; i++) ws.push(this.pick(IDENT_PARTS));
    const r = this.int(10);
    if (r < 4) return ws.join("_");
    if (r < 7) return ws.map((w, i) => (i === 0 ? w : cap(w))).join("");
    if (r < 9) return ws.map(cap).join("");
    return ws.join("_").toUpperCase();
  }
  path(): string {
    const ext = this.pick([".py", ".ts", ".js", ".rs", ".go", ".json", ".md", ".txt", ".yaml", ".c", ".h"]);
    const root = this.pick(["/usr/lib/python3.11", "src", "/home/user/project", "tests", "lib", "/var/log", "./pkg", "django/db/models"]);
    return `${root}/${this.join(this.range(0, 3), () => this.pick(IDENT_PARTS), "/")}/${this.pick(IDENT_PARTS)}${ext}`.replace("//", "/");
  }
  sentence(): string {
    const n = this.range(4, 22);
    const ws: string[] = [];
    for (let i = 0; i < n; i++) {
      let w = this.word();
      if (this.chance(0.03)) w = this.number();
      else if (this.chance(0.02)) w = `"${w}"`;
      // biome-ignore lint/suspicious/noDuplicateElseIf: each chance() call draws anew
      else if (this.chance(0.02)) w = `\`${this.ident()}\``;
      if (i < n - 1 && this.chance(0.08)) w += this.pick([",", ",", ";", ":", " -"]);
      ws.push(w);
    }
    if (this.chance(0.06)) ws.splice(this.int(ws.length), 0, this.pick(CONTRACTIONS));
    if (this.chance(0.05)) ws.push(`(${this.pick(LONGER)} ${this.pick(COMMON)})`);
    return cap(ws.join(" ")) + this.pick([".", ".", ".", ".", "?", "!", "...", ":"]);
  }
}

function cap(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

const COMMON = [
  "the",
  "of",
  "and",
  "to",
  "a",
  "in",
  "is",
  "it",
  "you",
  "that",
  "he",
  "was",
  "for",
  "on",
  "are",
  "with",
  "as",
  "I",
  "his",
  "they",
  "be",
  "at",
  "one",
  "have",
  "this",
  "from",
  "or",
  "had",
  "by",
  "not",
  "but",
  "what",
  "all",
  "were",
  "we",
  "when",
  "your",
  "can",
  "said",
  "there",
  "use",
  "an",
  "each",
  "which",
  "she",
  "do",
  "how",
  "their",
  "if",
  "will",
  "up",
  "other",
  "about",
  "out",
  "many",
  "then",
  "them",
  "these",
  "so",
  "some",
  "her",
  "would",
  "make",
  "like",
  "him",
  "into",
  "time",
  "has",
  "look",
  "two",
  "more",
  "write",
  "go",
  "see",
  "number",
  "no",
  "way",
  "could",
  "people",
  "my",
  "than",
  "first",
  "water",
  "been",
  "call",
  "who",
  "now",
  "find",
  "long",
  "down",
  "day",
  "did",
  "get",
  "come",
  "made",
  "may",
  "part",
  "file",
  "test",
  "flight",
  "booking",
  "user",
  "need",
  "should",
  "change",
  "check",
  "run",
  "fix",
  "issue",
  "value",
  "return",
  "error",
  "because",
  "before",
  "after",
  "again",
  "still",
  "also",
  "just",
  "only",
  "very",
  "well",
  "here",
  "where",
  "why",
  "thing",
  "great",
  "help",
  "through",
  "much",
  "right",
  "old",
  "new",
  "same",
  "tell",
  "small",
  "large",
  "want",
  "any",
  "work",
  "know",
  "place",
  "year",
  "live",
  "back",
  "give",
  "most",
  "good",
  "name",
  "very",
  "through",
  "sentence",
  "think",
  "say",
  "line",
  "mean",
  "follow",
  "came",
  "show",
  "around",
  "form",
  "three",
  "set",
  "put",
  "end",
  "does",
  "another",
  "must",
  "big",
  "even",
  "such",
  "because",
  "turn",
  "ask",
  "went",
  "men",
  "read",
  "land",
  "different",
  "home",
  "us",
  "move",
  "try",
  "kind",
  "hand",
  "picture",
  "function",
  "code",
  "method",
  "class",
  "module",
  "output",
  "input",
  "result",
  "expected",
  "actual",
  "passed",
  "failed",
];
const LONGER = [
  "implementation",
  "reservation",
  "configuration",
  "understanding",
  "particularly",
  "unfortunately",
  "authentication",
  "compatibility",
  "documentation",
  "approximately",
  "significantly",
  "responsibility",
  "environment",
  "performance",
  "requirements",
  "information",
  "development",
  "successfully",
  "previously",
  "cancellation",
  "passenger",
  "itinerary",
  "refund",
  "membership",
  "baggage",
  "economy",
  "certificate",
  "algorithm",
  "repository",
  "dependency",
  "serialization",
  "asynchronous",
  "deprecated",
  "regression",
  "behaviour",
  "straightforward",
  "nevertheless",
  "consequently",
  "circumstances",
  "independently",
  "investigate",
  "reproduce",
  "traceback",
  "migration",
  "middleware",
  "interpolation",
  "tokenizer",
  "overwhelming",
  "photosynthesis",
  "kaleidoscope",
  "quintessential",
  "juxtaposition",
  "idiosyncratic",
];
const CONTRACTIONS = ["don't", "it's", "we're", "can't", "I'll", "they've", "won't", "that's", "you'd"];
const IDENT_PARTS = [
  "get",
  "set",
  "user",
  "id",
  "name",
  "value",
  "data",
  "config",
  "request",
  "response",
  "handler",
  "parse",
  "token",
  "count",
  "index",
  "buffer",
  "len",
  "item",
  "list",
  "map",
  "key",
  "node",
  "tree",
  "query",
  "model",
  "field",
  "path",
  "file",
  "read",
  "write",
  "init",
  "state",
  "context",
  "manager",
  "factory",
  "cache",
  "tmp",
  "result",
  "error",
  "options",
  "args",
  "kwargs",
  "self",
  "ptr",
  "offset",
  "schema",
  "validate",
  "session",
  "http",
  "json",
  "xml",
  "url",
  "db",
  "sql",
  "api",
  "max",
  "min",
  "num",
  "str",
  "obj",
  "fn",
  "cb",
  "x",
  "y",
];

function prose(g: Gen): string {
  const r = g.int(10);
  if (r === 0) return `\n\n${g.pick(["#", "##", "###"])} ${cap(g.word())} ${g.word()}\n\n`;
  if (r === 1) return `\n${g.join(g.range(2, 5), () => `${g.pick(["-", "*", "1."])} ${g.sentence()}`, "\n")}\n`;
  const s = g.join(g.range(1, 6), () => g.sentence(), " ");
  return s + (g.chance(0.3) ? "\n\n" : " ");
}

function code(g: Gen): string {
  const ind = ["  ", "    ", "\t", "    "][g.style % 4] as string;
  const r = g.int(6);
  const lit = (): string => (g.chance(0.5) ? g.number() : `'${g.join(g.range(1, 4), () => g.word(), " ")}'`);
  const stmt = (d: number): string => {
    const pad = ind.repeat(d);
    switch (g.int(7)) {
      case 0:
        return `${pad}${g.ident()} = ${g.ident()}(${g.join(g.range(0, 3), () => g.ident(), ", ")})`;
      case 1:
        return `${pad}if ${g.ident()} ${g.pick(["==", "!=", ">=", "<", "is", "in"])} ${lit()}:`;
      case 2:
        return `${pad}return ${g.ident()}.${g.ident()}[${g.int(10)}]`;
      case 3:
        return `${pad}# ${g.sentence()}`;
      case 4:
        return `${pad}const ${g.ident()}: ${g.pick(["number", "string", "Map<string, number>", "boolean[]"])} = ${lit()};`;
      case 5:
        return `${pad}self.${g.ident()}.append((${g.ident()}, ${lit()}))`;
      default:
        return `${pad}${g.ident()}(${g.ident()}=${lit()}, ${g.ident()}=${g.pick(["None", "True", "null", "[]", "{}"])});`;
    }
  };
  if (r === 0)
    return `\nimport ${g.ident()} from '${g.pick(["./", "../", "node:", "@scope/"])}${g.ident()}.js';\nfrom ${g.ident()}.${g.ident()} import ${g.ident()}, ${g.ident()}\n`;
  if (r === 1) {
    const body = g.join(g.range(2, 8), () => stmt(g.range(1, 3)), "\n");
    return `\ndef ${g.ident()}(self, ${g.ident()}, ${g.ident()}=None):\n${ind}"""${g.sentence()}"""\n${body}\n`;
  }
  if (r === 2) {
    const body = g.join(g.range(2, 6), () => stmt(g.range(1, 2)), "\n");
    return `\nexport function ${g.ident()}(${g.ident()}: ${g.pick(["string", "number", "Uint8Array"])}): void {\n${body}\n}\n`;
  }
  if (r === 3) {
    const n = g.range(1, 300);
    return `\n@@ -${n},${g.range(3, 9)} +${n},${g.range(3, 9)} @@\n${g.join(g.range(3, 8), () => g.pick(["-", "+", " "]) + stmt(g.range(0, 2)), "\n")}\n`;
  }
  if (r === 4) return `\n${g.join(g.range(2, 6), () => `${g.range(1, 999)}\t${stmt(g.range(0, 3))}`, "\n")}\n`;
  return g.join(g.range(2, 6), () => stmt(g.range(0, 3)), "\n") + "\n";
}

function jsonValue(g: Gen, depth: number): unknown {
  const r = g.int(depth > 2 ? 6 : 9);
  switch (r) {
    case 0:
      return g.int(100000);
    case 1:
      return Math.round(g.rng.next() * 1e5) / 100;
    case 2:
      return g.chance(0.5);
    case 3:
      return null;
    case 4:
      return g.pick([g.timestamp(), g.hex(g.pick([8, 12, 24, 32])), g.path(), `${g.pick(["HAT", "ABC", "ZX"])}${g.digits(3)}`]);
    case 5:
      return g.join(g.range(1, 8), () => g.word(), " ");
    case 6:
    case 7: {
      const o: Record<string, unknown> = {};
      for (let i = g.range(1, 6); i > 0; i--) o[g.chance(0.7) ? g.ident().toLowerCase() : g.word()] = jsonValue(g, depth + 1);
      return o;
    }
    default: {
      const xs: unknown[] = [];
      for (let i = g.range(0, 5); i > 0; i--) xs.push(jsonValue(g, depth + 1));
      return xs;
    }
  }
}

function json(g: Gen): string {
  const o: Record<string, unknown> = {};
  for (let i = g.range(2, 6); i > 0; i--) o[g.ident().toLowerCase()] = jsonValue(g, 1);
  const s = JSON.stringify(o, null, g.pick([0, 0, 2, 4]));
  return s + "\n";
}

function logs(g: Gen): string {
  const r = g.int(8);
  const lvl = g.pick(["INFO", "DEBUG", "WARN", "ERROR", "info", "warning"]);
  if (r === 0) {
    const frames = g.join(g.range(2, 6), () => `  File "${g.path()}", line ${g.range(1, 2000)}, in ${g.ident()}\n    ${g.ident()}(${g.ident()})`, "\n");
    return `Traceback (most recent call last):\n${frames}\n${g.pick(["ValueError", "KeyError", "TypeError", "AssertionError"])}: ${g.sentence()}\n`;
  }
  if (r === 1) return g.join(g.range(2, 5), () => `    at ${g.ident()}.${g.ident()} (${g.path()}:${g.range(1, 900)}:${g.range(1, 80)})`, "\n") + "\n";
  if (r === 2)
    return `${g.path().replace(/\.\w+$/, ".py")}::${g.ident()}::test_${g.ident().toLowerCase()} ${g.pick(["PASSED", "FAILED", "SKIPPED", "ERROR"])} [${g.range(1, 100)}%]\n`;
  if (r === 3)
    return `${g.pick(["-rw-r--r--", "drwxr-xr-x", "-rwxr-xr-x"])} ${g.range(1, 9)} root root ${String(g.int(99999)).padStart(6)} ${g.pick(["Jan", "Mar", "Nov"])} ${String(g.range(1, 28)).padStart(2)} ${g.range(10, 23)}:${g.range(10, 59)} ${g.ident().toLowerCase()}${g.pick([".py", "", ".log", ".json"])}\n`;
  if (r === 4)
    return `${g.range(10, 250)}.${g.int(256)}.${g.int(256)}.${g.int(256)} - - [${g.range(1, 28)}/Nov/2025:${g.range(10, 23)}:${g.range(10, 59)}:${g.range(10, 59)} +0000] "${g.pick(["GET", "POST"])} /${g.ident().toLowerCase()}/${g.int(10000)}?q=${g.hex(6)} HTTP/1.1" ${g.pick([200, 201, 304, 404, 500])} ${g.int(50000)}\n`;
  if (r === 5) return `commit ${g.hex(40)}\nAuthor: ${cap(g.pick(IDENT_PARTS))} <${g.pick(IDENT_PARTS)}@example.com>\n\n    ${g.sentence()}\n`;
  return `${g.timestamp()} ${lvl.padEnd(5)} [${g.ident()}] ${g.sentence()} id=${g.hex(g.pick([8, 16, 32]))} took ${g.number()}ms\n`;
}

const ZH = [
  "我们",
  "今天",
  "系统",
  "用户",
  "数据",
  "问题",
  "已经",
  "可以",
  "需要",
  "这个",
  "一个",
  "没有",
  "因为",
  "所以",
  "但是",
  "如果",
  "时间",
  "工作",
  "公司",
  "服务",
  "航班",
  "预订",
  "取消",
  "退款",
  "文件",
  "代码",
  "测试",
  "错误",
  "修复",
  "运行",
  "模型",
  "分析",
  "结果",
  "发现",
  "非常",
  "重要",
  "环境",
  "配置",
  "更新",
  "版本",
  "中国",
  "北京",
  "上海",
  "学习",
  "研究",
  "发展",
  "经济",
  "社会",
  "技术",
  "进行",
  "通过",
  "关于",
  "之后",
  "的",
  "了",
  "是",
  "在",
  "和",
  "有",
  "也",
  "就",
  "都",
  "而",
  "及",
  "与",
  "着",
  "或",
  "一些",
  "很多",
  "完成",
  "检查",
  "信息",
  "请",
];
const JA = [
  "これは",
  "テスト",
  "です",
  "ます",
  "ファイル",
  "を",
  "に",
  "が",
  "は",
  "の",
  "で",
  "と",
  "から",
  "まで",
  "確認",
  "してください",
  "しました",
  "予約",
  "キャンセル",
  "システム",
  "エラー",
  "修正",
  "実行",
  "東京",
  "今日",
  "日本語",
  "ユーザー",
  "データ",
  "問題",
  "ありがとうございます",
  "について",
  "設定",
  "更新",
  "必要",
  "もう一度",
  "大丈夫",
  "お願いします",
  "思います",
  "新しい",
  "古い",
  "時間",
  "場合",
  "ことができます",
  "サーバー",
];
const KO = [
  "안녕하세요",
  "우리는",
  "오늘",
  "시스템",
  "사용자",
  "데이터",
  "문제가",
  "있습니다",
  "없습니다",
  "파일을",
  "확인해",
  "주세요",
  "예약",
  "취소",
  "환불",
  "오류",
  "수정",
  "실행",
  "서울",
  "한국어",
  "테스트",
  "결과를",
  "분석했습니다",
  "필요합니다",
  "그리고",
  "하지만",
  "때문에",
  "정말",
  "감사합니다",
  "설정",
  "업데이트",
  "버전",
];

function cjk(g: Gen): string {
  const lang = g.chance(0.9) ? g.style % 3 : g.int(3);
  const [words, sep, stops]: [readonly string[], string, readonly string[]] =
    lang === 0 ? [ZH, "", ["。", "，", "！", "？", "；"]] : lang === 1 ? [JA, "", ["。", "、", "！", "？"]] : [KO, " ", [".", ",", "?"]];
  const n = g.range(4, 18);
  const ws: string[] = [];
  for (let i = 0; i < n; i++) {
    if (g.chance(0.05)) ws.push(g.chance(0.5) ? g.number() : g.pick(["API", "JSON", "Python", "OK", "GPU", "v2"]));
    else ws.push(g.pick(words));
    if (i < n - 1 && g.chance(0.1)) ws[ws.length - 1] += g.pick(stops);
  }
  const s = ws.join(sep) + g.pick(stops) + sep;
  return g.chance(0.15) ? `${s}\n` : g.chance(0.1) ? `「${s}」` : s;
}

const EMOJI = [
  "😀",
  "😂",
  "🥲",
  "😍",
  "🤔",
  "🙏",
  "👍",
  "👎",
  "🔥",
  "✨",
  "🎉",
  "🚀",
  "✅",
  "❌",
  "⚠️",
  "❤️",
  "💡",
  "📦",
  "🐛",
  "🛠️",
  "📈",
  "🍕",
  "🌍",
  "☕",
  "⭐",
  "👀",
  "💯",
  "🤖",
  "🧪",
  "📝",
  "🔒",
  "⏱️",
  "🙈",
  "🥳",
  "😅",
  "💥",
];
const ZWJ = ["👨‍👩‍👧‍👦", "👩‍💻", "🧑‍🚀", "👨‍🍳", "🏳️‍🌈", "❤️‍🔥", "🧑‍🤝‍🧑", "👁️‍🗨️"];
const TONE = ["\u{1F3FB}", "\u{1F3FC}", "\u{1F3FD}", "\u{1F3FE}", "\u{1F3FF}"];
const TONED = ["👋", "👍", "🙌", "👏", "💪", "🤞", "✌️", "👩", "🧑"];
const FLAGS = ["🇺🇸", "🇫🇷", "🇯🇵", "🇩🇪", "🇧🇷", "🇮🇳", "🇬🇧"];

function emojiOne(g: Gen): string {
  const r = g.int(10);
  if (r < 5) return g.pick(EMOJI);
  if (r < 7) return g.pick(TONED).replace("\uFE0F", "") + g.pick(TONE);
  if (r < 9) return g.pick(ZWJ);
  return g.pick(FLAGS);
}

function emoji(g: Gen): string {
  const r = g.int(4);
  if (r === 0) return g.join(g.range(1, 6), () => emojiOne(g), g.chance(0.5) ? "" : " ") + " ";
  if (r === 1) return `${emojiOne(g)} ${g.sentence()} `;
  if (r === 2) return `${g.sentence().slice(0, -1)} ${emojiOne(g)}${emojiOne(g)}\n`;
  return `- ${emojiOne(g)} **${cap(g.word())}**: ${g.join(g.range(2, 8), () => g.word(), " ")}\n`;
}

const FR = [
  "le",
  "la",
  "les",
  "été",
  "très",
  "où",
  "déjà",
  "première",
  "réservation",
  "à",
  "français",
  "élève",
  "garçon",
  "ça",
  "naïf",
  "château",
  "forêt",
  "hôpital",
  "être",
  "problème",
  "système",
  "données",
  "après",
  "voilà",
];
const DE = [
  "über",
  "Größe",
  "schön",
  "Mädchen",
  "Straße",
  "für",
  "Übersetzung",
  "Käse",
  "müssen",
  "Fehler",
  "Datei",
  "ändern",
  "Prüfung",
  "Bär",
  "zurück",
  "Schlüssel",
  "und",
  "der",
  "die",
  "nicht",
];
const ES = [
  "niño",
  "año",
  "mañana",
  "corazón",
  "información",
  "también",
  "está",
  "está",
  "aquí",
  "señor",
  "pingüino",
  "acción",
  "qué",
  "cómo",
  "el",
  "de",
  "que",
  "español",
];
const PL = ["źródło", "łódź", "żółw", "gęś", "być", "się", "cześć", "dziękuję", "wiadomość", "błąd"];
const RU = [
  "привет",
  "как",
  "дела",
  "система",
  "пользователь",
  "данные",
  "ошибка",
  "файл",
  "проверить",
  "бронирование",
  "отмена",
  "сегодня",
  "это",
  "не",
  "и",
  "в",
  "на",
  "что",
  "Москва",
  "программа",
  "исправить",
  "результат",
];
const AR = [
  "مرحبا",
  "كيف",
  "حالك",
  "النظام",
  "المستخدم",
  "البيانات",
  "خطأ",
  "ملف",
  "الحجز",
  "إلغاء",
  "اليوم",
  "في",
  "من",
  "على",
  "شكرا",
  "القاهرة",
  "اللغة",
  "العربية",
];
const EL = ["Καλημέρα", "σύστημα", "χρήστης", "δεδομένα", "σφάλμα", "και", "το", "η", "Αθήνα", "ευχαριστώ"];
const HI = ["नमस्ते", "सिस्टम", "उपयोगकर्ता", "डेटा", "त्रुटि", "फ़ाइल", "आज", "और", "है", "में", "की", "को", "बुकिंग", "रद्द", "धन्यवाद", "दिल्ली", "जांच", "करें"];
const VI = ["Xin", "chào", "Việt", "Nam", "người", "dùng", "dữ", "liệu", "lỗi", "tệp", "được", "không", "những"];

function intl(g: Gen): string {
  const langs = [FR, DE, ES, PL, RU, RU, AR, AR, EL, VI, HI];
  const words = g.chance(0.85) ? (langs[g.style % langs.length] as readonly string[]) : g.pick(langs);
  const n = g.range(4, 16);
  const ws: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = g.chance(0.08) ? g.number() : g.pick(words);
    if (i === 0) w = cap(w);
    if (i < n - 1 && g.chance(0.08)) w += ",";
    ws.push(w);
  }
  const end = words === AR ? g.pick([".", "؟", "،"]) : words === HI ? g.pick(["।", "?", "."]) : g.pick([".", ".", "?", "!"]);
  return ws.join(" ") + end + (g.chance(0.2) ? "\n" : " ");
}

const CHUNKS: Record<TextKind, (g: Gen) => string> = { prose, code, json, logs, cjk, emoji, intl };
