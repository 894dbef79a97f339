// The LinkedIn channel's public face: how a LinkedIn account's steps reach LinkedIn (sandbox, tasks or the gateway)
// and linking an account to the gateway. The driver and the watcher are reached through the registry.
export { createLinkedinAccountsService, type LinkedinAccountsService, type LinkedinAccountView } from './accounts.service.js';
export { linkedinChannel } from './descriptor.js';
export { holderOfGatewayAccount } from './accounts.repository.js';
