import { describeLogsApi } from './support/logs.api';

describeLogsApi('servers');
