/** Unit tests of the reply classifier (src/domain/classify.ts) and its rule table (classify-rules.ts). */
import { describe, expect, it } from 'vitest';
import {
  autoReplySubject,
  classifyReply,
  classifyReplyText,
  CONFIDENCE_FLOOR,
  draftReply,
  isStopWord,
  normalizeReplyText,
  sentimentOf,
} from '../../src/domain/classify.js';
import { REPLY_RULES, RULE_LANGUAGES } from '../../src/domain/classify-rules.js';

describe('normalizeReplyText', () => {
  it('folds typographic apostrophes, quotes and dashes to ASCII', () => {
    expect(normalizeReplyText('don’t don‘t don‛t don´t don`t don′t')).toBe("don't don't don't don't don't don't");
    expect(normalizeReplyText('“stop” „halt“ «arrêt» ‹non›')).toBe('"stop" "halt" "arrêt" "non"');
    expect(normalizeReplyText('a – b — c ‐ d − e')).toBe('a - b - c - d - e');
  });
  it('applies NFKC, removes zero-width characters and soft hyphens, collapses whitespace', () => {
    expect(normalizeReplyText('ＳＴＯＰ')).toBe('STOP');
    expect(normalizeReplyText('un\u200Bsub\u00ADscribe\u2060')).toBe('unsubscribe');
    expect(normalizeReplyText('  no\u00A0thanks \n\n\t please  ')).toBe('no thanks please');
    expect(normalizeReplyText('料金はいくらですか？')).toBe('料金はいくらですか?');
  });
});

