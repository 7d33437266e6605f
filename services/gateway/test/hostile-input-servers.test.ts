import { describeHostileInput } from './support/hostile-input';

jest.setTimeout(240_000);

// The real servers, as production runs: PostgreSQL, RabbitMQ, Redis.
describeHostileInput('servers', 2500);
