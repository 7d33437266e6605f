/** SparkPost's event webhook: its wire format (wire.ts) and what each event becomes (mapping.ts). */
export * from './wire';
export * from './mapping';
