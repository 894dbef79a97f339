import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Message text at rest is AES-256-GCM. A stored value is `v1:<iv>:<tag>:<ciphertext>` (base64url), so text
 * written before a key change, or tampered with, is detected and reported as unavailable instead of garbage.
 */
export interface TextCipher {
  encrypt(plain: string | null): string | null;
  /** null when the value is absent or cannot be decrypted with this key. */
  decrypt(stored: string | null): string | null;
  /**
   * An HMAC-SHA256 of `data` (base64url) under a key derived from this one for `purpose`, so a signature made for one
   * purpose (an unsubscribe link, say) can never stand in for another, and the encryption key itself is never used raw.
   */
  sign(purpose: string, data: string): string;
}

/**
 * The 32 bytes of a configured key, written as 64 hex characters or as base64 / base64url (43 characters, or
 * 44 with its `=`); null for anything else. Passphrases are not stretched: a short or mistyped key must stop
 * start-up rather than quietly encrypt with a key nobody can reproduce.
 */
export function decodeEncryptionKey(secret: string): Buffer | null {
  const s = secret.trim();
  if (/^[0-9a-fA-F]{64}$/.test(s)) return Buffer.from(s, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) {
    const bytes = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes;
  }
  return null;
}

/**
 * Names a key without revealing it: the first 8 bytes of HMAC-SHA-256(key, a fixed label), hex. Stored in the
 * database so that a start with a different key is refused (lib/encryption-key.ts).
 */
export function encryptionKeyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update('outreach encryption key fingerprint v1').digest().subarray(0, 8).toString('hex');
}

export function createTextCipher(key: Buffer): TextCipher {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  const purposeKeys = new Map<string, Buffer>();
  const keyFor = (purpose: string) => {
    let k = purposeKeys.get(purpose);
    if (!k) purposeKeys.set(purpose, (k = createHmac('sha256', key).update(`outreach:${purpose}`).digest()));
    return k;
  };
  return {
    sign(purpose, data) {
      return createHmac('sha256', keyFor(purpose)).update(data).digest('base64url');
    },
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
