import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Message text at rest is AES-256-GCM. A stored value is `v1:<iv>:<tag>:<ciphertext>` (base64url), so text
 * written before a key change, or tampered with, is detected and reported as unavailable instead of garbage.
 */
export interface TextCipher {
  encrypt(plain: string | null): string | null;
  /** null when the value is absent or cannot be decrypted with this key. */
  decrypt(stored: string | null): string | null;
}

export function keyFromSecret(secret: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(secret)) return Buffer.from(secret, 'hex');
  const b64 = Buffer.from(secret, 'base64');
  if (b64.length === 32) return b64;
  // Any other passphrase is stretched to 32 bytes; operators are told to prefer 32 random bytes.
  return createHash('sha256').update(secret).digest();
}

export function createTextCipher(key: Buffer): TextCipher {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  return {
    encrypt(plain) {
      if (plain === null) return null;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `v1:${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${ct.toString('base64url')}`;
    },
    decrypt(stored) {
      if (stored === null) return null;
      const parts = stored.split(':');
      if (parts.length !== 4 || parts[0] !== 'v1') return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1], 'base64url'));
        decipher.setAuthTag(Buffer.from(parts[2], 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(parts[3], 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
