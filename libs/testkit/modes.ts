/**
 * The two ways a suite runs the platform: everything in-process ('embedded': PGlite, memory bus,
 * memory kv) or against the real PostgreSQL, RabbitMQ and Redis ('servers'). A suite that must
 * hold in both is written once inside `for (const mode of MODES) describe(...)`.
 */

export type Mode = 'embedded' | 'servers';
export const MODES: readonly Mode[] = ['embedded', 'servers'];
