import { describeSuppressionsApi } from './support/suppressions.api';

describeSuppressionsApi('servers');
