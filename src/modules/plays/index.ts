// The plays module's public face: code outside src/modules/plays imports from here only.
export { playsRoutes } from './plays.routes.js';
export { createPlaysService, type PlaysService } from './plays.service.js';
export { ListPlaysResponse, ListXAccountsResponse, PAGE_LIMIT_DEFAULT, Play, PlayIdParams, PlayOperations } from './plays.schemas.js';
// Authoring edits a Play's setup in its own transaction, under the Play's edit lock.
export { lockPlayForEdit, playColumns, type LockedPlay } from './plays.locks.js';
