import { describeTracking } from './support/tracking.suite';

describeTracking('embedded');
