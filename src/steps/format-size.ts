/**
 * A byte count as step reduction and the step compactor print it: "523 bytes" below 1000, "2.5KB" below 10^6, "1.2MB"
 * above (decimal units: the design's example sums 2.5 + 1.2 + 0.8 + 3.1 + 1.5 KB to "9.1KB").
 */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1e6) return `${(bytes / 1000).toFixed(1)}KB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)}MB`;
  return `${(bytes / 1e9).toFixed(1)}GB`;
}

/**
 * Bytes always as KB with one decimal, 1 KB = 1000 bytes, rounded half up: 9100 → "9.1KB", 50 →
 * "0.1KB". The step compactor's group template is `{total_size}KB total` whatever the size, so this is not
 * formatSize, which switches to "bytes" below 1000 and to MB above 10^6.
 */
export function formatKB(bytes: number): string {
  return `${(Math.round(bytes / 100) / 10).toFixed(1)}KB`;
}
