import { parseWithFieldMessages } from '../validation/messages';
import { parseLogsQuery } from './logs';
import { DeliveriesQuerySchema } from './webhooks';

const parseDeliveries = (q: unknown) => parseWithFieldMessages(DeliveriesQuerySchema, q);

describe('list query parameters answer alike on every list route', () => {
  it.each([
    ['logs', parseLogsQuery],
    ['webhook deliveries', parseDeliveries],
  ])('%s: time bounds, pageSize and empty values', (_name, parse) => {
    expect(parse({ startDate: 'yesterday' })).toMatchObject({
      success: false,
      error: 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date',
    });
    expect(parse({ endDate: '2024-02-30' })).toMatchObject({
      success: false,
      error: 'endDate must be an RFC 3339 date-time or a YYYY-MM-DD date',
    });
    for (const pageSize of ['0', '51', '1.5', 'x'])
      expect(parse({ pageSize })).toMatchObject({
        success: false,
        error: 'pageSize must be an integer between 1 and 50',
      });
    const ok = parse({ pageSize: '', startDate: '2024-02-29', endDate: '' });
    expect(ok).toMatchObject({
      success: true,
      data: { pageSize: 20, startDate: { at: '2024-02-29T00:00:00.000Z', exclusive: false } },
    });
  });
});
