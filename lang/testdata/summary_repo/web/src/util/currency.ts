export const RATES: Record<string, number> = { EUR: 1, USD: 1.08 };
