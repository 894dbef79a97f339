import { Type } from 'typebox';

/**
 * Prometheus metrics (issue 30, docs/deploy.md "Metrics"): `/metrics` on the API port behind a bearer token, or on a
 * port of its own bound to loopback unless told otherwise. Without either there is no `/metrics` (404).
 * Traces use OpenTelemetry's own variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER…).
 */
export const OBSERVABILITY_ENV = {
  OUTREACH_METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  OUTREACH_METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  OUTREACH_METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
} as const;

export interface MetricsConfig {
  /** Bearer token for `/metrics` on the API port; null: not served there. */
  readonly token: string | null;
  /** A port of its own for `/metrics` (no token), or null. */
  readonly port: number | null;
  readonly host: string;
  /** Whether `/metrics` is served at all. */
  readonly enabled: boolean;
}

export function metricsConfigOf(e: { OUTREACH_METRICS_TOKEN?: string; OUTREACH_METRICS_PORT?: number; OUTREACH_METRICS_HOST?: string }): MetricsConfig {
  const token = e.OUTREACH_METRICS_TOKEN ?? null;
  const port = e.OUTREACH_METRICS_PORT ?? null;
  return Object.freeze({ token, port, host: e.OUTREACH_METRICS_HOST ?? '127.0.0.1', enabled: token !== null || port !== null });
}
