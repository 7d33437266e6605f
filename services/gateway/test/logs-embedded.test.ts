import { describeLogsApi } from './support/logs.api';

describeLogsApi('embedded');
