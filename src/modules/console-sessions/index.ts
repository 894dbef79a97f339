// The console-sessions module's public face: code outside src/modules/console-sessions imports from here only.
export {
  CONSOLE_SESSION_TTL_MS,
  LINK_SESSION_MAX_AGE_MS,
  createConsoleSessionsService,
  type ConsoleSession,
  type ConsoleSessionsService,
} from './console-sessions.service.js';
