import { describeTemplatesApi } from './support/templates.api';

describeTemplatesApi('embedded');
