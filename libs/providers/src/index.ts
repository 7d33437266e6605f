export * from './oauth/types';
