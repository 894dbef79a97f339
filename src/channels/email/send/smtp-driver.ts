import nodemailer from 'nodemailer';
import { shortHash } from '../../../lib/hash.js';
import type { ActionResult, ChannelDriver } from '../../types.js';

/**
 * Real e-mail over SMTP. The Message-ID derives from the step's idempotency key, so a receiving system that
 * deduplicates on it drops a repeat. There is no inbox here: replies to e-mail are not observed by this driver.
 */
export function createSmtpEmailDriver(smtpUrl: string, from: string): ChannelDriver & { close(): void } {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    channel: 'email',
    async perform(action): Promise<ActionResult> {
      const to = action.recipient.email;
      if (!to) return { outcome: 'failed', error: 'no_email_address', retryable: false };
      try {
        const info = await transport.sendMail({
          from,
          to,
          subject: action.subject ?? '',
          text: action.text ?? '',
          messageId: `<${shortHash('smtp', action.idempotencyKey)}@outreach.invalid>`,
        });
        return { outcome: 'ok', externalId: typeof info.messageId === 'string' ? info.messageId : null };
      } catch (err) {
        const e = err as { responseCode?: number; code?: string };
        // 5xx is the server's final word on this message; anything else (4xx, connection trouble) may pass later.
        if (typeof e.responseCode === 'number' && e.responseCode >= 500) return { outcome: 'failed', error: `smtp_${e.responseCode}`, retryable: false };
        if (typeof e.responseCode === 'number') return { outcome: 'failed', error: `smtp_${e.responseCode}`, retryable: true };
        return { outcome: 'failed', error: `smtp_${(e.code ?? 'error').toLowerCase()}`, retryable: true };
      }
    },
    close: () => transport.close(),
  };
}
