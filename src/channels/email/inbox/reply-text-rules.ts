/**
 * The words and markup reply-text.ts cuts a reply at, as data: one entry per language for the plain-text quote
 * headers mail clients write, and the HTML containers they wrap a quoted thread in. The tests walk these tables
 * (test/email/reply-text.test.ts), so a word added here is tested by being added.
 *
 * Sources: what the clients emit (Outlook desktop/OWA/mobile, Gmail, Apple Mail, Thunderbird, Yahoo), checked against
 * the public test corpora of mailgun/talon (Apache-2.0) and crisp-oss/email-reply-parser (MIT).
 */
import { WESTERN_EUROPE } from './reply-text-rules/western-europe.js';
import { NORTHERN_CENTRAL_EUROPE } from './reply-text-rules/northern-central-europe.js';
import { EAST_ASIA } from './reply-text-rules/east-asia.js';
import { CENTRAL_EASTERN_EUROPE } from './reply-text-rules/central-eastern-europe.js';
import type { QuoteLanguage } from './reply-text-rules/quote-language.js';

export type { QuoteLanguage } from './reply-text-rules/quote-language.js';

/** Every language's quote headers, one entry per language. */
export const QUOTE_LANGUAGES: readonly QuoteLanguage[] = [...WESTERN_EUROPE, ...NORTHERN_CENTRAL_EUROPE, ...EAST_ASIA, ...CENTRAL_EASTERN_EUROPE];

/**
 * HTML containers a client wraps the quoted thread in. `quote`: the container is the quote (the text around it
 * stays: a bottom-posted or interleaved answer); `rest`: the quote starts here and everything after it in the document
 * is quoted too (Outlook puts the quoted body after its header block, not inside it).
 */
export const HTML_QUOTE_MARKUP = {
  /** Gmail, Thunderbird (the attribution above its blockquote), Yahoo, Proton, Zoho, AOL. */
  quoteClasses: [
    'gmail_quote',
    'gmail_quote_container',
    'gmail_attr',
    'moz-cite-prefix',
    'yahoo_quoted',
    'protonmail_quote',
    'zmail_extra',
    'aolReplyedMessage',
  ],
  /** Yahoo numbers its container: `yahoo_quoted_1234567890`. */
  quoteIdPrefixes: ['yahoo_quoted'],
  /** Outlook on the web and desktop, new Outlook, Hotmail's `<hr id="stopSpelling">`. */
  restIds: ['divRplyFwdMsg', 'appendonsend', 'mail-editor-reference-message-container', 'stopSpelling', 'OLK_SRC_BODY_SECTION'],
  /** Outlook desktop's header block: `<div style="border:none;border-top:solid #E1E1E1 1.0pt;…">` (#B5C4DF before 2013). */
  outlookHeaderBorders: ['#e1e1e1', '#b5c4df', 'rgb(225,225,225)', 'rgb(181,196,223)'],
  /** Signatures the client marks (`<div class="gmail_signature">`): dropped, not counted as a quote. */
  signatureClasses: ['gmail_signature', 'moz-signature'],
  signatureIds: ['Signature', 'signature'],
} as const;

/** Apple Mail's and others' line before a forwarded message (a forward inside a reply is not the person's words). */
export const FORWARD_INTROS: readonly string[] = [
  'Begin forwarded message:',
  'Anfang der weitergeleiteten Nachricht:',
  'Début du message réexpédié :',
  'Début du message réexpédié:',
  'Inicio del mensaje reenviado:',
  'Inizio messaggio inoltrato:',
  'Início da mensagem reencaminhada:',
  'Begin doorgestuurd bericht:',
  'Vidarebefordrat mejl:',
  'Videresendt e-mail:',
  'Välitetty viesti alkaa:',
  'Początek przekazywanej wiadomości:',
  '転送されたメッセージ:',
  '转发的邮件：',
];

/** A text/plain part that only says to read the HTML one. */
export const TEXT_PART_STUBS: readonly string[] = [
  'This message is HTML',
  'This is an HTML message',
  'This message is in HTML format',
  'This is a multi-part message in MIME format',
  'Your email client does not support HTML',
  'Your e-mail client does not support HTML',
  'To view this message, please use an HTML',
  'This email requires an HTML',
];
