import { Writable } from 'node:stream';
import winston from 'winston';
import { runWithTrace } from '../trace/context';
import { createLogger } from './logger';

function capture(): { logger: winston.Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const logger = createLogger('test-svc', 'debug');
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
});
