import { createHash, randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();
export const newMessagingAccountId = (): string => `onb_${randomUUID()}`;
export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const uuidRe = new RegExp(UUID_PATTERN);
export const isUuid = (value: unknown): value is string => typeof value === 'string' && uuidRe.test(value);
