export * from './api-keys';
export * from './cursor';
export * from './tenants';
export * from './templates';
export * from './sending-mailers';
