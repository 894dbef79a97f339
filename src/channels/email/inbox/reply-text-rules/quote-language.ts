/** One language's quote-header words, as reply-text.ts reads them (tables in reply-text-rules/*.ts). */
export interface QuoteLanguage {
  /** BCP 47 tag. */
  lang: string;
  /** Outlook's header block ("From:/Sent:/To:/Subject:") as this language's Outlook (and Apple Mail, Gmail) writes it. */
  from: readonly string[];
  /** "Sent:" and "Date:". */
  sent: readonly string[];
  to: readonly string[];
  cc: readonly string[];
  subject: readonly string[];
  /** The words between the dashes of "-----Original Message-----" and "---------- Forwarded message ---------". */
  separators: readonly string[];
  /** Words an attribution line starts with ("On", "Am"); may be empty where the line starts with the date. */
  attributionStarts: readonly string[];
  /** The verb of "On … wrote:" ("wrote", "schrieb"), matched as a whole word. */
  attributionVerbs: readonly string[];
  /** Attribution lines as this language's clients write them (the test cuts each). */
  attributionExamples: readonly string[];
  /** A mobile client's footer as a whole line: "…" stands for any text ("Von meinem … gesendet"). */
  mobileFooters: readonly string[];
  /** How a confidentiality disclaimer starts (a line that starts so, after the new text, ends it). */
  disclaimers: readonly string[];
  /** A closing line ("Best regards,") after which only a short signature follows. */
  valedictions: readonly string[];
}
