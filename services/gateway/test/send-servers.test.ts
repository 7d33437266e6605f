import { describeSendApi } from './support/send.api';

describeSendApi('servers');
