import { createRequire } from 'node:module';

// A real DNS server on 127.0.0.1 (UDP, the `dns2` package) answering from a zone the test writes: A, MX and TXT
// records per name; names it does not know answer NXDOMAIN; names in `servfail` answer SERVFAIL; names in `silent`
// never answer (a timeout). The service reaches it through OUTREACH_DNS_SERVERS=127.0.0.1:<port>, with Node's own
// dns.promises.Resolver, as it would reach any resolver.

const require = createRequire(import.meta.url);
// dns2 ships no types; the little of it used here is typed below.
const dns2 = require('dns2') as {
  createServer(o: { udp: boolean; handle: (request: DnsRequest, send: (r: DnsResponse) => void) => void }): DnsServer;
  Packet: {
    TYPE: Record<string, number>;
    CLASS: { IN: number };
    RCODE: { NXDOMAIN: number; SERVFAIL: number };
    createResponseFromRequest(r: DnsRequest): DnsResponse;
  };
};
interface DnsRequest {
  questions: { name: string; type: number }[];
}
interface DnsResponse {
  header: { rcode: number };
  answers: Record<string, unknown>[];
}
interface DnsServer {
  listen(o: { udp: { port: number; address: string } }): Promise<void>;
  addresses(): { udp?: { port: number } };
  close(): Promise<void>;
}

export interface ZoneName {
  a?: string[];
  mx?: { exchange: string; priority: number }[];
  txt?: string[];
}

export interface DnsFake {
  /** `host:port`, for OUTREACH_DNS_SERVERS. */
  server: string;
  /** Names (lower case, no trailing dot) and their records; change it at any time. */
  zone: Map<string, ZoneName>;
  servfail: Set<string>;
  silent: Set<string>;
  /** Every question asked, as `TYPE name`. */
  queries: string[];
  close(): Promise<void>;
}

export async function startDnsFake(zone: Record<string, ZoneName> = {}): Promise<DnsFake> {
  const { Packet } = dns2;
  const names = new Map(Object.entries(zone).map(([k, v]) => [k.toLowerCase(), v]));
  const servfail = new Set<string>();
  const silent = new Set<string>();
  const queries: string[] = [];
  const typeName = new Map(Object.entries(Packet.TYPE).map(([k, v]) => [v, k]));
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const name = q.name.toLowerCase().replace(/\.$/, '');
      queries.push(`${typeName.get(q.type) ?? q.type} ${name}`);
      if (silent.has(name)) return;
      if (servfail.has(name)) {
        response.header.rcode = Packet.RCODE.SERVFAIL;
        return send(response);
      }
      const records = names.get(name);
      if (!records) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
        return send(response);
      }
      const base = { name: q.name, class: Packet.CLASS.IN, ttl: 60 };
      if (q.type === Packet.TYPE.A) for (const address of records.a ?? []) response.answers.push({ ...base, type: Packet.TYPE.A, address });
      if (q.type === Packet.TYPE.MX) for (const mx of records.mx ?? []) response.answers.push({ ...base, type: Packet.TYPE.MX, ...mx });
      if (q.type === Packet.TYPE.TXT) for (const data of records.txt ?? []) response.answers.push({ ...base, type: Packet.TYPE.TXT, data });
      send(response);
    },
  });
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = server.addresses().udp!.port;
  return { server: `127.0.0.1:${port}`, zone: names, servfail, silent, queries, close: () => server.close() };
}
