import { dependencyEndpoints, dependencyOutage } from './dependency-outage';

/** A socket error as node's net module raises it. */
function socketError(code: string, address?: string, port?: number): Error {
  const e = new Error(`connect ${code} ${address}:${port}`) as Error & Record<string, unknown>;
  e.code = code;
  e.syscall = 'connect';
  if (address !== undefined) e.address = address;
  if (port !== undefined) e.port = port;
  return e;
}

/** A server error as pg raises it (DatabaseError with the SQLSTATE in `code`). */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

const endpoints = dependencyEndpoints({
  database: 'postgres://mailyard@127.0.0.1:5999/mailyard',
  kv: 'redis://localhost',
  bus: 'amqp://guest:guest@rabbit.internal:5673/vhost',
});

describe('dependencyEndpoints', () => {
  it('reads host and port of each configured URL, with the default port of the scheme', () => {
    expect(endpoints).toEqual([
      { dependency: 'database', host: '127.0.0.1', port: 5999 },
      { dependency: 'kv', host: 'localhost', port: 6379 },
      { dependency: 'bus', host: 'rabbit.internal', port: 5673 },
    ]);
  });

  it('skips unset and unparsable URLs; an IPv6 host loses its brackets', () => {
    expect(dependencyEndpoints({ database: undefined, kv: 'not a url', bus: 'amqps://[::1]' })).toEqual([
      { dependency: 'bus', host: '::1', port: 5671 },
    ]);
  });
});

describe('dependencyOutage', () => {
  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['57P03', 'the database system is shutting down'],
    ['53300', 'sorry, too many clients already'],
    ['08006', 'connection failure'],
    ['08001', 'could not connect'],
  ])('PostgreSQL SQLSTATE %s (%s) is a database outage', (code, message) => {
    expect(dependencyOutage(pgError(code, message))).toBe('database');
  });

  it.each([
    ['23505', 'duplicate key value violates unique constraint'],
    ['42P01', 'relation "x" does not exist'],
    ['40001', 'could not serialize access'],
    ['57014', 'canceling statement due to statement timeout'],
  ])('PostgreSQL SQLSTATE %s is not an outage (a bug or a conflict)', (code, message) => {
    expect(dependencyOutage(pgError(code, message))).toBeNull();
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
  ])('the pg driver or pool saying "%s" is a database outage', (message) => {
    expect(dependencyOutage(new Error(message))).toBe('database');
  });

  it.each([
    "Stream isn't writeable and enableOfflineQueue options is false",
    'Connection is closed.',
    'Command timed out',
  ])('ioredis saying "%s" is a kv outage', (message) => {
    expect(dependencyOutage(new Error(message))).toBe('kv');
  });

  it('ioredis giving up on a command (MaxRetriesPerRequestError) is a kv outage', () => {
    const e = new Error('Reached the max retries per request limit (which is 1). Refer to ...');
    e.name = 'MaxRetriesPerRequestError';
    expect(dependencyOutage(e)).toBe('kv');
  });

  it('amqplib refusing an operation on a closed channel is a bus outage; other illegal operations are not', () => {
    const closed = Object.assign(new Error('Channel closed'), { name: 'IllegalOperationError' });
    const other = Object.assign(new Error('Channel closed'), { name: 'Error' });
    expect(dependencyOutage(closed)).toBe('bus');
    expect(dependencyOutage(other)).toBeNull();
  });

  it('a refused or reset socket to a configured dependency is its outage', () => {
    expect(dependencyOutage(socketError('ECONNREFUSED', '127.0.0.1', 5999), endpoints)).toBe('database');
    expect(dependencyOutage(socketError('ETIMEDOUT', '127.0.0.1', 5999), endpoints)).toBe('database');
    // localhost: whichever loopback address it resolved to.
    expect(dependencyOutage(socketError('ECONNREFUSED', '::1', 6379), endpoints)).toBe('kv');
    // A host name: matched by port (the resolved address is not known here).
    expect(dependencyOutage(socketError('ECONNRESET', '10.1.2.3', 5673), endpoints)).toBe('bus');
  });

  it('every address of a name refused at once (AggregateError) is matched by its attempts', () => {
    const agg = Object.assign(
      new AggregateError([
        socketError('ECONNREFUSED', '::1', 5999),
        socketError('ECONNREFUSED', '127.0.0.1', 5999),
      ]),
      { code: 'ECONNREFUSED' },
    );
    expect(dependencyOutage(agg, endpoints)).toBe('database');
  });

  it('a socket error to anything else (a user SMTP host, a webhook URL) is not an outage of ours', () => {
    expect(dependencyOutage(socketError('ECONNREFUSED', '127.0.0.1', 2525), endpoints)).toBeNull();
    expect(dependencyOutage(socketError('ECONNREFUSED', '192.0.2.1', 5999), endpoints)).toBeNull();
    expect(dependencyOutage(socketError('ECONNREFUSED', '127.0.0.1', 5999))).toBeNull();
    expect(dependencyOutage(socketError('ECONNRESET'), endpoints)).toBeNull();
  });

  it('plain bugs and non-errors are not outages', () => {
    expect(dependencyOutage(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeNull();
    expect(dependencyOutage(new Error('Connection refused by policy'))).toBeNull();
    expect(dependencyOutage(undefined)).toBeNull();
    expect(dependencyOutage('ECONNREFUSED')).toBeNull();
    expect(dependencyOutage({ code: 'ECONNREFUSED' }, endpoints)).toBeNull();
  });
});
