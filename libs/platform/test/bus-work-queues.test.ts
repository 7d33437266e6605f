import { Exchange, type QueueDeclaration } from '@mailyard/contracts';
import { type TestVhost, createTestVhost, uniqueName } from '@mailyard/testkit/servers';
import { openBus } from '../src/bus';
import { envelope } from '../src/bus/envelope';
import type { Bus } from '../src/bus/types';
import { createLogger } from '../src/logger/logger';
import { waitFor } from './bus.contract';

const logger = createLogger('bus-work-queues-test', process.env.TEST_LOG_LEVEL ?? 'error');

/** A command published before its consumer ever started must wait in the declared queue. */
function describeWorkQueues(name: string, url: () => string | undefined): void {
  describe(`declared work queues (${name})`, () => {
    const declaration: QueueDeclaration = {
      queue: uniqueName('work'),
      bindings: [{ exchange: Exchange.commands, routingKey: 'wq.#' }],
    };
    let bus: Bus;
    afterEach(async () => {
      await bus?.close();
    });

    it('keeps messages published before the first consumer', async () => {
      bus = await openBus({ AMQP_URL: url() }, logger, { queues: [declaration] });
      const sent = [envelope('wq.test', { n: 1 }), envelope('wq.test', { n: 2 })];
      for (const e of sent) await bus.publish(Exchange.commands, 'wq.created', e);
      const got: string[] = [];
      await bus.consume({ ...declaration }, async (d) => {
        got.push(d.envelope.id);
      });
      await waitFor(() => got.length === 2, 'both messages consumed');
      expect(got.sort()).toEqual(sent.map((e) => e.id).sort());
    });
  });
}

let vhost: TestVhost;
beforeAll(() => {
  vhost = createTestVhost();
});
afterAll(async () => {
  await vhost?.drop();
});

describeWorkQueues('memory', () => undefined);
describeWorkQueues('amqp', () => vhost.url);
