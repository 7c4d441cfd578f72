/** How findings name where they are: `messages[7]`, `messages[7].parts[0]`, and ids quoted as JSON. */
export const msgPath = (i: number): string => `messages[${i}]`;
export const partPath = (i: number, k: number): string => `messages[${i}].parts[${k}]`;
export const quote = (s: string): string => JSON.stringify(s);
