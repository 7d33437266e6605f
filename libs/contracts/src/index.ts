export * from './errors';
export * from './ids';
export * from './api/common';
export * from './api/templates';
export * from './api/admin';
export * from './bus/topics';
export * from './bus/envelope';
export * from './mailers/types';
