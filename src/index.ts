// The package's public surface for receivers: verify a delivery (and, for tests, sign one) exactly as
// the service does.
export { verifyWebhook, signPayload, DEFAULT_TOLERANCE_SECONDS } from './webhooks/sign.js';
export type { VerifyOptions, VerifyResult, VerifyFailureReason } from './webhooks/sign.js';
