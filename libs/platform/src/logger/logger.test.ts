import { Writable } from 'node:stream';
import winston from 'winston';
import { runWithTrace } from '../trace/context';
import { createLogger } from './logger';

function capture(level = 'debug'): { logger: winston.Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const logger = createLogger('test-svc', level);
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk, _enc, cb) {
          out.push(chunk.toString());
          cb();
        },
      }),
    }),
  );
  return { logger, lines: () => out.map((l) => JSON.parse(l)) };
}

describe('logger', () => {
  it('writes JSON with service, trace context and redacted secrets', () => {
    const { logger, lines } = capture();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    runWithTrace({ traceparent, requestId: 'req-1', tenantId: 'tenant_x' }, () => {
      logger.info('connected', { host: 'smtp.example', password: 'hunter2', config: { apiKey: 'k' } });
    });
    const [line] = lines();
    expect(line).toMatchObject({
      level: 'info',
      message: 'connected',
      service: 'test-svc',
      request_id: 'req-1',
      tenant_id: 'tenant_x',
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      traceparent,
      host: 'smtp.example',
      password: '[REDACTED]',
      config: { apiKey: '[REDACTED]' },
    });
    expect(JSON.stringify(lines())).not.toContain('hunter2');
  });

  it('does not format a call whose level is off, for the logger and its children', () => {
    const { logger, lines } = capture('warn');
    const formatted = jest.spyOn(logger.format, 'transform');
    const child = logger.child({ component: 'consumer' });
    logger.debug('skipped', { big: 'x' });
    child.info('skipped too');
    expect(formatted).not.toHaveBeenCalled();
    child.warn('kept', { password: 'hunter2' });
    logger.error('kept too');
    expect(formatted).toHaveBeenCalledTimes(2);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'kept',
        component: 'consumer',
        password: '[REDACTED]',
      }),
      expect.objectContaining({ level: 'error', message: 'kept too', service: 'test-svc' }),
    ]);
    logger.level = 'debug';
    logger.debug('now on');
    expect(lines().at(-1)).toMatchObject({ level: 'debug', message: 'now on' });
  });
});
