import { unitHash } from '../lib/hash.js';

export interface Variant {
  key: string;
  weight: number;
  messageTmpl: string;
}

/**
 * The same lead always lands in the same arm of a sequence (hash of lead and sequence ids), in proportion to
 * the weights. A key already remembered on the lead wins while that arm still exists, so editing weights
 * never moves a lead that is half-way through its arm.
 */
export function pickVariant(variants: Variant[], leadId: string, sequenceId: string, remembered: string | null): Variant | null {
  const usable = variants.filter((v) => v && typeof v.key === 'string' && Number(v.weight) > 0);
  if (usable.length === 0) return variants[0] ?? null;
  if (remembered) {
    const kept = usable.find((v) => v.key === remembered);
    if (kept) return kept;
  }
  const total = usable.reduce((sum, v) => sum + Number(v.weight), 0);
  let point = unitHash('variant', sequenceId, leadId) * total;
  for (const v of usable) {
    point -= Number(v.weight);
    if (point < 0) return v;
  }
  return usable[usable.length - 1];
}
