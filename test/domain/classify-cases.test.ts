/**
 * The real cases of issue 38 for the classifier (test/fixtures/inbound/k11…k15, the shared case first in each): the
 * person's new words (the text before the quote) get the expected label; a localized auto-reply subject (k13) is
 * recognised; an auto-reply marked only by a header (k14) is out_of_office whatever its boilerplate says. The end-to-end
 * verdicts (Dovecot, engine pass) are test/email/inbound-cases.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { autoReplySubject, classifyReplyText } from '../../src/domain/classify.js';

interface Expected {
  verdict: 'unsubscribe' | 'out_of_office' | 'left_company' | 'reply';
  label?: string;
  replacement?: string;
  textIncludes?: string;
  textExcludes?: string[];
}

const BASE = new URL('../fixtures/inbound/', import.meta.url);
const KINDS = [
  'k11-non-english-stop-request',
  'k12-typographic-apostrophe',
  'k13-localised-auto-reply-subject',
  'k14-autoresponder-headers',
  'k15-leaver-notice',
];
const SHARED_NAMES: Record<string, string> = {
  k11: 'k11-non-english-stop-request-not-opt-out.eml',
  k12: 'k12-typographic-apostrophe-defeats-rules.eml',
  k13: 'k13-localised-auto-reply-subject-not-recognised.eml',
  k14: 'k14-x-autoresponder-header-not-read.eml',
  k15: 'k15-leaver-notice-snoozed-and-resumed.eml',
};

/** Headers that mark an auto-reply (RFC 3834 and the non-standard ones autoresponders write). */
const AUTO_HEADER =
  /^(?:Auto-Submitted:[ \t]*auto-(?:replied|generated)|X-Autoresponder:|X-Autoreply:|X-Autorespond:|X-Auto-Response-Suppress:|Precedence:[ \t]*auto_reply)/im;

/** Where the quoted thread (or the client's signature) starts, in the languages of the cases. */
const QUOTE_START =
  /^(?:>|(?:On|El|Op|Am|Le|Il|Em|Den) .*(?:wrote|escribió|schreef|schrieb|a écrit|ha scritto|escreveu|skrev)|.*\bskrev .*:$|\d{4}\/\d{1,2}\/\d{1,2} .*wrote:|(?:From|De|Von|Od|Fra|Från|Van|Da|差出人) ?:|(?:Sent from|Skickat från|Enviado desde) my|Skickat från min)/m;

function newText(text: string): string {
  const m = QUOTE_START.exec(text);
  return (m ? text.slice(0, m.index) : text).trim();
}

function headerBlock(raw: string): string {
  const i = raw.search(/\r?\n\r?\n/);
  return i < 0 ? raw : raw.slice(0, i);
}

const messageIds = new Map<string, string>();

for (const kind of KINDS) {
  const dir = new URL(`${kind}/`, BASE);
  const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as Record<string, Expected>;
  const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
  const prefix = kind.slice(0, 3);

  describe(`${kind}`, () => {
    it('has the shared case and at least three more, each with its expectation; README names sources and licence', () => {
      expect(files).toContain(SHARED_NAMES[prefix]);
      expect(files.length).toBeGreaterThanOrEqual(4);
      expect(files.every((f) => f.startsWith(`${prefix}-`))).toBe(true);
      expect([...files].sort()).toEqual(Object.keys(expected).sort());
      const readme = readFileSync(new URL('README.md', dir), 'utf8');
      expect(readme).toContain('licence');
      for (const f of files) expect(readme, f).toContain(f);
      // The shared case is copied byte for byte.
      expect(readFileSync(new URL(SHARED_NAMES[prefix], dir), 'latin1')).toMatch(/^From: Pat Lee <pat@initech\.example>/);
    });

    for (const file of files) {
      const want = expected[file];
      it(`${file}: ${want.verdict}${want.label ? ` (${want.label})` : ''}`, async () => {
        const source = readFileSync(new URL(file, dir));
        const head = headerBlock(source.toString('latin1'));
        // The shared convention: a reply to our message, from the lead to the sender, with its own Message-ID.
        expect(head).toMatch(/^In-Reply-To: <sent-0001@acme\.example>$/m);
        expect(head).toMatch(/^References: .*<sent-0001@acme\.example>/m);
        expect(head).toMatch(/^From: .*<pat@initech\.example>$/m);
        expect(head).toMatch(/^To: .*<dana@acme\.example>$/m);
        const id = /^Message-ID: *(<[^>]+>)/im.exec(head)?.[1];
        expect(id).toBeTruthy();
        expect(messageIds.get(id!.toLowerCase()) ?? file, `${file} reuses the Message-ID of another file`).toBe(file);
        messageIds.set(id!.toLowerCase(), file);

        const mail = await simpleParser(source);
        const subject = mail.subject ?? '';
        const text = mail.text ?? '';
        const autoReply = AUTO_HEADER.test(head);
        const own = newText(text);
        expect(own.length).toBeGreaterThan(0);
        if (want.textIncludes) expect(own).toContain(want.textIncludes);
        for (const no of want.textExcludes ?? []) expect(own).not.toContain(no);

        if (prefix === 'k13') {
          // The subject is the only sign: no auto-reply header.
          expect(autoReply).toBe(false);
          expect(autoReplySubject(subject), subject).toMatchObject({ label: 'out_of_office' });
          expect(classifyReplyText(own, { subject }).label).toBe('out_of_office');
          return;
        }
        if (prefix === 'k14') {
          // The header is the only sign: the subject is an ordinary one.
          expect(autoReply).toBe(true);
          expect(autoReplySubject(subject)).toBeNull();
          const v = classifyReplyText(own, { subject, autoReply });
          expect(v.label).toBe('out_of_office');
          expect(v.needsReview).toBe(false);
          return;
        }
        // k11, k12, k15: the person's words alone decide, and so do they with the message's own signs.
        const label = want.label ?? (want.verdict === 'reply' ? undefined : want.verdict);
        expect(label).toBeTruthy();
        for (const v of [classifyReplyText(own), classifyReplyText(own, { subject, autoReply })]) {
          expect(v.label, own).toBe(label);
          expect(v.needsReview, own).toBe(false);
          if (want.replacement) expect(v.replacement?.addresses).toContain(want.replacement);
        }
      });
    }
  });
}
