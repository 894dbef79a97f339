import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 that holds every chunk `delayMs` in each direction before passing it on, in order: a
 * server `delayMs` away on either side (the mailbox-scale bench puts the test Dovecot 10 ms away each way).
 */
export async function startDelayProxy(targetPort: number, delayMs: number): Promise<{ port: number; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const pipe = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk) => void setTimeout(() => to.writable && to.write(chunk), delayMs));
    from.on('end', () => void setTimeout(() => to.end(), delayMs));
    from.on('close', () => void setTimeout(() => to.destroy(), delayMs));
    from.on('error', () => undefined);
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Drops every connection passing through now (a network blip); new ones are taken as before. */
    cut() {
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
