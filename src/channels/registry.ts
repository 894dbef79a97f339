import { registryOf, type ChannelDescriptor, type ChannelRegistry } from './descriptor.js';
import { emailChannel } from './email/index.js';
import { linkedinChannel } from './linkedin/index.js';
import { instagramChannel } from './sandbox/index.js';
import { xChannel } from './x/index.js';

/** The built-in channels, in the order a pass reads their inboxes. */
export const BUILT_IN_CHANNELS: readonly ChannelDescriptor[] = [linkedinChannel, emailChannel, xChannel, instagramChannel];

/**
 * The registry: the built-in descriptors plus any registered at run time (a test's fifth channel). A runtime
 * descriptor of a built-in's name replaces the built-in.
 */
export function createChannelRegistry(extra: readonly ChannelDescriptor[] = []): ChannelRegistry {
  return registryOf([...BUILT_IN_CHANNELS, ...extra]);
}
