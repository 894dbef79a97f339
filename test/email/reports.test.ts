import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { mayBeReport, readReport, reportHintsOf, walkMime, type ReportHints, type ReportVerdict } from '../../src/channels/email/inbox/reports.js';
import {
  FEEDBACK_TYPE_RULES,
  JMRP_SENDER_DOMAINS,
  LANGUAGE_RULES,
  MAIL_SYSTEM_RULES,
  REASON_RULES,
  REPORT_AUTO_SUBMITTED,
  REPORT_PART_TYPES,
  REPORT_SENDER_LOCALPARTS,
  REPORT_SENDER_NAMES,
  RETURNED_PART_TYPES,
  STATUS_PART_TYPES,
} from '../../src/channels/email/inbox/report-rules.js';
import { COMPLAINT_FEEDBACK_TYPES, readFeedbackReport } from '../../src/channels/email/inbox/arf.js';
import { bestOfThree } from '../helpers/bounded-time.js';

// Issue 38 §1–§2: delivery reports and complaints however their mail system writes them (reports.ts, rules as data in
// report-rules.ts). Real cases (test/fixtures/inbound/k01-…k07-…, reduced from Sisimai's corpus) and every rule.

const FIXTURES = new URL('../fixtures/inbound/', import.meta.url).pathname;
const SHARED = '/work/shared/cases/inbound/';
const ORIGINAL = 'sent-0001@acme.example';
const SENT_TO = 'pat@initech.example';
const OPTIONS = { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true } as const;

async function read(source: Buffer | string, sentTo: string | null = SENT_TO) {
  const buf = Buffer.isBuffer(source) ? source : Buffer.from(source.replace(/\r?\n/g, '\r\n'), 'utf8');
  const mail = await simpleParser(buf, OPTIONS);
  const hints = reportHintsOf(mail, buf);
  return { hints, verdict: readReport(mail, buf, { ...hints, sentTo }) };
}

const ORIG_HEADERS = `From: Dana <dana@acme.example>\nTo: pat@initech.example\nSubject: Quick question\nDate: Mon, 23 Nov 2026 09:12:00 +0100\nMessage-ID: <${ORIGINAL}>`;

/** A plain-text message from `from` with `subject` and `body`. */
const plain = (from: string, subject: string, body: string, extra = '') =>
  `From: ${from}\nTo: dana@acme.example\nSubject: ${subject}\nMessage-ID: <r-1@mx.initech.example>\nDate: Mon, 23 Nov 2026 10:00:00 +0100\n${extra}Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n${body}\n`;

/** A DSN with the given per-recipient blocks. */
const dsn = (blocks: string[], reportPart = 'message/delivery-status') =>
  `From: MAILER-DAEMON@mx.acme.example (Mail Delivery System)\nTo: dana@acme.example\nSubject: Delivery report\nMessage-ID: <d-1@mx.acme.example>\nMIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; boundary="B"\n\n--B\nContent-Type: text/plain\n\nReport.\n\n--B\nContent-Type: ${reportPart}\n\nReporting-MTA: dns; mx.acme.example\n\n${blocks.join('\n\n')}\n\n--B\nContent-Type: text/rfc822-headers\n\n${ORIG_HEADERS}\n\n--B--\n`;

const block = (action: string, status: string, diagnostic = 'x-test; see the status') =>
  `Final-Recipient: rfc822; pat@initech.example\nAction: ${action}\nStatus: ${status}\nDiagnostic-Code: ${diagnostic}`;

