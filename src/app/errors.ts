// Errors live in lib/errors.ts so every layer (channels included) can throw them; the app turns them into bodies.
export * from '../lib/errors.js';
