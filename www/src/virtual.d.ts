// Modules the build makes (www/vite.config.ts, kvledgerAssets).
declare module "virtual:reason-docs" {
  /** Reason code → its meaning and the status it fails, from docs/accounting.md's table. */
  export const accounting: Record<string, { meaning: string; status?: string }>;
  /** Pricing code → its meaning, from docs/pricing.md's tables. */
  export const pricing: Record<string, { meaning: string; status?: string }>;
}
