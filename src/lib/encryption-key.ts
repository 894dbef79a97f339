import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, type Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import { getOrInitInstanceSetting } from '../db/instance-settings.repository.js';
import { createTextCipher, decodeEncryptionKey, encryptionKeyFingerprint, type TextCipher } from './crypto.js';

const FINGERPRINT_SETTING = 'encryption_key_fingerprint';

const generatedKeyFile = (config: Config) => path.join(config.dataDir, 'encryption.key');

/**
 * OUTREACH_ENCRYPTION_KEY wins. On the embedded database a key is generated once into the data dir, so a
 * new user needs nothing; on PostgreSQL every process must share one key, so it has to be configured.
 */
export function resolveEncryptionKey(config: Config): { key: Buffer; source: string } {
  if (config.encryptionKey) {
    // loadConfig has already refused a value that is not 32 bytes.
    const key = decodeEncryptionKey(config.encryptionKey);
    if (!key) throw new ConfigError('invalid configuration: OUTREACH_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64 (openssl rand -hex 32)');
    return { key, source: 'OUTREACH_ENCRYPTION_KEY' };
  }
  if (config.database.kind === 'postgres') {
    throw new ConfigError('invalid configuration: OUTREACH_ENCRYPTION_KEY is required with DATABASE_URL (32 random bytes, hex or base64)');
  }
  const file = generatedKeyFile(config);
  if (!fs.existsSync(file)) {
    try {
      fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // The first write into the data dir: an unwritable or impossible path is the operator's setting.
      throw new ConfigError(`OUTREACH_DATA_DIR: cannot write to ${config.dataDir}: ${(err as Error).message}`);
    }
  }
  const key = decodeEncryptionKey(fs.readFileSync(file, 'utf8'));
  if (!key)
    throw new ConfigError(
      `invalid configuration: ${file} does not hold a 32-byte key; restore it, or set OUTREACH_ENCRYPTION_KEY to the key this database was written with`,
    );
  return { key, source: file };
}

export function resolveTextCipher(config: Config): TextCipher {
  return createTextCipher(resolveEncryptionKey(config).key);
}

/**
 * The database remembers the fingerprint of the first key it was used with (migration 0011). Another key could
 * decrypt none of the stored message text, which would read back as null everywhere; refusing to start says why.
 * A database written before the fingerprint existed adopts the key of its next start.
 */
export async function verifyEncryptionKey(db: Database, config: Config): Promise<void> {
  const { key, source } = resolveEncryptionKey(config);
  const fingerprint = encryptionKeyFingerprint(key);
  const saved = await getOrInitInstanceSetting(db, FINGERPRINT_SETTING, fingerprint);
  if (saved === fingerprint) return;
  const given =
    source === 'OUTREACH_ENCRYPTION_KEY' ? 'OUTREACH_ENCRYPTION_KEY is' : `OUTREACH_ENCRYPTION_KEY is not set and the generated key in ${source} is`;
  throw new ConfigError(
    `invalid configuration: ${given} not the key this database was written with (the database expects key fingerprint ${saved}, ` +
      `this key's is ${fingerprint}); set OUTREACH_ENCRYPTION_KEY to the original key, or stored message text could not be read`,
  );
}
