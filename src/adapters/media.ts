/**
 * Media parts across formats: reading a MediaPart that any adapter made (URL, data URL, base64,
 * file id) so another format can render it, the form the OpenAI formats give such a part, and
 * the MIME / format names the wire formats use.
 */
import type { MediaPart } from "../model/schema.js";
import { type Format, isObject, unrenderable } from "./common.js";

/** The MIME type of a `data:` URL, if `url` is one. */
export function dataUrlType(url: string | undefined): string | undefined {
  if (!url?.startsWith("data:")) return undefined;
  const end = url.search(/[;,]/);
  return end > 5 ? url.slice(5, end) : undefined;
}

/** A parsed MediaPart with its media type, when the wire tells one. */
export function withMediaType(part: MediaPart, mediaType: string | undefined): MediaPart {
  if (mediaType !== undefined) part.mediaType = mediaType;
  return part;
}

/** The MIME type of an OpenAI `input_audio` format name. */
export function audioMediaType(format: string): string {
  return format === "mp3" ? "audio/mpeg" : `audio/${format}`;
}

/** Where a media part's bytes are, as far as its `data` tells. */
export interface MediaSource {
  url?: string;
  base64?: string;
  fileId?: string;
  filename?: string;
  mediaType?: string;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function probeString(s: string): MediaSource {
  if (s.startsWith("data:")) return { url: s, mediaType: dataUrlType(s) };
  return /^https?:\/\//.test(s) ? { url: s } : { base64: s };
}

function probe(v: unknown, depth: number): MediaSource | undefined {
  if (typeof v === "string") return probeString(v);
  if (!isObject(v) || depth > 3) return undefined;
  let s: MediaSource | undefined;
  const direct = str(v.url) ?? str(v.image_url) ?? str(v.file_url) ?? str(v.file_data) ?? str(v.data);
  if (direct !== undefined) s = probeString(direct);
  else if (typeof v.file_id === "string") s = { fileId: v.file_id };
  else {
    for (const key of ["image_url", "input_audio", "file", "source", "image", "audio"]) {
      if (isObject(v[key]) && (s = probe(v[key], depth + 1))) break;
    }
  }
  if (!s) return undefined;
  const mediaType =
    str(v.media_type) ?? str(v.mediaType) ?? str(v.mimeType) ?? str(v.mime_type) ?? (typeof v.format === "string" ? audioMediaType(v.format) : undefined);
  if (mediaType !== undefined && s.mediaType === undefined) s.mediaType = mediaType;
  if (typeof v.filename === "string" && s.filename === undefined) s.filename = v.filename;
  return s;
}

/**
 * Best-effort reading of a MediaPart made by any adapter: `data` as a URL, data URL or base64
 * string, or an object holding one under the usual provider keys (url, image_url, file_data,
 * data, file_id, source, ...). The part's own mediaType wins over one found in the data, unless
 * it is a wildcard such as `image/*`.
 */
export function mediaSource(part: MediaPart): MediaSource | undefined {
  const s = probe(part.data, 0);
  const own = part.mediaType;
  if (s && own !== undefined && (s.mediaType === undefined || !own.endsWith("/*"))) s.mediaType = own;
  return s;
}

/** The base64 payload of a source: its base64 text, or the body of a base64 data URL. */
export function base64Of(s: MediaSource): string | undefined {
  if (s.base64 !== undefined) return s.base64;
  if (s.url?.startsWith("data:")) {
    const comma = s.url.indexOf(",");
    if (comma > 0 && s.url.slice(0, comma).endsWith(";base64")) return s.url.slice(comma + 1);
  }
  return undefined;
}

/** A source as a URL: its own, or a data URL made from its base64 payload. */
export function urlOf(s: MediaSource): string | undefined {
  if (s.url !== undefined) return s.url;
  if (s.base64 !== undefined) return `data:${s.mediaType ?? "application/octet-stream"};base64,${s.base64}`;
  return undefined;
}

/** The `input_audio` format for a media type, where OpenAI has one. */
export function audioFormat(mediaType: string | undefined): string | undefined {
  if (mediaType === "audio/wav" || mediaType === "audio/x-wav" || mediaType === "audio/wave") return "wav";
  if (mediaType === "audio/mpeg" || mediaType === "audio/mp3") return "mp3";
  return undefined;
}

/**
 * The source of a media part of another format that `format` renders, or E_UNKNOWN_PART at
 * `where()` when its data holds none.
 */
export function foreignSource(p: MediaPart, format: Format, where: () => string): MediaSource {
  const s = mediaSource(p);
  if (!s) unrenderable(format, "a media part whose data holds no URL, base64 data or file id", where());
  return s;
}

/**
 * What a media part of another format is to the OpenAI formats (Chat Completions, Responses),
 * which take the same four: a file id (`image` when the media type is an image's or unknown),
 * base64 audio in a format `input_audio` takes, an image by URL or data URL, or any other file
 * by URL or data URL.
 */
export type OpenAIMedia =
  | { kind: "file-id"; fileId: string; image: boolean }
  | { kind: "audio"; data: string; format: string }
  | { kind: "image"; url: string }
  | { kind: "file"; url: string; mediaType: string };

export function openaiMedia(s: MediaSource): OpenAIMedia {
  const type = s.mediaType;
  const image = type === undefined || type.startsWith("image/");
  if (s.fileId !== undefined) return { kind: "file-id", fileId: s.fileId, image };
  const format = audioFormat(type);
  const b64 = base64Of(s);
  if (format && b64 !== undefined) return { kind: "audio", data: b64, format };
  // Not a file id: a URL or base64 data, so there is a URL.
  const url = urlOf(s)!;
  return image ? { kind: "image", url } : { kind: "file", url, mediaType: type };
}
