import { describeMailersApi } from './support/mailers.api';

describeMailersApi('servers');
