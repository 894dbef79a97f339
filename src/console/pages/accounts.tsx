import type { AppInstance } from '../../app/types.js';
import type { ConsoleDeps } from '../plugin.js';
import { pageContext, sendPage } from '../render.js';

/** The workspace's sending accounts and connected X identities. */
export function accountsPages(app: AppInstance, deps: ConsoleDeps) {
  app.get('/console/accounts', { schema: { hide: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const [{ accounts }, { accounts: xAccounts }] = await Promise.all([
      deps.services.progress.progress(workspaceId, 1),
      deps.services.plays.listAccounts(workspaceId),
    ]);
    return sendPage(reply, ctx, {
      title: 'Accounts',
      nav: 'accounts',
      body: (
        <>
          <h1>Accounts</h1>
          <section aria-labelledby="sending-accounts">
            <h2 id="sending-accounts">Sending accounts</h2>
            {accounts.length === 0 ? (
              <p>No sending accounts yet.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Account</th>
                    <th scope="col">Mode</th>
                    <th scope="col">Status</th>
                    <th scope="col">Invites today</th>
                    <th scope="col">Warm-up phase</th>
                  </tr>
                </thead>
                <tbody>
                  {accounts.map((a) => (
                    <tr>
                      <td safe>{a.name}</td>
                      <td safe>{a.mode}</td>
                      <td safe>{a.storedStatus}</td>
                      <td>
                        {a.invitesSentToday} of {a.inviteCapToday}
                      </td>
                      <td>{a.rampPhase}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section aria-labelledby="x-accounts" id="x-accounts-section">
            <h2 id="x-accounts">X accounts</h2>
            {xAccounts.length === 0 ? (
              <p>No X account is connected.</p>
            ) : (
              <ul>
                {xAccounts.map((a) => (
                  <li>
                    <span safe>{'@' + a.handle}</span> (user id <span safe>{a.userId}</span>)
                  </li>
                ))}
              </ul>
            )}
            {/* The X channel's "Connect X account" button goes here (x-driver adds it). */}
            <div id="x-connect"></div>
          </section>
        </>
      ),
    });
  });
}
