import { readdirSync, readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { HTML_SCAN_CHARS, replyTextOf, TEXT_SCAN_CHARS, visibleReplyText } from '../../src/channels/email/inbox/reply-text.js';
import { FORWARD_INTROS, HTML_QUOTE_MARKUP, QUOTE_LANGUAGES } from '../../src/channels/email/inbox/reply-text-rules.js';
import { bestOfThree } from '../helpers/bounded-time.js';

// Issue 38 §3 "A reply's own words": the new text of a reply, from its text part or its HTML, without our quoted
// message, in the languages and clients people write from. Pure: no database, no server.

const OURS = '> Hi Pat,\n>\n> Would you be open to a 15-minute call next week to see whether Acme could help Initech with onboarding?\n>\n> Best,\n> Dana';
const OURS_UNMARKED = 'Hi Pat,\n\nWould you be open to a 15-minute call next week to see whether Acme could help Initech with onboarding?\n\nBest,\nDana';
const QUOTE_HTML = '<div>Hi Pat,<br><br>Would you be open to a 15-minute call next week?<br><br>Best,<br>Dana</div>';
const WORDS = 'No thanks, we are not interested.';

/** The cut must keep the person's words and drop every trace of our message. */
function expectOwnWords(text: string, words = WORDS) {
  expect(text).toBe(words);
}

describe('real cases: the four kinds, each file parsed as the watcher parses it', () => {
  const base = new URL('../fixtures/inbound/', import.meta.url);
  const kinds = ['k08-html-only-reply', 'k09-html-reply-quote', 'k10-outlook-quote-header-language', 'k16-bottom-posted'];
  for (const kind of kinds) {
    const dir = new URL(`${kind}/`, base);
    const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as Record<
      string,
      { verdict: 'reply' | 'unsubscribe'; textIncludes: string; textExcludes: string[] }
    >;
    const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));

    it(`${kind}: the shared case and at least three more, each with its expectation`, () => {
      expect(files.filter((f) => !f.startsWith(kind.slice(0, 3)) || f.length < 5)).toEqual([]);
      expect(files.length).toBeGreaterThanOrEqual(4);
      expect(files.sort()).toEqual(Object.keys(expected).sort());
      expect(readFileSync(new URL('README.md', dir), 'utf8')).toContain('licence');
    });

    for (const file of files) {
      it(`${kind}/${file}: ${expected[file]?.verdict}: "${expected[file]?.textIncludes}"`, async () => {
        const source = readFileSync(new URL(file, dir));
        const raw = source.toString('latin1');
        // The shared convention: a reply to our message, from the lead to the sender, quoting our words.
        expect(raw).toMatch(/^In-Reply-To: <sent-0001@acme\.example>$/m);
        expect(raw).toMatch(/^From: .*<pat@initech\.example>$/m);
        expect(raw).toMatch(/^To: .*<dana@acme\.example>$/m);
        const mail = await simpleParser(source, { skipHtmlToText: true });
        const got = replyTextOf({ text: mail.text ?? null, html: typeof mail.html === 'string' ? mail.html : null });
        const want = expected[file];
        expect(got.text).toContain(want.textIncludes);
        for (const no of want.textExcludes) expect(got.text).not.toContain(no);
        expect(got.quoteCut).toBe(true);
        expect(got.source).not.toBe('none');
      });
    }
  }

  it('k16: an interleaved reply keeps every line of the person, in order', async () => {
    const source = readFileSync(new URL('k16-bottom-posted/k16-interleaved-answers.eml', base));
    const mail = await simpleParser(source, { skipHtmlToText: true });
    expect(replyTextOf({ text: mail.text ?? null, html: null }).text).toBe('Not next week, I am travelling.\n\nPossibly. Send me a one-page summary first.');
  });

  it('the shared cases give exactly the person\'s words (k08, k09, k10; k16 keeps the "Pat" under them)', async () => {
    const shared = {
      'k08-html-only-reply/k08-html-only-reply-text-lost.eml': 'Please remove me from your list.',
      'k09-html-reply-quote/k09-html-only-reply-quote-kept.eml': 'Who is this, and where did you get my address?',
      'k10-outlook-quote-header-language/k10-outlook-quote-header-other-language-not-cut.eml': 'Nej tak, vi er ikke interesserede.',
      'k16-bottom-posted/k16-bottom-posted-reply-quote-kept.eml': 'Who is this, and where did you get my address?\n\nPat',
    };
    for (const [file, words] of Object.entries(shared)) {
      const mail = await simpleParser(readFileSync(new URL(file, base)), { skipHtmlToText: true });
      expect(replyTextOf({ text: mail.text ?? null, html: typeof mail.html === 'string' ? mail.html : null }).text, file).toBe(words);
    }
  });
});

