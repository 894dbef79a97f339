import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, type Config } from '../config/config.js';
import { createTextCipher, keyFromSecret, type TextCipher } from './crypto.js';

/**
 * OUTREACH_ENCRYPTION_KEY wins. On the embedded database a key is generated once into the data dir, so a
 * new user needs nothing; on PostgreSQL every process must share one key, so it has to be configured.
 */
export function resolveTextCipher(config: Config): TextCipher {
  if (config.encryptionKey) return createTextCipher(keyFromSecret(config.encryptionKey));
  if (config.database.kind === 'postgres') {
    throw new ConfigError('invalid configuration: OUTREACH_ENCRYPTION_KEY is required with DATABASE_URL (32 random bytes, hex or base64)');
  }
  const file = path.join(config.dataDir, 'encryption.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return createTextCipher(keyFromSecret(fs.readFileSync(file, 'utf8').trim()));
}
