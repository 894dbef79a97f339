import type { TextCipher } from '../../lib/crypto.js';

const PLAIN_SECRET_PREFIX = 'whsec_';

/**
 * The one place that decides how a signing secret rests in the database: sealed with the service's
 * AES-256-GCM text cipher (OUTREACH_ENCRYPTION_KEY, or the generated key of the embedded database).
 * It cannot be hashed like an API key because the worker must sign with it. A plain `whsec_` value
 * (written by hand or before encryption) still opens, so such a row keeps working.
 */
export const webhookSecretCodec = {
  seal(secret: string, cipher: TextCipher): string {
    const sealed = cipher.encrypt(secret);
    if (sealed === null) throw new Error('webhook secret could not be encrypted');
    return sealed;
  },
  /** null when the stored value cannot be opened with this key (key changed or value tampered with). */
  open(stored: string, cipher: TextCipher): string | null {
    if (stored.startsWith(PLAIN_SECRET_PREFIX)) return stored;
    return cipher.decrypt(stored);
  },
};
