import { describeDomainsApi } from './support/domains.api';

describeDomainsApi('embedded');
