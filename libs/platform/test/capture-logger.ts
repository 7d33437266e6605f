/** A logger (winston, as createLogger's) whose JSON lines go to `onLine`: for tests that read what was logged. */
import { Writable } from 'node:stream';
import winston from 'winston';

export function captureLogger(onLine: (line: string) => void, level = 'debug'): winston.Logger {
  return winston.createLogger({
    level,
    format: winston.format.json(),
    transports: [
      new winston.transports.Stream({
        stream: new Writable({
          write(chunk, _enc, cb) {
            onLine(String(chunk));
            cb();
          },
        }),
      }),
    ],
  });
}
