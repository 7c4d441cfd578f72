import { describe, expect, it } from "vitest";
import { ClaimTable } from "../../src/store/claim-table.js";

describe("ClaimTable", () => {
  it("keeps the first claim of each name through growth, with whose it is", () => {
    const t = new ClaimTable();
    const names = Array.from({ length: 5000 }, (_, i) => `output_${i.toString(16).padStart(32, "0")}${i % 3 ? "" : "-1"}.txt`);
    names.forEach((n, i) => t.add(n, i * 100, 90 + (i % 7), i % 2 === 0));
    names.forEach((n, i) => t.add(n, 1e9 + i, 10, false)); // later claims of the same names: kept out
    expect(t.size).toBe(names.length);
    names.forEach((n, i) => expect(t.get(n)).toEqual({ offset: i * 100, length: 90 + (i % 7), mine: i % 2 === 0 }));
    expect(t.get("output_ffffffffffffffffffffffffffffffff.txt")).toBeUndefined();
    expect(t.get(names[0].replace(".txt", ".json"))).toBeUndefined();
  });

  it("an offset past 4 GB and the longest line it keeps come back whole", () => {
    const t = new ClaimTable();
    t.add("args_0123456789abcdef0123456789abcdef.json", 2 ** 40 + 3, 0x7fff, true);
    expect(t.get("args_0123456789abcdef0123456789abcdef.json")).toEqual({ offset: 2 ** 40 + 3, length: 0x7fff, mine: true });
  });
});
