import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ClaimTable } from "../../src/store/claim-table.js";
import { kNodeFsOps, type FsOps } from "../../src/store/fs-ops.js";
import { createRng, tempDirs, thrown } from "../helpers.js";

const tmp = tempDirs("ctxfold-claims-");
const name = (i: number) => `output_${i.toString(16).padStart(32, "0")}${i % 3 ? "" : "-1"}.txt`;

describe("ClaimTable", () => {
  it("keeps the first claim of each name through growth, with whose it is", () => {
    const t = new ClaimTable();
    const names = Array.from({ length: 5000 }, (_, i) => name(i));
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

  it("with its older claims in runs on disk, answers as the table that keeps them all in memory; the runs stay few and leave no file", () => {
    const dir = tmp.fresh();
    fs.mkdirSync(dir);
    const spilled = new ClaimTable({ fs: kNodeFsOps, dir, at: 50 });
    const whole = new ClaimTable();
    const rng = createRng(7);
    // Names claimed again and again (by other writers, for equal or other bytes): the first claim stays.
    for (let k = 0; k < 20_000; k++) {
      const n = name(rng.int(6000));
      const [offset, length, mine] = [k * 131 + 2 ** 33, 60 + (k % 70), rng.next() < 0.5];
      spilled.add(n, offset, length, mine);
      whole.add(n, offset, length, mine);
    }
    expect(spilled.size).toBe(whole.size);
    expect(spilled.size).toBeGreaterThan(5000);
    for (let i = 0; i < 6500; i++) expect(spilled.get(name(i)), name(i)).toEqual(whole.get(name(i)));
    // A binary counter of runs of 50: at most log2(size / 50) + 1 of them.
    expect(spilled.runs).toBeGreaterThan(0);
    expect(spilled.runs).toBeLessThanOrEqual(Math.floor(Math.log2(spilled.size / 50)) + 1);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("a merge of runs that fails leaves the runs as they were: no claim lost, no error, the next spill merges", () => {
    const dir = tmp.fresh();
    fs.mkdirSync(dir);
    let writes = 0;
    const ops: FsOps = {
      ...kNodeFsOps,
      writeSync: (fd, b, o, l, p) => {
        // The first spill's write, the second's, then the merge of the two: that one fails.
        if (++writes === 3) throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
        return kNodeFsOps.writeSync(fd, b, o, l, p);
      },
    };
    const t = new ClaimTable({ fs: ops, dir, at: 10 });
    for (let i = 0; i < 21; i++) t.add(name(i), i, 50, true);
    expect(writes).toBe(3);
    expect(t.runs).toBe(2);
    for (let i = 0; i < 40; i++) t.add(name(i), i, 50, true);
    expect(t.runs).toBeLessThanOrEqual(2);
    for (let i = 0; i < 40; i++) expect(t.get(name(i))).toEqual({ offset: i, length: 50, mine: true });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("a run that cannot be written is E_STORE_WRITE, and loses no claim: the next claim writes it", () => {
    const dir = tmp.fresh();
    fs.mkdirSync(dir);
    let full = false;
    const failing: FsOps = {
      ...kNodeFsOps,
      writeSync: (fd, b, o, l, p) => {
        if (full) throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
        return kNodeFsOps.writeSync(fd, b, o, l, p);
      },
    };
    const t = new ClaimTable({ fs: failing, dir, at: 20 });
    for (let i = 0; i < 20; i++) t.add(name(i), i, 50, true);
    full = true;
    const err = thrown(() => t.add(name(20), 20, 50, true), "E_STORE_WRITE");
    expect(err.message).toContain(dir);
    expect(err.message).toContain("ENOSPC");
    for (let i = 0; i < 20; i++) expect(t.get(name(i))).toEqual({ offset: i, length: 50, mine: true });
    expect(t.get(name(20))).toBeUndefined();
    full = false;
    t.add(name(20), 20, 50, false);
    expect(t.runs).toBe(1);
    for (let i = 0; i <= 20; i++) expect(t.get(name(i))).toEqual({ offset: i, length: 50, mine: i < 20 });
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
