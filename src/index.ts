// The package's public surface (`import { … } from 'workspace-outreach-service'`): verify a webhook delivery (and,
// for tests, sign one) exactly as the service does, and call the HTTP API with the typed client, which is its own
// package (@workspace-outreach/client, bundled in this one's tarball) re-exported here.
export { verifyWebhook, signPayload, DEFAULT_TOLERANCE_SECONDS } from './webhooks/sign.js';
export type { VerifyOptions, VerifyResult, VerifyFailureReason } from './webhooks/sign.js';
export { createClient, createRetryingFetch, isRetrySafe, parseRetryAfter } from '@workspace-outreach/client';
export type { ClientOptions, OutreachClient, RetryEvent, RetryOptions, paths, components, operations } from '@workspace-outreach/client';