describe('plain text: the header table, language by language', () => {
  for (const l of QUOTE_LANGUAGES) {
    it(`${l.lang}: Outlook's header block, every label of the table, ASCII and full-width colons`, () => {
      for (const from of l.from)
        for (const sent of l.sent)
          for (const colon of [':', ' :', '：']) {
            const block = `${from}${colon} Dana <dana@acme.example>\n${sent}${colon} 23.11.2026 09:12\n${l.to[0]}${colon} Pat Lee <pat@initech.example>\n${l.subject[0]}${colon} Quick question`;
            expectOwnWords(visibleReplyText(`${WORDS}\n\n${block}\n\n${OURS_UNMARKED}`));
            // Bold labels as Gmail writes an Outlook block it quotes, and the Outlook separator line above it.
            expectOwnWords(
              visibleReplyText(`${WORDS}\n\n________________________________\n*${from}${colon}* Dana\n*${sent}${colon}* Monday\n\n${OURS_UNMARKED}`),
            );
          }
      for (const to of l.to)
        for (const subject of l.subject)
          for (const cc of l.cc)
            expectOwnWords(
              visibleReplyText(`${WORDS}\n\n${l.from[0]}: Dana <dana@acme.example>\n${to}: Pat\n${cc}: Sam\n${subject}: Quick question\n\n${OURS_UNMARKED}`),
            );
    });

    it(`${l.lang}: "-----Original Message-----" and the forwarded-message separators`, () => {
      for (const sep of l.separators) {
        expectOwnWords(visibleReplyText(`${WORDS}\n\n-----${sep}-----\n${OURS_UNMARKED}`));
        expectOwnWords(visibleReplyText(`${WORDS}\n\n---------- ${sep} ---------\n${OURS_UNMARKED}`));
      }
    });

    it(`${l.lang}: each attribution line, above the quote, below it (bottom-posting), and over unmarked text`, () => {
      expect(l.attributionExamples.length).toBeGreaterThan(0);
      for (const attribution of l.attributionExamples) {
        expectOwnWords(visibleReplyText(`${WORDS}\n\n${attribution}\n${OURS}\n`));
        expectOwnWords(visibleReplyText(`${attribution}\n${OURS}\n\n${WORDS}\n`));
        expectOwnWords(visibleReplyText(`${WORDS}\n\n${attribution}\n\n${OURS_UNMARKED}`));
      }
    });

    it(`${l.lang}: mobile footers, disclaimers and closings after the words end them`, () => {
      for (const footer of l.mobileFooters) expectOwnWords(visibleReplyText(`${WORDS}\n\n${footer.replace('…', 'iPhone')}\n\n${OURS_UNMARKED}`));
      for (const disclaimer of l.disclaimers) expectOwnWords(visibleReplyText(`${WORDS}\n\n${disclaimer} ${'and may be privileged. '.repeat(40)}\n\n${OURS}`));
      for (const closing of l.valedictions) expectOwnWords(visibleReplyText(`${WORDS}\n\n${closing},\nPat Lee\nInitech`));
    });
  }

  it('"Begin forwarded message:" and its translations end the words', () => {
    for (const intro of FORWARD_INTROS) expectOwnWords(visibleReplyText(`${WORDS}\n\n${intro}\n\n${OURS_UNMARKED}`));
  });

  it('attributions wrapped over lines, as Gmail and others write them', () => {
    const wrapped = [
      'On Mon, Nov 23, 2026 at 9:12 AM Dana <\ndana@acme.example> wrote:',
      'pe 20. lokakuuta 2017 klo 17.50 John Coe\n<s.testtesttest.i@test.com> kirjoitti:',
      'tir. 18. apr. 2017 kl. 13:09 skrev Test user <test@example.com\n>:',
      'Em 10 de julho de 2017 às 16:32:35, John Doe - Stripe (\ncontact@stripe.com) escreveu:',
      '2014-10-17 11:28 GMT+03:00 Bob <\nbob@example.com>:',
      'On Wed, Dec 9, Mister Example\n<mrmister@example.com>\nwrote:',
      // No colon (email-reply-parser's email_24 fixture).
      'On Wed, 14 Nov 2018 08:14:43 -0200 John Doe <john@doe.com> wrote',
    ];
    for (const attribution of wrapped) {
      expectOwnWords(visibleReplyText(`${WORDS}\n\n${attribution}\n${OURS}`));
      expectOwnWords(visibleReplyText(`${attribution}\n${OURS}\n\n${WORDS}`));
    }
  });

  it('a rule line above the header block goes with it', () => {
    expectOwnWords(
      visibleReplyText(`${WORDS}\n\n\n ------------------------------\n\n*From:* Dana [mailto:dana@acme.example]\n*Sent:* Monday\n\n${OURS_UNMARKED}`),
    );
    expectOwnWords(
      visibleReplyText(
        `${WORDS}\n\n====\n\nMessage du : 23/11/2026 09:12\nDe : "Dana" <dana@acme.example>\nA : pat@initech.example\nCopie à : \nSujet : Quick question\n\n${OURS_UNMARKED}`,
      ),
    );
  });

  it("the person's own lines that look like rules stay", () => {
    const own = [
      'On average, this parser works well.\nOn a separate note, I wanted to mention that performance is great.',
      'On Wed, 14 Nov I wrote the plan',
      'On Monday I can talk.\nI wrote: nothing yet.',
      'From: my side, fine.\nSent from the airport: yes, Tuesday works.',
      'Subject: pricing\nTo: the point, we need a quote.',
      'Thanks for writing,\nwe will get back to you.',
      '-- this is not a signature, it is a dash',
      'Our policy: the information contained in this offer is public.',
    ];
    for (const text of own) expect(visibleReplyText(text)).toBe(text);
    // Two lines of words, then a "Sent from" line that is a sentence: kept.
    expect(visibleReplyText(`${WORDS}\nSent from my office, call me on Tuesday.`)).toBe(`${WORDS}\nSent from my office, call me on Tuesday.`);
    // A signature after "-- " goes, a closing with no words before it stays.
    expect(visibleReplyText(`${WORDS}\n\n-- \nPat Lee\nInitech`)).toBe(WORDS);
    expect(visibleReplyText('Thanks,\nPat')).toBe('Thanks,\nPat');
  });

  it('when the cut leaves nothing, the whole text (trimmed) comes back; blank stays blank', () => {
    const onlyQuote = `On Mon, Dana <dana@acme.example> wrote:\n${OURS}`;
    expect(visibleReplyText(`  ${onlyQuote}\n\n`)).toBe(onlyQuote);
    expect(replyTextOf({ text: onlyQuote, html: null })).toEqual({ text: onlyQuote, source: 'text', quoteCut: false });
    expect(visibleReplyText(' \n\t\n')).toBe('');
  });

  it('the old contract: the quote removed whatever the length of the new text; CRLF read as LF', () => {
    expect(visibleReplyText('Sounds good, Tuesday?\r\n\r\nOn Mon, Nov 23, 2026 at 10:00 AM Dana <dana@acme.example> wrote:\r\n> Hi Bob\r\n')).toBe(
      'Sounds good, Tuesday?',
    );
    const long = 'word '.repeat(2_000).trim();
    expect(visibleReplyText(`${long}\n\n-----Original Message-----\nFrom: Dana\nHi`)).toBe(long);
    expect(visibleReplyText(`${long}\n\nOn Mon, Nov 23, 2026 at 10:00 AM Dana <dana@acme.example> wrote:\n> Hi Bob\n`)).toBe(long);
  });
});

