/**
 * The two ways a suite runs the platform: everything in-process ('embedded': PGlite, memory bus,
 * memory kv) or against the real PostgreSQL, RabbitMQ and Redis ('servers'). A suite that must
 * hold in both is written once and registered for each mode with describeEachMode.
 */

export type Mode = 'embedded' | 'servers';
export const MODES: readonly Mode[] = ['embedded', 'servers'];

/** Registers `body` once per mode, inside `describe('<title> (<mode>)')`. */
export function describeEachMode(title: string, body: (mode: Mode) => void): void {
  for (const mode of MODES) describe(`${title} (${mode})`, () => body(mode));
}
