// The people module's public face: code outside src/modules/people imports from here only.
export {
  createPeopleService,
  JOIN_PATH,
  INVITATION_TTL_MS,
  PERSON_SIGN_IN_TTL_MS,
  type PeopleService,
  type PeopleActor,
  type PeopleCommand,
} from './people.service.js';
export { createPasskeysService, WEBAUTHN_CHALLENGE_TTL_MS, type PasskeysService } from './passkeys.js';
