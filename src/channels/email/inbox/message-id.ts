/** `<abc@host>` → `abc@host`; Message-IDs compare without brackets and case-insensitively (parse.ts, arf.ts, decide.ts). */
export function normalizeMessageId(id: string): string {
  return id.trim().replace(/^<|>$/g, '').trim().toLowerCase();
}
