import { TableHead } from '../layout.js';
import type { AppInstance } from '../../app/types.js';
import type { ConsoleDeps } from '../plugin.js';
import { pageContext, sendPage } from '../render.js';

/** Every Play of the workspace; those with the review API link to their review page. */
export function playsPages(app: AppInstance, deps: ConsoleDeps) {
  app.get('/console/plays', { schema: { hide: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const { plays } = await deps.services.plays.listPlays(req.consoleSession!.auth.workspaceId);
    return sendPage(reply, ctx, {
      title: 'Plays',
      nav: 'plays',
      body: (
        <section>
          <h1>Plays</h1>
          {plays.length === 0 ? (
            <p>This workspace has no Plays yet.</p>
          ) : (
            <table>
              <caption>Plays of this workspace, oldest first</caption>
              <TableHead columns={['Play', 'Status', 'Mode', 'Review']} />
              <tbody>
                {plays.map((p) => (
                  <tr>
                    <td safe>{p.name}</td>
                    <td>{p.status}</td>
                    <td>{p.autopilot ? 'Autopilot' : 'Manual'}</td>
                    <td>
                      {p.reviewApiEnabled ? (
                        <a href={`/review/plays/${p.id}`}>
                          Review <span safe>{p.name}</span>
                        </a>
                      ) : (
                        'No review'
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ),
    });
  });
}