describe("HTML: each client's quote container", () => {
  const html = (body: string) => replyTextOf({ text: null, html: `<html><head><style>p{color:red}</style></head><body>${body}</body></html>` });
  const cases: [string, string][] = [
    [
      'Gmail',
      `<div dir="ltr">${WORDS}</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Mon, Dana wrote:<br></div><blockquote class="gmail_quote" style="margin:0 0 0 .8ex">${QUOTE_HTML}</blockquote></div>`,
    ],
    [
      'Outlook on the web',
      `<div>${WORDS}</div><div id="appendonsend"></div><hr style="display:inline-block;width:98%"><div id="divRplyFwdMsg" dir="ltr"><b>From:</b> Dana</div><div>${QUOTE_HTML}</div>`,
    ],
    ['Outlook on the web, quoted ids', `<div>${WORDS}</div><div id="x_divRplyFwdMsg"><b>Od:</b> Dana</div>${QUOTE_HTML}`],
    [
      'Outlook desktop',
      `<p class=MsoNormal>${WORDS}<o:p></o:p></p><div><div style='border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm'><p class=MsoNormal><b>Von:</b> Dana</p></div></div>${QUOTE_HTML}`,
    ],
    ['Outlook 2007', `<p>${WORDS}</p><div style="border:none;border-top:solid #B5C4DF 1.0pt;padding:3.0pt 0in 0in 0in"><p>x</p></div>${QUOTE_HTML}`],
    ['new Outlook', `<div>${WORDS}</div><div id="mail-editor-reference-message-container"><div>${QUOTE_HTML}</div></div>`],
    ['Outlook for Mac', `<div>${WORDS}</div><span id="OLK_SRC_BODY_SECTION"><div>${QUOTE_HTML}</div></span>`],
    [
      'Apple Mail',
      `<div>${WORDS}</div><div><br><blockquote type="cite">On Nov 23, 2026, at 9:12 AM, Dana &lt;dana@acme.example&gt; wrote:<br><br></blockquote></div><blockquote type="cite">${QUOTE_HTML}</blockquote>`,
    ],
    [
      'Thunderbird',
      `${WORDS}<br><div class="moz-cite-prefix">On 23/11/2026 09:12, Dana wrote:<br></div><blockquote type="cite" cite="mid:x">${QUOTE_HTML}</blockquote>`,
    ],
    ['Yahoo', `<div>${WORDS}</div><div id="yahoo_quoted_0123456789" class="yahoo_quoted"><div>On Monday, Dana wrote:</div>${QUOTE_HTML}</div>`],
    ['Yahoo, id only', `<div>${WORDS}</div><div id="yahoo_quoted_0123456789">${QUOTE_HTML}</div>`],
    ['Hotmail', `<div>${WORDS}<hr id="stopSpelling">Date: Mon<br>From: dana@acme.example<br>${QUOTE_HTML}</div>`],
    ['a plain blockquote', `<p>${WORDS}</p><blockquote>${QUOTE_HTML}</blockquote>`],
    [
      'no markup, an Outlook header in text',
      `<p>${WORDS}</p><p><b>De :</b> Dana<br><b>Envoyé :</b> lundi<br><b>À :</b> Pat<br><b>Objet :</b> Quick question</p>${QUOTE_HTML}`,
    ],
  ];
  for (const [client, body] of cases)
    it(`${client}: only the words`, () => {
      expect(html(body)).toEqual({ text: WORDS, source: 'html', quoteCut: true });
    });

  it('a quote above the words (bottom-posting) and between them (interleaving) keeps every word', () => {
    expect(html(`<div class="moz-cite-prefix">On 23/11/2026, Dana wrote:</div><blockquote type="cite">${QUOTE_HTML}</blockquote><p>${WORDS}</p>`).text).toBe(
      WORDS,
    );
    expect(html(`<blockquote type="cite">${QUOTE_HTML}</blockquote><p>One.</p><blockquote type="cite">${QUOTE_HTML}</blockquote><p>Two.</p>`).text).toBe(
      'One.\n\nTwo.',
    );
  });

  it('the table lists each container the cases above use', () => {
    expect(HTML_QUOTE_MARKUP.quoteClasses).toEqual(expect.arrayContaining(['gmail_quote', 'moz-cite-prefix', 'yahoo_quoted']));
    expect(HTML_QUOTE_MARKUP.restIds).toEqual(expect.arrayContaining(['divRplyFwdMsg', 'appendonsend', 'mail-editor-reference-message-container']));
  });

  it("the person's own markup stays: an indent blockquote, links without their address, headings as written, entities decoded", () => {
    expect(html('<p>Yes,</p><blockquote style="margin: 0 0 0 40px; border: none; padding: 0px;">Tuesday at 10</blockquote><p>works.</p>').text).toBe(
      'Yes,\n\nTuesday at 10\n\nworks.',
    );
    expect(html('<h2>Not now</h2><p>See <a href="https://initech.example/x">our policy</a> &amp; don&#8217;t write.</p>').text).toBe(
      'Not now\n\nSee our policy & don’t write.',
    );
    // Signatures the client marks go, without counting as a quote.
    expect(html(`<div>${WORDS}</div><div class="gmail_signature">Pat Lee<br>Initech</div>`)).toEqual({ text: WORDS, source: 'html', quoteCut: false });
  });

  it('the message cannot forge the sentinel marks (private-use characters, raw or as entities)', () => {
    const forged = '\uE000 R \uE000Q &#xE000;R &#57344;Q';
    const got = html(`<p>${WORDS}</p><p>${forged}</p>`);
    expect(got.text.startsWith(WORDS)).toBe(true);
    expect(got.text).toContain('R');
    expect(got.quoteCut).toBe(false);
  });

  it('the text part is preferred; an empty or stub one gives way to the HTML; nothing gives source none', () => {
    const htmlPart = `<div>${WORDS}</div><div class="gmail_quote">${QUOTE_HTML}</div>`;
    expect(replyTextOf({ text: `Text part words.\n\n${OURS}`, html: htmlPart })).toEqual({ text: 'Text part words.', source: 'text', quoteCut: true });
    for (const stub of ['', ' \r\n', 'This message is HTML.', 'Your email client does not support HTML messages.'])
      expect(replyTextOf({ text: stub, html: htmlPart })).toEqual({ text: WORDS, source: 'html', quoteCut: true });
    expect(replyTextOf({ text: 'This message is HTML.', html: '<img src="x.png">' })).toEqual({
      text: 'This message is HTML.',
      source: 'text',
      quoteCut: false,
    });
    expect(replyTextOf({ text: null, html: null })).toEqual({ text: '', source: 'none', quoteCut: false });
    expect(replyTextOf({ text: null, html: '<p> </p>' })).toEqual({ text: '', source: 'none', quoteCut: false });
  });

  it('HTML that is only a quote comes back whole, as the text would', () => {
    expect(html(`<blockquote type="cite">${QUOTE_HTML}</blockquote>`)).toEqual({
      text: 'Hi Pat,\n\nWould you be open to a 15-minute call next week?\n\nBest,\nDana',
      source: 'html',
      quoteCut: false,
    });
  });
});