describe('real cases (test/fixtures/inbound): each kind, the shared case and reductions of Sisimai corpus files', () => {
  const folders = readdirSync(FIXTURES).filter((f) => /^k0[1-7]-/.test(f));
  it('there is a folder per kind, each with the shared case and at least 3 more files', () => {
    expect(folders.map((f) => f.slice(0, 3)).sort()).toEqual(['k01', 'k02', 'k03', 'k04', 'k05', 'k06', 'k07']);
    for (const folder of folders) {
      const expected = JSON.parse(readFileSync(join(FIXTURES, folder, 'expected.json'), 'utf8')) as Record<string, unknown>;
      const emls = readdirSync(join(FIXTURES, folder)).filter((f) => f.endsWith('.eml'));
      expect(emls.sort()).toEqual(Object.keys(expected).sort());
      expect(emls.length).toBeGreaterThanOrEqual(4);
      expect(emls.filter((f) => readdirSync(SHARED).includes(f))).toHaveLength(1);
    }
  });

  for (const folder of readdirSync(FIXTURES).filter((f) => /^k0[1-7]-/.test(f))) {
    const expected = JSON.parse(readFileSync(join(FIXTURES, folder, 'expected.json'), 'utf8')) as Record<
      string,
      { verdict: ReportVerdict['kind']; severity?: 'hard' | 'soft'; optOut?: boolean }
    >;
    for (const [file, want] of Object.entries(expected)) {
      it(`${folder}/${file}: ${want.verdict}${want.severity ? ` (${want.severity})` : ''}${want.optOut !== undefined ? ` optOut ${want.optOut}` : ''}, tied to our Message-ID`, async () => {
        const source = readFileSync(join(FIXTURES, folder, file));
        const { hints, verdict } = await read(source);
        expect(verdict, JSON.stringify(verdict)).not.toBeNull();
        expect(verdict!.kind).toBe(want.verdict);
        expect(verdict!.originalMessageId).toBe(ORIGINAL);
        if (want.severity) expect(verdict!.kind === 'bounce' && verdict!.severity).toBe(want.severity);
        if (want.optOut !== undefined) expect(verdict!.kind === 'complaint' && verdict!.optOut).toBe(want.optOut);
        // Reports are worth a body fetch on their headers alone, except a gateway's threaded "Re:" from an ordinary
        // address: nothing in its headers tells it from a reply, and the watcher reads a threaded message's body anyway.
        const threadedGatewayWithoutDaemon = file === 'k06-gateway-ordinary-sender.eml';
        expect(mayBeReport(hints)).toBe(!threadedGatewayWithoutDaemon);
        // The same without a thread (the watcher did not match it to a lead): the verdict does not change.
        expect((await read(source, null)).verdict?.kind).toBe(want.verdict);
      });
    }
  }
});

describe('a person is never a report', () => {
  const replies = readdirSync(SHARED).filter((f) => /^k(0[89]|1\d)-/.test(f));
  it.each(replies)('shared reply case %s: mayBeReport false, readReport null', async (file) => {
    const { hints, verdict } = await read(readFileSync(join(SHARED, file)));
    expect(mayBeReport(hints)).toBe(false);
    expect(verdict).toBeNull();
  });

  it('an ordinary reply: mayBeReport false, readReport null', async () => {
    const { hints, verdict } = await read(
      plain('Pat <pat@initech.example>', 'Re: Quick question', 'Sounds good, Tuesday works.', `In-Reply-To: <${ORIGINAL}>\n`),
    );
    expect(mayBeReport(hints)).toBe(false);
    expect(verdict).toBeNull();
  });

  it('a threaded reply FROM sentTo that mentions "550", "undeliverable" and "user unknown" is not a bounce', async () => {
    const body =
      'Hi Dana, my earlier mail to you came back undeliverable: 550 5.1.1 user unknown, message could not be delivered.\n' +
      'Could you check your address? Delivery has failed twice.\n\nMessage headers follow.\n\n' +
      ORIG_HEADERS;
    const { verdict } = await read(plain('Pat <pat@initech.example>', 'Re: Undeliverable: Quick question', body, `In-Reply-To: <${ORIGINAL}>\n`));
    expect(verdict).toBeNull();
    // The same words in an out-of-office with a null Return-Path: still the person (and no failure words: not a report).
    const ooo = await read(plain('pat@initech.example', 'Out of office', 'I am away until Monday.', 'Return-Path: <>\nAuto-Submitted: auto-replied\n'));
    expect(ooo.verdict).toBeNull();
  });

  it('an auto-reply from another address with a null Return-Path and no failure words is not a report', async () => {
    const { verdict } = await read(plain('Help desk <help@initech.example>', 'Re: Quick question', 'Thanks, we got your message.', 'Return-Path: <>\n'), null);
    expect(verdict).toBeNull();
  });
});

