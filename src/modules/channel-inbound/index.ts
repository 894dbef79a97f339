// The channel-inbound module's public face: code outside src/modules/channel-inbound imports from here only.
export { createChannelInboundService, type ChannelInboundService, type PushChannels, type PushCounts } from './channel-inbound.service.js';
export { channelInboundRoutes } from './channel-inbound.routes.js';
export { PUSH_BODY_LIMIT } from './channel-inbound.schemas.js';
