// Formatting of the header's context-usage indicator (PROTOCOL §5):
// "Context: 7.6% | Session: 28.5K tokens", or "Context: 15.2K tokens | ..."
// when the model's context window is unknown.

/** The numbers the indicator shows, as token_usage and get_state give them. */
export interface ContextUsage {
  /** Tokens of the last request's context. */
  used: number;
  /** The model's context window; null when unknown. */
  window: number | null;
  /** used / window in percent (0–100); null when the window is unknown. */
  percent: number | null;
  /** Every token the session has used so far. */
  sessionTotal: number;
}

/** ok below 50 %, warn from 50 to 80 % (both ends included), high above 80 %. */
export type ContextLevel = "ok" | "warn" | "high";

/**
 * A token count as written below 1,000, else with one decimal and K or M:
 * 999, 1.0K, 28.5K, 1.2M.
 */
export function formatTokens(n: number): string {
  const v = Math.max(0, Math.round(n));
  if (v < 1000) return String(v);
  const tenthsK = Math.round(v / 100); // tenths of a thousand
  if (tenthsK < 10000) return `${Math.floor(tenthsK / 10)}.${tenthsK % 10}K`;
  const tenthsM = Math.round(v / 100000); // tenths of a million
  return `${Math.floor(tenthsM / 10)}.${tenthsM % 10}M`;
}

/**
 * The percent to show, rounded to one decimal, or null when the window is
 * unknown. A percent missing from the event but computable from a known
 * window is computed.
 */
export function contextPercent(u: ContextUsage): number | null {
  let p = u.percent;
  if (p === null || !Number.isFinite(p)) {
    if (u.window === null || !(u.window > 0)) return null;
    p = (u.used / u.window) * 100;
  }
  return Math.round(p * 10) / 10;
}

/** The indicator's text. */
export function contextText(u: ContextUsage): string {
  const p = contextPercent(u);
  const ctx = p === null ? `${formatTokens(u.used)} tokens` : `${p.toFixed(1)}%`;
  return `Context: ${ctx} | Session: ${formatTokens(u.sessionTotal)} tokens`;
}

/**
 * The indicator's level, from the percent as shown (so "50.0%" is never ok);
 * ok when the window is unknown.
 */
export function contextLevel(u: ContextUsage): ContextLevel {
  const p = contextPercent(u);
  if (p === null || p < 50) return "ok";
  if (p <= 80) return "warn";
  return "high";
}