describe('rule tables, every entry', () => {
  it('REPORT_SENDER_LOCALPARTS: each local part makes mayBeReport true, and with a failure text, a bounce', async () => {
    for (const local of REPORT_SENDER_LOCALPARTS) {
      const { hints, verdict } = await read(plain(`${local}@mx.initech.example`, 'Notice', `550 5.1.1 no such user\n\n${ORIG_HEADERS}`), null);
      expect(mayBeReport(hints), local).toBe(true);
      expect(verdict?.kind, local).toBe('bounce');
      expect(verdict?.originalMessageId).toBe(ORIGINAL);
    }
  });

  it('REPORT_SENDER_NAMES: each display name (with or without an address) makes mayBeReport true', async () => {
    for (const name of REPORT_SENDER_NAMES) {
      const { hints, verdict } = await read(plain(`"${name}" <bounces@mx.initech.example>`, 'Notice', `550 5.1.1 no such user\n\n${ORIG_HEADERS}`), null);
      expect(mayBeReport(hints), name).toBe(true);
      expect(verdict?.kind, name).toBe('bounce');
    }
  });

  it('REPORT_AUTO_SUBMITTED and REPORT_PART_TYPES make mayBeReport true on headers and structure alone', () => {
    const base: ReportHints = {
      from: 'news@initech.example',
      fromName: 'News',
      returnPath: 'news@initech.example',
      subject: 'Hello',
      autoSubmitted: null,
      failedRecipients: false,
      contentType: 'multipart/mixed',
      reportType: null,
      partTypes: ['multipart/mixed', 'text/plain'],
    };
    expect(mayBeReport(base)).toBe(false);
    for (const v of REPORT_AUTO_SUBMITTED) expect(mayBeReport({ ...base, autoSubmitted: `${v} (failure)` }), v).toBe(true);
    expect(mayBeReport({ ...base, autoSubmitted: 'auto-replied' })).toBe(false);
    for (const t of REPORT_PART_TYPES) expect(mayBeReport({ ...base, partTypes: [...base.partTypes, t] }), t).toBe(true);
    expect(mayBeReport({ ...base, contentType: 'multipart/report' })).toBe(true);
    expect(mayBeReport({ ...base, returnPath: '' })).toBe(true);
    expect(mayBeReport({ ...base, failedRecipients: true })).toBe(true);
    expect(mayBeReport({ ...base, from: null, fromName: 'MAILER-DAEMON' })).toBe(true);
    expect(mayBeReport({ ...base, from: 'staff@hotmail.example' })).toBe(true);
  });

  for (const sys of MAIL_SYSTEM_RULES) {
    it(`MAIL_SYSTEM_RULES ${sys.system}: each failure phrase is a bounce, each returned marker gives the Message-ID, each delay phrase is delayed`, async () => {
      for (const phrase of sys.failure) {
        const { verdict } = await read(plain('MAILER-DAEMON <>', 'Notice', `${phrase}\n\n  pat@initech.example\n\n${ORIG_HEADERS}`), null);
        expect(verdict?.kind, phrase).toBe('bounce');
        expect(verdict?.evidence.toLowerCase(), phrase).toContain(`${sys.system}: ${phrase}`);
        expect(verdict?.originalMessageId).toBe(ORIGINAL);
      }
      for (const marker of sys.returned) {
        // The returned message's own text says "delay" and "user unknown": it is cut at the marker and never read.
        const body = `${sys.failure[0]}\n\n${marker}\n\n${ORIG_HEADERS}\n\nwill retry; warning: could not send; user unknown`;
        const { verdict } = await read(plain('MAILER-DAEMON <>', 'Notice', body), null);
        expect(verdict?.kind, marker).toBe('bounce');
        expect(verdict?.originalMessageId, marker).toBe(ORIGINAL);
      }
      for (const phrase of sys.delay ?? []) {
        const { verdict } = await read(plain('MAILER-DAEMON <>', 'Notice', `${phrase}\n\n${ORIG_HEADERS}`), null);
        expect(verdict?.kind, phrase).toBe('delayed');
        expect(verdict?.originalMessageId).toBe(ORIGINAL);
      }
    });
  }

  for (const lang of LANGUAGE_RULES) {
    it(`LANGUAGE_RULES ${lang.language}: each failure phrase in a subject is a bounce and flags the message; each delay phrase is delayed`, async () => {
      for (const phrase of lang.failure) {
        const { hints, verdict } = await read(plain('MAILER-DAEMON <>', `${phrase}: Quick question`, ORIG_HEADERS), null);
        expect(verdict?.kind, phrase).toBe('bounce');
        expect(verdict?.evidence, phrase).toContain(`${lang.language}: `);
        expect(mayBeReport({ ...hints, from: 'someone@initech.example', fromName: null }), phrase).toBe(true);
      }
      for (const phrase of lang.delay) {
        const { verdict } = await read(plain('MAILER-DAEMON <>', `${phrase}: Quick question`, ORIG_HEADERS), null);
        expect(verdict?.kind, phrase).toBe('delayed');
      }
    });
  }

  for (const rule of REASON_RULES) {
    it(`REASON_RULES ${rule.reason} (${rule.severity}): each phrase and each status gives the reason and its severity`, async () => {
      for (const phrase of rule.phrases) {
        for (const cls of ['5', '4']) {
          const { verdict } = await read(dsn([block('failed', `${cls}.0.0`, `smtp; ${cls}50 ${phrase}`)]));
          expect(verdict?.kind, phrase).toBe('bounce');
          if (verdict?.kind !== 'bounce') continue;
          expect(verdict.reason, phrase).toBe(rule.reason);
          expect(verdict.severity, `${phrase} ${cls}`).toBe(rule.severity === 'status' ? (cls === '5' ? 'hard' : 'soft') : rule.severity);
        }
      }
      for (const detail of rule.statuses) {
        const { verdict } = await read(dsn([block('failed', `5.${detail}`)]));
        expect(verdict?.kind === 'bounce' && verdict.reason, detail).toBe(rule.reason);
      }
    });
  }

  it('a plain-text bounce in German, French, Japanese, Russian: the subject and text alone (no English anywhere)', async () => {
    const cases = [
      ['Unzustellbar: Quick question', 'Die Nachricht konnte nicht zugestellt werden.'],
      ['Non remis : Quick question', "Votre message n'a pas pu être remis."],
      ['配信失敗: Returned mail', 'メールを配信できませんでした。'],
      ['Недоставленное сообщение', 'Ваше письмо не может быть доставлено.'],
    ];
    for (const [subject, text] of cases) {
      const { hints, verdict } = await read(plain('Mailsystem <noreply@mx.initech.example>', subject, `${text}\n\n550 5.1.1\n\n${ORIG_HEADERS}`), null);
      expect(mayBeReport(hints), subject).toBe(true);
      expect(verdict?.kind, subject).toBe('bounce');
      expect(verdict?.originalMessageId).toBe(ORIGINAL);
    }
  });

  it('STATUS_PART_TYPES and RETURNED_PART_TYPES: each is read, attached or inline', async () => {
    for (const t of STATUS_PART_TYPES) {
      const { verdict } = await read(dsn([block('failed', '5.1.1')], t));
      expect(verdict?.kind, t).toBe('bounce');
    }
    for (const t of RETURNED_PART_TYPES) {
      for (const disposition of ['inline', 'attachment']) {
        const src = `From: MAILER-DAEMON@mx.acme.example\nTo: dana@acme.example\nSubject: Returned\nMessage-ID: <d-2@mx.acme.example>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/plain\n\nDelivery failed: 550 5.1.1 user unknown\n\n--B\nContent-Type: ${t}\nContent-Disposition: ${disposition}\n\n${ORIG_HEADERS}\n\nHi Pat,\n\n--B--\n`;
        const { verdict } = await read(src, null);
        expect(verdict?.kind, t).toBe('bounce');
        expect(verdict?.originalMessageId, `${t} ${disposition}`).toBe(ORIGINAL);
      }
    }
  });

  it('FEEDBACK_TYPE_RULES: every type is a complaint verdict with its type; opt-out types set optOut; COMPLAINT_FEEDBACK_TYPES agrees', async () => {
    for (const [type, rule] of Object.entries(FEEDBACK_TYPE_RULES)) {
      const src = `From: fbl@initech.example\nTo: dana@acme.example\nSubject: report\nMessage-ID: <f-1@initech.example>\nMIME-Version: 1.0\nContent-Type: multipart/report; report-type=feedback-report; boundary="B"\n\n--B\nContent-Type: text/plain\n\nA report.\n\n--B\nContent-Type: message/feedback-report\n\nFeedback-Type: ${type}\nVersion: 1\n\n--B\nContent-Type: message/rfc822\n\n${ORIG_HEADERS}\n\nHi\n\n--B--\n`;
      const { verdict } = await read(src, null);
      expect(verdict).toMatchObject({ kind: 'complaint', format: 'arf', feedbackType: type, optOut: rule.optOut, originalMessageId: ORIGINAL });
      expect(COMPLAINT_FEEDBACK_TYPES.has(type), type).toBe(rule.complaint);
    }
  });

  it('JMRP_SENDER_DOMAINS: a JMRP layout from each is a complaint; the same layout from anyone else, with another subject, is not', async () => {
    const jmrp = (from: string, subject: string) =>
      `From: ${from}\nTo: dana@acme.example\nSubject: ${subject}\nMessage-ID: <j-1@x.example>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: message/rfc822\nContent-Disposition: inline\n\nX-HmXmrOriginalRecipient: pat@initech.example\n${ORIG_HEADERS}\n\nHi\n\n--B--\n`;
    for (const label of JMRP_SENDER_DOMAINS) {
      const { verdict } = await read(jmrp(`staff@${label}.example`, 'FYI'), null);
      expect(verdict, label).toMatchObject({ kind: 'complaint', format: 'jmrp', feedbackType: 'abuse', optOut: false, originalMessageId: ORIGINAL });
    }
    expect((await read(jmrp('someone@initech.example', 'complaint about message from 192.0.2.1'), null)).verdict?.kind).toBe('complaint');
    expect((await read(jmrp('someone@initech.example', 'FYI'), null)).verdict?.kind).not.toBe('complaint');
  });
});