describe('bounded cost', () => {
  it(`HTML: at most ${HTML_SCAN_CHARS} characters read; 400 KB of hostile markup converts in well under a second`, () => {
    const hostile = [
      '<div>'.repeat(100_000) + WORDS,
      '<blockquote type="cite">'.repeat(60_000) + WORDS,
      `<p>${WORDS}</p>` + '<p>x</p>'.repeat(50_000),
      `<p>${WORDS}</p>` + '<b><i>x</i></b>'.repeat(26_000),
      `<p>${WORDS}</p><table>` + '<tr><td>a</td><td>b</td></tr>'.repeat(14_000) + '</table>',
      `<p>${WORDS}</p>` + '<div class="gmail_quote">'.repeat(16_000),
      `<p>${WORDS}</p><p>` + 'On Mon, Dana wrote: '.repeat(20_000),
    ];
    replyTextOf({ text: null, html: `<p>${WORDS}</p>` }); // warm
    for (const [i, h] of hostile.entries()) {
      expect(h.length).toBeGreaterThanOrEqual(HTML_SCAN_CHARS * 0.9);
      const { ms, out } = bestOfThree(() => replyTextOf({ text: null, html: h }));
      expect(ms, `hostile HTML #${i}`).toBeLessThan(1_000);
      expect(out.text.length).toBeLessThanOrEqual(TEXT_SCAN_CHARS);
    }
    const past = `<p>${WORDS}</p>` + '<p>x</p>'.repeat(HTML_SCAN_CHARS / 8) + '<p>PAST THE LIMIT</p>';
    expect(replyTextOf({ text: null, html: past }).text).not.toContain('PAST THE LIMIT');
  });

  it(`text: at most ${TEXT_SCAN_CHARS} characters read; 100 KB without a newline, or of crafted lines, in well under a second`, () => {
    const hostile = [
      'a'.repeat(TEXT_SCAN_CHARS),
      ' '.repeat(TEXT_SCAN_CHARS - 1) + 'x',
      'On '.repeat(TEXT_SCAN_CHARS / 3) + 'wrote:',
      '-'.repeat(TEXT_SCAN_CHARS - 1) + 'x',
      'Op\nschreef \n\n'.repeat(8_000),
      'On Mon\n'.repeat(TEXT_SCAN_CHARS / 7),
      'From: x\n'.repeat(TEXT_SCAN_CHARS / 8),
      'Sent from my iPhone\n'.repeat(TEXT_SCAN_CHARS / 20),
      'Best,\n'.repeat(TEXT_SCAN_CHARS / 6),
      '> '.repeat(TEXT_SCAN_CHARS / 2),
    ];
    for (const [i, t] of hostile.entries()) {
      const { ms, out } = bestOfThree(() => visibleReplyText(t));
      expect(ms, `hostile text #${i}`).toBeLessThan(1_000);
      expect(out.length).toBeGreaterThan(0);
    }
    expect(visibleReplyText(`${'a'.repeat(TEXT_SCAN_CHARS)}PAST THE LIMIT`)).not.toContain('PAST THE LIMIT');
  });
});
