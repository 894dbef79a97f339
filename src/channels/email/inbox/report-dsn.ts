import { REASON_RULES, type BounceReason } from './report-rules.js';
import { PHRASE_SCAN_CHARS, REPORT_SCAN_BYTES, firstOf, headerFields, lower } from './report-mime.js';

// Delivery status notifications (RFC 3464) as reports.ts reads them: the per-recipient blocks, what each says
// happened, and the reason and severity of a failure. Pure: no database, no network.

const MAX_DIAGNOSTIC = 500;

// ---------------------------------------------------------------------------------------------------------------
// RFC 3464 per-recipient fields

export interface RecipientBlock {
  action: string | null;
  status: string | null;
  diagnostic: string | null;
}

export const STATUS_RE = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

export function statusIn(value: string | undefined | null): string | null {
  if (!value) return null;
  const m = STATUS_RE.exec(value.slice(0, 2000));
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

/** The per-recipient blocks of a delivery-status body (the first, per-message block has none of these fields). */
export function recipientBlocks(body: string): RecipientBlock[] {
  const out: RecipientBlock[] = [];
  for (const block of body.slice(0, REPORT_SCAN_BYTES).split(/\n[ \t]*\n/)) {
    const f = headerFields(block);
    const action =
      f
        .get('action')
        ?.toLowerCase()
        .split(/[\s;(]/, 1)[0] ?? null;
    const status = statusIn(f.get('status'));
    if (action === null && status === null) continue;
    const diagnostic = f.get('diagnostic-code')?.slice(0, MAX_DIAGNOSTIC) ?? null;
    out.push({ action, status: status ?? statusIn(diagnostic), diagnostic });
  }
  return out;
}

export type Kind = 'bounce' | 'delayed' | 'delivered';

export function kindOf(b: RecipientBlock): Kind | null {
  switch (b.action) {
    case 'failed':
    case 'undeliverable': // Postfix's address verification (`sendmail -bv`)
      return 'bounce';
    case 'delayed':
      return 'delayed';
    case 'delivered':
    case 'relayed':
    case 'expanded':
    case 'deliverable':
      return 'delivered';
    default:
      // No (or an unknown) action: the status class says what it can.
      if (!b.status) return null;
      return b.status.startsWith('5') ? 'bounce' : b.status.startsWith('4') ? 'delayed' : 'delivered';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Reason and severity

export function reasonOf(text: string, status: string | null): { reason: BounceReason; rule: (typeof REASON_RULES)[number] | null } {
  const t = lower(text).slice(0, PHRASE_SCAN_CHARS);
  for (const rule of REASON_RULES) if (firstOf(t, rule.phrases)) return { reason: rule.reason, rule };
  if (status) {
    const detail = status.slice(2);
    for (const rule of REASON_RULES) if (rule.statuses.includes(detail)) return { reason: rule.reason, rule };
  }
  return { reason: 'other', rule: null };
}

/** An SMTP reply code (`550`, `452-`) at a line start or after a space or quote: the first one in the text. */
export const SMTP_CODE_RE = /(?:^|[\s'"(:[])([45][0-5]\d)(?=[\s\-'"]|$)/m;

export function severityOf(rule: (typeof REASON_RULES)[number] | null, status: string | null, smtpCode: string | null, text: string): 'hard' | 'soft' {
  if (rule?.severity === 'hard' || rule?.severity === 'soft') return rule.severity;
  const cls = status?.[0] ?? smtpCode?.[0] ?? null;
  if (cls === '4') return 'soft';
  if (cls === '5') return 'hard';
  return lower(text).includes('temporar') && !lower(text).includes('permanent') ? 'soft' : 'hard';
}

export const SEVERITY_ORDER: Record<string, number> = { 'bounce:hard': 4, 'bounce:soft': 3, delayed: 2, delivered: 1 };

/** The line of the notice with the SMTP code (or the first status code), as the diagnostic. */
export function diagnosticIn(notice: string, code: string | null): string | null {
  const i = code ? notice.search(new RegExp(`(?:^|[\\s'"(:[])${code}(?=[\\s\\-'"]|$)`, 'm')) : notice.search(STATUS_RE);
  if (i < 0) return null;
  const start = notice.lastIndexOf('\n', i) + 1;
  const end = notice.indexOf('\n', i);
  return (
    notice
      .slice(start, end < 0 ? undefined : end)
      .trim()
      .slice(0, MAX_DIAGNOSTIC) || null
  );
}
