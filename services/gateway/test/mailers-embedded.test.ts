import { describeMailersApi } from './support/mailers.api';

describeMailersApi('embedded');
