import type { AppInstance } from '../../app/types.js';
import { notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ConsoleDeps } from '../deps.js';

/**
 * The initials drawn as a picture, for a profile picture that could not be fetched: the row keeps its shape and never
 * shows a broken image. Only letters and digits reach it (initialsOf), escaped again for XML all the same.
 */
export function initialsSvg(initials: string): string {
  const text = initials.replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return (
    '<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96">' +
    '<rect width="96" height="96" rx="48" fill="#dfe3e8"/>' +
    `<text x="48" y="60" text-anchor="middle" font-family="system-ui, sans-serif" font-size="36" font-weight="600" fill="#2f3640">${text}</text>` +
    '</svg>'
  );
}

/**
 * `GET /console/avatars/{candidateId}`: a candidate's profile picture, fetched and cached by the server
 * (publicData.candidateAvatar), so the console's CSP keeps `img-src 'self' data:`. Needs the session; a candidate of
 * another workspace is the 404 page.
 */
export function avatarPages(app: AppInstance, deps: ConsoleDeps) {
  app.get<{ Params: { candidateId: string } }>('/console/avatars/:candidateId', { schema: { hide: true } }, async (req, reply) => {
    if (!isUuid(req.params.candidateId)) throw notFound('candidate');
    const avatar = await deps.services.publicData.candidateAvatar(req.consoleSession!.auth.workspaceId, req.params.candidateId.toLowerCase());
    // Private: the answer depends on the session's workspace; nosniff: the type is the one checked, nothing else.
    reply.header('cache-control', 'private, max-age=3600').header('x-content-type-options', 'nosniff');
    if (avatar.kind === 'image') return reply.type(avatar.contentType).send(avatar.body);
    return reply.type('image/svg+xml').send(initialsSvg(avatar.initials));
  });
}
