/** What one look at a sending domain's DNS found (domain-checks.ts checks; domain-checks.repository.ts stores it). */
export type CheckStatus = 'found' | 'missing' | 'invalid' | 'unknown';

export interface RecordCheck {
  status: CheckStatus;
  /** The DNS name(s) looked at. */
  names: string[];
  /** The records found there that matter (MX hosts, the SPF, DKIM or DMARC TXT). */
  records: string[];
  /** Why not found, in words (the DNS error code for `unknown`); null when found. */
  detail: string | null;
}

export interface DomainCheckResult {
  mx: RecordCheck;
  spf: RecordCheck;
  dkim: RecordCheck & { selectors: string[] };
  dmarc: RecordCheck & { policy: string | null };
}
