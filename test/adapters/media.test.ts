/** media.ts: media parts of another format, as the adapters that render them read them. */
import { describe, expect, it } from "vitest";
import { foreignSource, openaiMedia } from "../../src/adapters/media.js";
import { errorOf } from "./helpers.js";

describe("foreign media", () => {
  it("gives the OpenAI formats one of four forms", () => {
    expect(openaiMedia({ fileId: "f", mediaType: "application/pdf" })).toEqual({ kind: "file-id", fileId: "f", image: false });
    expect(openaiMedia({ base64: "AAA", mediaType: "audio/wav" })).toEqual({ kind: "audio", data: "AAA", format: "wav" });
    expect(openaiMedia({ url: "https://x/y.png" })).toEqual({ kind: "image", url: "https://x/y.png" });
    expect(openaiMedia({ base64: "AAA", mediaType: "application/pdf" })).toEqual({
      kind: "file",
      url: "data:application/pdf;base64,AAA",
      mediaType: "application/pdf",
    });
  });

  it("fails with E_UNKNOWN_PART naming the format and the place when the data holds no source", () => {
    const err = errorOf(() => foreignSource({ type: "media", data: { nothing: true } }, "anthropic", () => "messages[2].parts[0]"));
    expect(err.code).toBe("E_UNKNOWN_PART");
    expect(err.message).toBe("messages[2].parts[0]: a media part whose data holds no URL, base64 data or file id has no anthropic form");
    expect(err.path).toBe("messages[2].parts[0]");
  });
});
