export * from './address';
export * from './base64';
export * from './control';
export * from './headers';
export * from './messages';
export * from './json-input';
export * from './webhook-headers';
export * from './credential-destination';
