import { createHash } from 'node:crypto';

/** A uniform number in [0, 1) that depends only on its inputs: the basis of every "random" engine choice. */
export function unitHash(...parts: string[]): number {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  return digest.readUInt32BE(0) / 0x1_0000_0000;
}

export function shortHash(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);
}
