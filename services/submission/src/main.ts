import { runProcess } from '@mailyard/platform';
import { start, submissionSettings } from './index';

void runProcess({
  name: 'submission',
  services: { submission: start },
  settings: [submissionSettings],
  opsPort: 3009,
});
