import { describeOddInput } from './support/odd-input.api';

describeOddInput('embedded');