describe('RFC 3464 semantics', () => {
  it('Action: failed is final whatever the class; delayed is not; delivered, relayed, expanded are never failures', async () => {
    expect((await read(dsn([block('failed', '4.4.1')]))).verdict).toMatchObject({ kind: 'bounce', severity: 'soft', action: 'failed', status: '4.4.1' });
    expect((await read(dsn([block('delayed', '4.4.1')]))).verdict).toMatchObject({ kind: 'delayed', action: 'delayed' });
    for (const action of ['delivered', 'relayed', 'expanded'])
      expect((await read(dsn([block(action, '2.0.0')]))).verdict, action).toMatchObject({ kind: 'delivered', action });
    // A relayed block with a (wrong) 5.x.x status is still not a failure: the action decides.
    expect((await read(dsn([block('relayed', '5.0.0')]))).verdict?.kind).toBe('delivered');
  });

  it('several recipients: the most severe block wins (hard > soft > delayed > delivered)', async () => {
    expect((await read(dsn([block('relayed', '2.0.0'), block('delayed', '4.4.1')]))).verdict?.kind).toBe('delayed');
    expect((await read(dsn([block('delayed', '4.4.1'), block('failed', '4.2.2'), block('relayed', '2.0.0')]))).verdict).toMatchObject({
      kind: 'bounce',
      severity: 'soft',
      reason: 'mailbox_full',
    });
    expect((await read(dsn([block('failed', '4.2.2'), block('failed', '5.1.1')]))).verdict).toMatchObject({
      kind: 'bounce',
      severity: 'hard',
      status: '5.1.1',
    });
  });

  it("the report's own Message-ID is never the original's; with none, a threaded report falls back to In-Reply-To", async () => {
    const own = `From: MAILER-DAEMON <>\nTo: dana@acme.example\nSubject: Mail delivery failed\nMessage-ID: <own-1@mx.acme.example>\nContent-Type: text/plain\n\n550 5.1.1 user unknown\n\nMessage-ID: <own-1@mx.acme.example>\n`;
    expect((await read(own, null)).verdict).toMatchObject({ kind: 'bounce', originalMessageId: null });
    const threaded = own.replace('Content-Type', `In-Reply-To: <${ORIGINAL}>\nContent-Type`);
    expect((await read(threaded, null)).verdict).toMatchObject({ kind: 'bounce', originalMessageId: ORIGINAL });
  });

  it('arf.ts reads text/rfc822-header and a bare Message-ID (Sisimai arf-12)', () => {
    const src = readFileSync(join(FIXTURES, 'k07-complaint-jmrp-or-arf-optout', 'k07-arf-opt-out-rfc822-header.eml'));
    expect(readFeedbackReport(src)).toEqual({ feedbackType: 'opt-out', originalMessageId: ORIGINAL });
  });
});

