export * from './graph-client';
export { type GraphWindow, inGraphWindow } from './graph-query';
export { searchByWindows, splitWindow } from './search-window';
