import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareVersions, parseRange, parseVersion, satisfiesRange } from "../src/version-range.js";

const kPackage = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { peerDependencies: Record<string, string> };

describe("the peer range grammar", () => {
  it("reads every range of package.json's peerDependencies", () => {
    for (const [name, range] of Object.entries(kPackage.peerDependencies)) expect(parseRange(range), `${name}: ${range}`).toBeDefined();
  });

  it("reads ^X.Y.Z and >=X.Y.Z, a prerelease and build metadata included", () => {
    expect(parseRange("^1.32.2")).toEqual({
      floor: { major: 1, minor: 32, patch: 2, prerelease: [] },
      ceiling: { major: 2, minor: 0, patch: 0, prerelease: [0] },
    });
    expect(parseRange(">=6.0.0")).toEqual({ floor: { major: 6, minor: 0, patch: 0, prerelease: [] } });
    expect(parseRange(">=6.0.0-beta.3+sha.1")?.floor).toEqual({ major: 6, minor: 0, patch: 0, prerelease: ["beta", 3] });
  });

  it("refuses every other form rather than guess at it", () => {
    for (const range of [
      "~1.2.3",
      "1.2.3",
      "1.x",
      "*",
      "",
      "^1.2",
      ">=1",
      ">1.0.0",
      "<=2.0.0",
      "=1.0.0",
      ">= 1.0.0",
      "^v1.0.0",
      "1.0.0 - 2.0.0",
      "^1.0.0 || ^2.0.0",
      ">=1.0.0 <2.0.0",
      "latest",
      "workspace:*",
    ]) {
      expect(parseRange(range), range).toBeUndefined();
    }
  });
});

describe("versions", () => {
  it("reads SemVer 2.0.0 versions", () => {
    expect(parseVersion("6.0.325")).toEqual({ major: 6, minor: 0, patch: 325, prerelease: [] });
    expect(parseVersion("6.0.0-beta.3")).toEqual({ major: 6, minor: 0, patch: 0, prerelease: ["beta", 3] });
    expect(parseVersion("1.0.0-0A.is-legal+build.5")).toEqual({ major: 1, minor: 0, patch: 0, prerelease: ["0A", "is-legal"] });
  });

  it("refuses garbage", () => {
    for (const v of [
      "",
      "1",
      "1.2",
      "v1.2.3",
      "=1.2.3",
      "1.2.3.4",
      "01.2.3",
      "1.02.3",
      "1.2.3-",
      "1.2.3-beta..1",
      "1.2.3-01",
      "1.2.3+",
      "1.2.3 ",
      "latest",
      "x.y.z",
      "9007199254740993.0.0",
    ]) {
      expect(parseVersion(v), v).toBeUndefined();
    }
  });

  it("orders by SemVer precedence (the spec's own example chain)", () => {
    const chain = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.1",
      "1.1.0",
      "2.0.0",
    ];
    for (let i = 0; i + 1 < chain.length; i++) {
      const [a, b] = [parseVersion(chain[i]!)!, parseVersion(chain[i + 1]!)!];
      expect(compareVersions(a, b), `${chain[i]} < ${chain[i + 1]}`).toBe(-1);
      expect(compareVersions(b, a)).toBe(1);
    }
    expect(compareVersions(parseVersion("1.0.0+a")!, parseVersion("1.0.0+b")!)).toBe(0);
  });
});

describe("satisfiesRange", () => {
  it("^X.Y.Z: from X.Y.Z up to the next major", () => {
    expect(satisfiesRange("1.32.2", "^1.32.2")).toBe(true);
    expect(satisfiesRange("1.99.0", "^1.32.2")).toBe(true);
    expect(satisfiesRange("1.32.1", "^1.32.2")).toBe(false);
    expect(satisfiesRange("1.0.4", "^1.32.2")).toBe(false);
    expect(satisfiesRange("2.0.0", "^1.32.2")).toBe(false);
    expect(satisfiesRange("4.0.0", "^5.81.5")).toBe(false);
  });

  it("^0.Y.Z stays within 0.Y, ^0.0.Z is Z alone", () => {
    expect(satisfiesRange("0.3.9", "^0.3.1")).toBe(true);
    expect(satisfiesRange("0.4.0", "^0.3.1")).toBe(false);
    expect(satisfiesRange("0.0.3", "^0.0.3")).toBe(true);
    expect(satisfiesRange("0.0.4", "^0.0.3")).toBe(false);
  });

  it(">=X.Y.Z: X.Y.Z and everything after", () => {
    expect(satisfiesRange("6.0.0", ">=6.0.0")).toBe(true);
    expect(satisfiesRange("6.0.325", ">=6.0.0")).toBe(true);
    expect(satisfiesRange("12.0.0", ">=6.0.0")).toBe(true);
    expect(satisfiesRange("5.0.52", ">=6.0.0")).toBe(false);
    expect(satisfiesRange("4.3.16", ">=6.0.0")).toBe(false);
    expect(satisfiesRange("0.3.0", ">=1.0.0")).toBe(false);
  });

  it("prereleases: a floor's own prereleases precede it; later ones are in; the next major's are out of ^", () => {
    expect(satisfiesRange("6.0.0-beta.3", ">=6.0.0")).toBe(false);
    expect(satisfiesRange("6.0.0-beta.3", ">=6.0.0-beta.1")).toBe(true);
    expect(satisfiesRange("6.0.0-beta.3", ">=6.0.0-beta.11")).toBe(false);
    expect(satisfiesRange("7.0.0-beta.1", ">=6.0.0")).toBe(true);
    expect(satisfiesRange("1.32.2-rc.1", "^1.32.2")).toBe(false);
    expect(satisfiesRange("1.33.0-rc.1", "^1.32.2")).toBe(true);
    expect(satisfiesRange("2.0.0-0", "^1.32.2")).toBe(false);
    expect(satisfiesRange("2.0.0-alpha.1", "^1.32.2")).toBe(false);
    expect(satisfiesRange("1.0.0+build.7", ">=1.0.0")).toBe(true);
  });

  it("cannot tell (undefined) for a garbage version or a range of another form", () => {
    expect(satisfiesRange("latest", ">=6.0.0")).toBeUndefined();
    expect(satisfiesRange("6", ">=6.0.0")).toBeUndefined();
    expect(satisfiesRange("", "^1.0.0")).toBeUndefined();
    expect(satisfiesRange("6.0.0", "~6.0.0")).toBeUndefined();
    expect(satisfiesRange("6.0.0", "6.x")).toBeUndefined();
  });
});
