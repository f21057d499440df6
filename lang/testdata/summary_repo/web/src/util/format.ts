// Money formatting helpers.
export interface Money {
  amount: number;
  currency: string;
}

export type Currency = "EUR" | "USD";

export const DEFAULT_CURRENCY: Currency = "EUR",
  FALLBACK_LOCALE = "en-US";

export function formatPrice(m: Money): string {
  const s = m.amount.toFixed(2);
  return m.currency === "EUR" ? `${s} €` : `$${s}`;
}

export const slugify = (s: string): string => {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, "-");
};

export enum Rounding {
  Up,
  Down,
}

export class PriceBook {
  private prices = new Map<string, number>();

  lookup(sku: string): number | undefined {
    return this.prices.get(sku);
  }
}

export { formatPrice as default };
export * from "./currency";