describe('classifyReplyText', () => {
  it('k12: typographic apostrophes do not defeat the rules', () => {
    expect(classifyReplyText('Please don’t email me again.')).toMatchObject({ label: 'unsubscribe', needsReview: false });
    expect(classifyReplyText('we’re all set')).toMatchObject({ label: 'negative', needsReview: false });
  });

  it('precedence traps', () => {
    expect(classifyReply("not interested, please don't contact me again")).toBe('unsubscribe');
    expect(classifyReply("I'm not the right person, please remove me")).toBe('unsubscribe');
    expect(classifyReply('No thanks. On Mon Dana wrote: > Would you be open to a 15-minute call next week?')).toBe('negative');
    expect(classifyReply('Nej tak, vi er ikke interesserede.')).toBe('negative');
    expect(classifyReply('Pat Lee is no longer with Initech. Automatic reply.')).toBe('left_company');
    expect(classifyReply('I am out of the office. For urgent matters please call me on my mobile.')).toBe('out_of_office');
  });

  it('innocent stop words and "remove" about other things are not opt-outs', () => {
    for (const text of [
      'Stop by our booth next week',
      "Let's do Thursday, and don't stop the demo early",
      'Ich melde mich nächste Woche.',
      'Can you remove the setup fee?',
    ])
      expect(classifyReplyText(text).label, text).not.toBe('unsubscribe');
  });

  it('ambiguous stop phrases are below the floor: a person decides', () => {
    const weak = classifyReplyText('We had to stop the pilot in March.');
    expect(weak).toMatchObject({ label: 'unsubscribe', needsReview: true });
    expect(weak.confidence).toBeLessThan(CONFIDENCE_FLOOR);
    expect(classifyReplyText('Remove')).toMatchObject({ label: 'unsubscribe', needsReview: true });
    // Beside a confident other label, the label stays but goes to review.
    expect(classifyReplyText('Can we stop the trial and talk Tuesday?')).toMatchObject({ label: 'meeting_intent', needsReview: true });
  });

  it('a negated stop phrase does not opt out and lowers confidence', () => {
    const v = classifyReplyText("I don't want to unsubscribe, can you just send these less often?");
    expect(v.label).toBe('question');
    expect(v.needsReview).toBe(true);
    expect(v.evidence.map((e) => e.rule)).toContain('en-unsub-negated');
  });

  it('evidence: rule id, phrase (≤ 80 chars), language; strongest first', () => {
    const v = classifyReplyText('Not interested. Please stop emailing me. Call me never.');
    expect(v.label).toBe('unsubscribe');
    expect(v.evidence[0]).toEqual({ rule: 'en-unsub-stop-verb', phrase: 'stop emailing', language: 'en' });
    expect(v.evidence.map((e) => e.rule)).toContain('en-neg-not-interested');
    for (const e of v.evidence) expect((e.phrase ?? '').length).toBeLessThanOrEqual(80);
    expect(classifyReplyText('👍')).toMatchObject({ label: 'other', evidence: [], needsReview: true });
    expect(classifyReplyText(null)).toMatchObject({ label: 'other', evidence: [], needsReview: false, language: null });
  });

  it('language: detected when tinyld is confident, null for short replies', () => {
    expect(classifyReplyText('Bitte melden Sie mich von Ihrem Verteiler ab. Keine weiteren E-Mails.').language).toBe('de');
    expect(classifyReplyText('Nej tak').language).toBeNull();
    expect(classifyReplyText('請不要再給我發郵件，謝謝您的理解與配合。').language).not.toBe('en');
  });

  it('notIn: a phrase that means something else in the detected language is ruled out', () => {
    // "semester" is a vacation in Swedish, a term of study in English.
    expect(classifyReplyText("We're mid-semester and have no budget. Not interested.").label).toBe('negative');
    expect(classifyReplyText('Jag har semester till och med 4 december med begränsad tillgång till e-post.').label).toBe('out_of_office');
    expect(REPLY_RULES.find((r) => r.id === 'sv-ooo-semester')?.notIn).toContain('en');
  });

  it('auto-reply headers: out_of_office unless a leaver notice, never unsubscribe from boilerplate', () => {
    expect(classifyReplyText('To stop receiving these notifications, reply STOP. Please remove me.', { autoReply: true })).toMatchObject({
      label: 'out_of_office',
      needsReview: false,
    });
    expect(classifyReplyText('Pat Lee is no longer with Initech. Please contact sales@initech.example instead.', { autoReply: true })).toMatchObject({
      label: 'left_company',
      replacement: { addresses: ['sales@initech.example'], names: [] },
    });
    expect(classifyReplyText('Tack för ditt mejl.', { subject: 'Automatiskt svar: Quick question' })).toMatchObject({
      label: 'out_of_office',
      evidence: [{ rule: 'auto-reply-subject', phrase: 'Automatiskt svar', language: 'sv' }],
    });
    expect(classifyReplyText('Please remove me', { subject: 'Re: Quick question' }).label).toBe('unsubscribe');
  });

  it('replacement: who to contact instead (addresses lower-case, at most 5), only for left_company and wrong_person', () => {
    expect(classifyReplyText('Please contact Sales@Initech.example instead, I have left Initech.').replacement).toEqual({
      addresses: ['sales@initech.example'],
      names: [],
    });
    expect(classifyReplyText('my colleague Maria Rossi handles this')).toMatchObject({
      label: 'wrong_person',
      replacement: { addresses: [], names: ['Maria Rossi'] },
    });
    expect(classifyReplyText('I have left Initech. Please contact my colleague Sam Ortiz.').replacement).toEqual({ addresses: [], names: ['Sam Ortiz'] });
    expect(classifyReplyText('Dafür bin ich nicht zuständig. Wenden Sie sich bitte an meinen Kollegen Jonas Weber.').replacement?.names).toEqual([
      'Jonas Weber',
    ]);
    expect(classifyReplyText('我不负责这个，请联系我的同事王芳。').replacement?.names).toEqual(['王芳']);
    const many = Array.from({ length: 8 }, (_, i) => `p${i}@initech.example`).join(', ');
    expect(classifyReplyText(`Pat is no longer with Initech. Write to ${many}.`).replacement?.addresses).toHaveLength(5);
    expect(classifyReplyText("I'm not the right person.").replacement).toBeNull();
    expect(classifyReplyText('Sure, write to me at pat@initech.example, Tuesday 2pm works for me.').replacement).toBeNull();
  });

  it('reads only the first 4,000 characters, in linear time', () => {
    const filler = 'Lorem ipsum dolor sit amet. '.repeat(200);
    expect(classifyReply(`${filler} Please unsubscribe me.`)).not.toBe('unsubscribe');
    const adversarial = ['a'.repeat(100_000), 'stop '.repeat(20_000), 'melde mich '.repeat(10_000), 'no longer '.repeat(10_000), '不在'.repeat(50_000)];
    for (const text of adversarial) {
      const t0 = performance.now();
      classifyReplyText(text);
      expect(performance.now() - t0, text.slice(0, 20)).toBeLessThan(1_000);
    }
  });
});

