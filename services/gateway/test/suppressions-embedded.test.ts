import { describeSuppressionsApi } from './support/suppressions.api';

describeSuppressionsApi('embedded');
