import { runProcess } from '@mailyard/platform';
import { start } from './index';

void runProcess({ name: 'gateway', services: { gateway: start }, servicePorts: (config) => [config.PORT] });