describe('hostile inputs stay bounded (< 1 s each, readReport and the MIME walk alone)', () => {
  const timed = async (name: string, source: Buffer) => {
    const mail = await simpleParser(source, OPTIONS);
    const hints = reportHintsOf(mail, source);
    const { ms } = bestOfThree(() => {
      readReport(mail, source, { ...hints, sentTo: SENT_TO });
      walkMime(source);
      mayBeReport({ ...hints, subject: 'x'.repeat(2_000_000) });
    });
    expect(ms, name).toBeLessThan(1000);
    if (process.env.REPORTS_TIMES) console.log(`${name}: ${ms.toFixed(1)} ms`);
    return ms;
  };
  const head = 'From: MAILER-DAEMON <>\r\nTo: dana@acme.example\r\nSubject: Mail delivery failed\r\nMessage-ID: <h@x>\r\n';

  it('2 MB on one line: codes, statuses, brackets, phrases, header-looking text', async () => {
    const lines = [
      '550 5.1.1 '.repeat(200_000),
      'Message-ID: <'.repeat(150_000),
      '<'.repeat(2_000_000),
      'could not be delivered '.repeat(90_000),
      'a'.repeat(2_000_000),
      '5.5.5.5.5.5.5.5.'.repeat(125_000),
      '=' + '=3D'.repeat(600_000),
    ];
    for (const line of lines) await timed(line.slice(0, 20), Buffer.from(`${head}Content-Type: text/plain\r\n\r\n${line}\r\n`));
  });

  it('many parts, deep nesting, a boundary that never closes, a 2 MB delivery-status part, a 1 MB header line', async () => {
    // mailparser itself refuses more than 1,000 parts (the watcher records such a message as unparseable): 900 here,
    // and the MIME walk alone over 20,000.
    const parts = (n: number) =>
      Buffer.from(
        `${head}Content-Type: multipart/mixed; boundary="b"\r\n\r\n${'--b\r\nContent-Type: message/delivery-status\r\n\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n'.repeat(n)}`,
      );
    await timed('many parts', parts(900));
    const many = parts(20_000);
    const walked = bestOfThree(() => walkMime(many));
    expect(walked.out.types.length).toBeLessThanOrEqual(200);
    expect(walked.ms).toBeLessThan(1000);
    let nested = 'Content-Type: text/plain\r\n\r\nx\r\n';
    for (let i = 0; i < 30; i++) nested = `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n${nested}--n${i}--\r\n`;
    await timed('nested', Buffer.from(`${head}${nested}`));
    const status = `${head}Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n${'Action: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 user unknown\r\n\r\n'.repeat(40_000)}`;
    await timed('status', Buffer.from(status));
    await timed('header line', Buffer.from(`${head}X-Long: ${'a:'.repeat(500_000)}\r\nContent-Type: text/plain\r\n\r\nx\r\n`));
  });
});
