// The X channel's public face: connecting and disconnecting accounts, their tokens (readiness and seeding). The
// driver and the watcher are reached through the registry.
export { CALLBACK_PATH, createXConnectService, disconnectOutcomeText, X_SCOPES, type XConnectService } from './connect.service.js';
export { xOauthRepository, type XOauthRepository, type XTokens } from './oauth.repository.js';
export { xTokensService, XAccountDisconnectedError, type XTokensService } from './tokens.service.js';
export { xChannel } from './descriptor.js';
export { xProfileUrl } from './links.js';
