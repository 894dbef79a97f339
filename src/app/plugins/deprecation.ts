import type { FastifyInstance } from 'fastify';

const MIN_NOTICE_DAYS = 90;

/**
 * A route marked with `config.deprecation` answers `Deprecation: true` and a `Sunset` date. The notice
 * period is checked when the route is registered, so a too-short sunset never reaches a client.
 */
export function registerDeprecationHeaders(app: FastifyInstance, now: () => Date): void {
  app.addHook('onRoute', (route) => {
    const deprecation = route.config?.deprecation;
    if (!deprecation) return;
    const sunset = new Date(deprecation.sunset);
    if (Number.isNaN(sunset.getTime())) throw new Error(`route ${route.url}: invalid sunset date`);
    if (sunset.getTime() - now().getTime() < MIN_NOTICE_DAYS * 86_400_000) {
      throw new Error(`route ${route.url}: sunset must be at least ${MIN_NOTICE_DAYS} days ahead`);
    }
    const header = sunset.toUTCString();
    const hook = async (_req: unknown, reply: { header(k: string, v: string): unknown }) => {
      reply.header('deprecation', 'true');
      reply.header('sunset', header);
      if (deprecation.link) reply.header('link', `<${deprecation.link}>; rel="deprecation"`);
    };
    const existing = route.onSend;
    route.onSend = existing ? [...(Array.isArray(existing) ? existing : [existing]), hook] : [hook];
  });
}