describe('autoReplySubject', () => {
  const cases: [string, string | null][] = [
    ['Automatic reply: Quick question', 'en'],
    ['Out of Office: Quick question', 'en'],
    ['Auto: Quick question', 'en'],
    ['Automatische Antwort: Quick question', 'de'],
    ['Abwesenheitsnotiz: Quick question', 'de'],
    ['Réponse automatique : Quick question', 'fr'],
    ['Respuesta automática: Quick question', 'es'],
    ['Risposta automatica: Quick question', 'it'],
    ['Resposta automática: Quick question', 'pt'],
    ['Automatisch antwoord: Quick question', 'nl'],
    ['Afwezig: Quick question', 'nl'],
    ['Autosvar: Quick question', null],
    ['Automatisk svar: Quick question', null],
    ['Automatiskt svar: Quick question', 'sv'],
    ['Fravær: Quick question', 'no'],
    ['Automaattinen vastaus: Quick question', 'fi'],
    ['Automatyczna odpowiedź: Quick question', 'pl'],
    ['自動応答: Quick question', 'ja'],
    ['【自動返信】Quick question', 'ja'],
    ['自动回复: Quick question', 'zh'],
    ['自動回覆: Quick question', 'zh'],
  ];
  it.each(cases)('%s', (subject, language) => {
    expect(autoReplySubject(subject)).toMatchObject({ label: 'out_of_office', language });
  });
  it('every rule language has at least one subject prefix', () => {
    const covered = new Set(cases.map(([s]) => autoReplySubject(s)?.language ?? 'shared'));
    for (const l of RULE_LANGUAGES.filter((x) => !['da', 'no', 'sv'].includes(x))) expect(covered.has(l), l).toBe(true);
    expect(autoReplySubject('Autosvar: Quick question')?.phrase).toBe('Autosvar');
  });
  it('a leaver subject, and subjects that are not auto-replies', () => {
    expect(autoReplySubject('No longer with Initech')).toMatchObject({ label: 'left_company' });
    for (const s of ['Re: Quick question', 'Re: Out of office plans', 'Afwezigheid van Pat', 'Automatically generated reports', 'AW: Angebot', 'Autumn offer'])
      expect(autoReplySubject(s), s).toBeNull();
  });
});

describe('isStopWord, sentimentOf, draftReply', () => {
  it('stop words in other languages, only when unambiguous', () => {
    for (const w of ['STOPP', 'ARRÊT', 'Baja', 'Abmelden', 'uitschrijven', 'Avregistrera', '退订', '配信停止', '  stop!! ', '🛑 STOP 🛑'])
      expect(isStopWord(w), w).toBe(true);
    for (const w of ['Stop by our booth', 'stopped', 'Ende gut, alles gut', null, '']) expect(isStopWord(w), String(w)).toBe(false);
  });
  it('wrong_person and left_company are neutral and have their own drafts', () => {
    expect(sentimentOf('wrong_person')).toBe('neutral');
    expect(sentimentOf('left_company')).toBe('neutral');
    expect(draftReply('wrong_person', { firstName: 'Pat', bookingLink: null })).toMatch(/^Hi Pat, .*right person/);
    expect(draftReply('left_company', { firstName: null, bookingLink: null })).toMatch(/^Hi there, thanks for letting me know/);
  });
});

describe('the rule table', () => {
  it('is well formed: unique ids, known languages, confidence in (0, 1], Unicode, stateless patterns', () => {
    const ids = new Set<string>();
    for (const r of REPLY_RULES) {
      expect(ids.has(r.id), r.id).toBe(false);
      ids.add(r.id);
      expect(r.language === null || (RULE_LANGUAGES as readonly string[]).includes(r.language), r.id).toBe(true);
      expect(r.pattern.flags, r.id).toContain('u');
      expect(r.pattern.flags, r.id).not.toMatch(/[gy]/);
      if (r.effect === 'negate') expect(r.confidence).toBe(0);
      else expect(r.confidence > 0 && r.confidence <= 1, r.id).toBe(true);
    }
  });
  it('each pattern runs in linear time on 100,000 characters', () => {
    const inputs = ['a '.repeat(50_000), 'stop '.repeat(20_000), "don't ".repeat(16_000), '1 '.repeat(50_000), '退'.repeat(100_000)];
    for (const r of REPLY_RULES) {
      const t0 = performance.now();
      for (const s of inputs) r.pattern.test(s);
      expect(performance.now() - t0, r.id).toBeLessThan(500);
    }
  });
});
