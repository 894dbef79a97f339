// The webhook-subscriptions module's public face: code outside src/modules/webhook-subscriptions imports from here only.
// Delivery itself lives in src/webhooks.
export { webhooksRoutes } from './webhook-subscriptions.routes.js';
export { createWebhooksService, type WebhooksService } from './webhook-subscriptions.service.js';
export { webhookSecretCodec } from './webhook-subscriptions.secret.js';
