export * from './oauth/types';
export * from './api';
export * from './gmail';
export * from './graph';
