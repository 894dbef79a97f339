import type { ChannelDriver, DeliveryCheck, DriverContext, OutboundAction } from './types.js';

export const CONFIRM_TIMEOUT_MS = 10_000;

/**
 * Asks the driver whether `action` (by its idempotency key) already went out. A driver without `confirm`, an
 * error, or no answer within the timeout all mean `unknown`: the provider cannot say.
 */
export async function confirmDelivery(
  driver: ChannelDriver,
  action: OutboundAction,
  timeoutMs = CONFIRM_TIMEOUT_MS,
  ctx?: DriverContext,
): Promise<DeliveryCheck> {
  if (!driver.confirm) return { status: 'unknown' };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DeliveryCheck>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'unknown' }), timeoutMs);
  });
  try {
    return await Promise.race([driver.confirm(action, ctx), timeout]);
  } catch {
    return { status: 'unknown' };
  } finally {
    clearTimeout(timer);
  }
}
