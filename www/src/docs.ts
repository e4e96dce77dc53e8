// Reason codes in plain words, from the docs tables (read at build time by vite.config.ts),
// with links to the docs pages shipped beside the app (docs/*.html, anchored per code).
import { accounting, pricing } from "virtual:reason-docs";

interface Entry {
  meaning: string;
  status?: string;
}

const ACCOUNTING: Record<string, Entry> = accounting;
const PRICING: Record<string, Entry> = pricing;

export function accountingReason(code: string): Entry & { href: string } {
  return { ...(ACCOUNTING[code] ?? { meaning: "(not documented in docs/accounting.md)" }), href: `docs/accounting.html#${code}` };
}

export function pricingReason(code: string): Entry & { href: string } {
  return { ...(PRICING[code] ?? { meaning: "(not documented in docs/pricing.md)" }), href: `docs/pricing.html#${code}` };
}

/** Whether the docs list `code` (the test checks every code the app shows is documented). */
export const documented = (code: string) => code in ACCOUNTING || code in PRICING;
