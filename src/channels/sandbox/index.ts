// The sandbox channel's public face: a seeded, deterministic simulation of every channel (docs/engine.md).
export { createSandboxDriver } from './driver.js';
export { instagramChannel } from './descriptor.js';
