// The package's public surface (`import { … } from 'workspace-outreach-service'`): verify a webhook delivery (and,
// for tests, sign one) exactly as the service does, and call the HTTP API with a typed client that follows the
// spec's retry rules.
export { verifyWebhook, signPayload, DEFAULT_TOLERANCE_SECONDS } from './webhooks/sign.js';
export type { VerifyOptions, VerifyResult, VerifyFailureReason } from './webhooks/sign.js';
export { createClient, createRetryingFetch, isRetrySafe, parseRetryAfter } from './client/index.js';
export type { ClientOptions, OutreachClient, RetryEvent, RetryOptions, paths, components, operations } from './client/index.js';
