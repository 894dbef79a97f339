// Pattern builders for the reply rules: Unicode-aware word boundaries, since `\b` is ASCII-only.
export const B = '(?<![\\p{L}\\p{N}])';
export const E = '(?![\\p{L}\\p{N}])';
/** A phrase delimited by Unicode word boundaries. */
export function w(src: string): RegExp {
  return new RegExp(`${B}(?:${src})${E}`, 'u');
}
/** A phrase in a script written without spaces (Japanese, Chinese). */
export function cjk(src: string): RegExp {
  return new RegExp(src, 'u');
}
/** The whole message (punctuation and emoji around it ignored). */
export function whole(src: string): RegExp {
  return new RegExp(`^[^\\p{L}\\p{N}]*(?:${src})[^\\p{L}\\p{N}]*$`, 'u');
}

/** `s` with every regular-expression metacharacter escaped, for a literal phrase inside a pattern. */
export function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
