/**
 * Domain errors carry a stable code and the HTTP status the API answers with; services throw them and
 * the one error handler turns them into the spec's error body. `body` holds extra public fields.
 */
export class AppError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(statusCode: number, code: string, message?: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message ?? code);
    this.statusCode = statusCode;
    this.code = code;
    this.body = body;
    this.headers = headers;
  }
}

export const badRequest = (code: string, message: string, body: Record<string, unknown> = {}) => new AppError(400, code, message, body);
export const unauthorized = () => new AppError(401, 'unauthorized', 'missing, invalid, unknown, revoked or expired key');
export const forbidden = (code: string, message: string) => new AppError(403, code, message);
/** 404 bodies use the spec's short phrase (`sequence not found`) as `error`. */
export const notFound = (what: string) => new AppError(404, `${what} not found`, `${what} not found`);
/** 409 bodies are `{ok: false, error: <code>}`, plus optional detail such as the current revision. */
export const conflict = (code: string, message: string, body: Record<string, unknown> = {}) => new AppError(409, code, message, { ok: false, ...body });
export const tooManyRequests = (code: string, retryAfterSeconds: number, message = 'rate limit exceeded') =>
  new AppError(429, code, message, {}, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
export const unavailable = (code: string, message: string, body: Record<string, unknown> = {}) => new AppError(503, code, message, body);
